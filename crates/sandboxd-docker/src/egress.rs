//! The network of `egress` sandboxes: their only way out is the service's egress proxy.
//!
//! Each service instance has its own bridge network (`sandboxd-egress-<instance>`, host
//! interface `sbxe-<instance>`) without masquerading and with inter-container traffic off, and
//! four sets of host firewall rules keyed to its interface, each in a chain of its own named
//! after it (so they are found, replaced and removed without touching any other rule):
//! - `nat PREROUTING`: TCP 80 and 443 and UDP 53, to any address, go to the proxy's doors on
//!   the network's gateway, so a program that ignores `HTTP_PROXY` is still routed by name;
//! - `filter INPUT`: of the host, only those doors are reachable;
//! - `filter DOCKER-USER`: nothing is forwarded anywhere else;
//! - `filter OUTPUT`: of the host's processes, only root's open connections to the sandboxes
//!   (another local user would reach their servers without the port proxy's token).
//!
//! Sandboxes get `HTTP_PROXY`/`HTTPS_PROXY` pointing at the gateway, and a resolv.conf naming
//! it, so they resolve through the proxy's DNS (the engine's own resolver is not used).

use crate::labels::LABEL_MANAGED;
use crate::network::{run_iptables, status, FirewallError, OUTSIDERS_REFUSED};
use bollard::models::{NetworkCreateRequest, NetworkInspect};
use bollard::Docker;
use sandboxd_backend::BackendError;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The proxy's doors on the gateway address.
pub const PROXY_PORT: u16 = 3128;
pub const HTTP_PORT: u16 = 3180;
pub const TLS_PORT: u16 = 3443;
pub const DNS_PORT: u16 = 3053;
/// The label a network of ours carries with its instance, so cleanup finds only ours.
pub const LABEL_EGRESS: &str = "org.sandboxd.egress";
/// How often an unknown sandbox address may make the table be read again from the engine.
const REFRESH_AT_MOST_EVERY: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
pub enum EgressNetworkError {
    #[error("a Docker network named {0} exists that sandboxd did not make; remove it (`docker network rm {0}`) so that egress sandboxes get their own")]
    Foreign(String),
    #[error("the Docker network {0} has no IPv4 gateway, which the egress proxy listens on")]
    NoGateway(String),
    #[error("cannot set up the Docker network {name}: {source}")]
    Engine {
        name: String,
        source: bollard::errors::Error,
    },
    #[error("egress sandboxes need the host firewall, which could not be set ({0}); run sandboxd as root (or with CAP_NET_ADMIN) with iptables installed")]
    Firewall(String),
    #[error("cannot write the egress sandboxes' resolv.conf at {path}: {source}")]
    ResolvConf {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl From<EgressNetworkError> for BackendError {
    fn from(e: EgressNetworkError) -> BackendError {
        BackendError::Setup(e.to_string())
    }
}

/// Where a sandbox with secrets finds the CA bundle it trusts (the host's roots and the
/// service's CA), mounted read-only.
pub const CA_BUNDLE_IN_SANDBOX: &str = "/etc/sandboxd/ca-bundle.pem";
/// The variables that point the usual TLS stacks (OpenSSL, curl, Python's requests, Node,
/// pip) at that bundle.
const CA_BUNDLE_VARIABLES: &[&str] = &[
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "PIP_CERT",
];

/// A session's `ENV=placeholder` lines, by session id and runtime.
pub type SecretsEnvironment = Box<dyn Fn(&str, &str) -> Vec<String> + Send + Sync>;

/// What egress sandboxes with secrets get beyond the proxy: their placeholders, and the CA
/// bundle that makes the proxy's certificates for the secrets' hosts trusted.
pub struct SecretsSetup {
    /// The bundle on the host (certificates only, never a key).
    pub ca_bundle: PathBuf,
    /// A session's `ENV=placeholder` lines, by session id and runtime; empty for a runtime
    /// without secrets.
    pub environment: SecretsEnvironment,
}

impl SecretsSetup {
    /// The environment and binds of one sandbox: nothing for a runtime without secrets.
    pub(crate) fn for_sandbox(
        &self,
        session_id: &str,
        runtime: &str,
    ) -> (Vec<String>, Vec<String>) {
        let mut env = (self.environment)(session_id, runtime);
        if env.is_empty() {
            return (env, Vec::new());
        }
        env.extend(
            CA_BUNDLE_VARIABLES
                .iter()
                .map(|name| format!("{name}={CA_BUNDLE_IN_SANDBOX}")),
        );
        let bind = format!("{}:{CA_BUNDLE_IN_SANDBOX}:ro", self.ca_bundle.display());
        (env, vec![bind])
    }
}

/// The names this instance's network and rules go by.
#[derive(Debug, Clone)]
pub struct EgressNames {
    pub network: String,
    pub interface: String,
    /// The chain of each table (filter and nat) holding this network's rules.
    pub chain: String,
}

impl EgressNames {
    pub fn for_instance(instance_id: &str) -> EgressNames {
        // A hash, not a prefix: instance ids made alike (a host name, a test's pid) must not
        // share a network. FNV-1a, 32 bits shown as 8 hex digits.
        let hash = instance_id.bytes().fold(0x811c_9dc5_u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        let short = format!("{hash:08x}");
        EgressNames {
            network: format!("sandboxd-egress-{short}"),
            interface: format!("sbxe-{short}"),
            chain: format!("SBXE-{short}"),
        }
    }
}

/// The network, set up, and the sandboxes on it by address.
pub struct EgressNetwork {
    docker: Docker,
    names: EgressNames,
    gateway: Ipv4Addr,
    resolv_conf: PathBuf,
    sessions: Mutex<AddressTable>,
}

#[derive(Default)]
struct AddressTable {
    by_address: HashMap<Ipv4Addr, String>,
    read_at: Option<Instant>,
}

impl EgressNetwork {
    /// Makes (or finds) the network and puts its firewall rules in place, replacing any this
    /// instance left before. `state_dir` holds the sandboxes' resolv.conf.
    pub async fn ensure(
        docker: &Docker,
        instance_id: &str,
        state_dir: &Path,
    ) -> Result<EgressNetwork, EgressNetworkError> {
        let names = EgressNames::for_instance(instance_id);
        let network = ensure_network(docker, &names, instance_id).await?;
        let gateway = network
            .ipam
            .as_ref()
            .and_then(|ipam| ipam.config.as_ref())
            .into_iter()
            .flatten()
            .find_map(|c| c.gateway.as_deref()?.parse::<Ipv4Addr>().ok())
            .ok_or_else(|| EgressNetworkError::NoGateway(names.network.clone()))?;
        apply_rules(&names, gateway)
            .await
            .map_err(|e| EgressNetworkError::Firewall(e.to_string()))?;
        let resolv_conf = state_dir.join(format!("{}-resolv.conf", names.network));
        write_resolv_conf(&resolv_conf, gateway)?;
        Ok(EgressNetwork {
            docker: docker.clone(),
            names,
            gateway,
            resolv_conf,
            sessions: Mutex::default(),
        })
    }

    pub fn names(&self) -> &EgressNames {
        &self.names
    }

    /// The address the proxy listens on, which the sandboxes reach.
    pub fn gateway(&self) -> Ipv4Addr {
        self.gateway
    }

    /// The environment an egress sandbox starts with: the proxy for programs that take it.
    pub fn environment(&self) -> Vec<String> {
        let proxy = format!("http://{}:{PROXY_PORT}", self.gateway);
        let mut env = Vec::new();
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
            env.push(format!("{name}={proxy}"));
        }
        for name in ["NO_PROXY", "no_proxy"] {
            env.push(format!("{name}=localhost,127.0.0.1,::1"));
        }
        env
    }

    /// The bind mount giving a sandbox the proxy's name server.
    pub fn resolv_conf_bind(&self) -> String {
        format!("{}:/etc/resolv.conf:ro", self.resolv_conf.display())
    }

    /// Forgets which session has which address, so the next lookup reads the engine's table
    /// again: called whenever a sandbox joins or leaves the network, because the engine hands
    /// a freed address to the next sandbox, whose connections must never pass as the last
    /// one's.
    pub(crate) fn forget_addresses(&self) {
        let mut table = self.sessions.lock().expect("egress address table");
        table.by_address.clear();
        table.read_at = None;
    }

    /// The session whose sandbox has this address on the network. An address not known yet
    /// (a sandbox just started) has the table read again from the engine, at most every
    /// 200 ms.
    pub async fn session_at(&self, address: IpAddr) -> Option<String> {
        let IpAddr::V4(address) = address else {
            return None;
        };
        {
            let table = self.sessions.lock().expect("egress address table");
            if let Some(session) = table.by_address.get(&address) {
                return Some(session.clone());
            }
            if table
                .read_at
                .is_some_and(|at| at.elapsed() < REFRESH_AT_MOST_EVERY)
            {
                return None;
            }
        }
        let network = self
            .docker
            .inspect_network(&self.names.network, None)
            .await
            .ok()?;
        let by_address: HashMap<Ipv4Addr, String> = network
            .containers
            .unwrap_or_default()
            .into_values()
            .filter_map(|endpoint| {
                let session = endpoint.name?.strip_prefix("sandboxd-")?.to_string();
                let address = endpoint.ipv4_address?;
                let address = address.split('/').next()?.parse().ok()?;
                Some((address, session))
            })
            .collect();
        let mut table = self.sessions.lock().expect("egress address table");
        table.read_at = Some(Instant::now());
        table.by_address = by_address;
        table.by_address.get(&address).cloned()
    }

    /// Removes this network's firewall rules and the network itself (which must have no
    /// sandboxes left): for tests and for an operator's cleanup.
    pub async fn remove(&self) -> Result<(), EgressNetworkError> {
        remove_rules(&self.names).await;
        let _ = std::fs::remove_file(&self.resolv_conf);
        match self.docker.remove_network(&self.names.network).await {
            Ok(()) => Ok(()),
            Err(e) if status(&e) == Some(404) => Ok(()),
            Err(source) => Err(EgressNetworkError::Engine {
                name: self.names.network.clone(),
                source,
            }),
        }
    }
}

async fn ensure_network(
    docker: &Docker,
    names: &EgressNames,
    instance_id: &str,
) -> Result<NetworkInspect, EgressNetworkError> {
    let engine = |source| EgressNetworkError::Engine {
        name: names.network.clone(),
        source,
    };
    match docker.inspect_network(&names.network, None).await {
        Ok(network) => {
            let ours = network
                .labels
                .as_ref()
                .and_then(|l| l.get(LABEL_EGRESS))
                .is_some_and(|v| v == instance_id);
            return if ours {
                Ok(network)
            } else {
                Err(EgressNetworkError::Foreign(names.network.clone()))
            };
        }
        Err(e) if status(&e) == Some(404) => {}
        Err(e) => return Err(engine(e)),
    }
    let request = NetworkCreateRequest {
        name: names.network.clone(),
        driver: Some("bridge".to_string()),
        // Not `internal`: that would leave the sandboxes without a route to the gateway for
        // addresses elsewhere, and redirection needs their packets to reach the bridge.
        internal: Some(false),
        labels: Some(HashMap::from([
            (LABEL_MANAGED.to_string(), "true".to_string()),
            (LABEL_EGRESS.to_string(), instance_id.to_string()),
        ])),
        options: Some(HashMap::from([
            (
                "com.docker.network.bridge.name".to_string(),
                names.interface.clone(),
            ),
            (
                "com.docker.network.bridge.enable_icc".to_string(),
                "false".to_string(),
            ),
            (
                "com.docker.network.bridge.enable_ip_masquerade".to_string(),
                "false".to_string(),
            ),
        ])),
        ..Default::default()
    };
    docker.create_network(request).await.map_err(engine)?;
    docker
        .inspect_network(&names.network, None)
        .await
        .map_err(engine)
}

/// One chain of ours: its table, the built-in chain that jumps to it for the network's
/// interface (as the packets' way in, `-i`, or out, `-o`), its name, and its rules.
struct Chain {
    table: &'static str,
    parent: &'static str,
    interface_match: &'static str,
    name: String,
    rules: Vec<Vec<String>>,
}

fn chains(names: &EgressNames, gateway: Ipv4Addr) -> [Chain; 4] {
    let gw = gateway.to_string();
    let rule = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    let redirect = |protocol: &str, from: &str, to: u16| {
        rule(&[
            "-p",
            protocol,
            "--dport",
            from,
            "-j",
            "DNAT",
            "--to-destination",
            &format!("{gw}:{to}"),
        ])
    };
    let accept = |protocol: &str, port: u16| {
        rule(&[
            "-d",
            &gw,
            "-p",
            protocol,
            "--dport",
            &port.to_string(),
            "-j",
            "ACCEPT",
        ])
    };
    [
        Chain {
            table: "nat",
            parent: "PREROUTING",
            interface_match: "-i",
            name: names.chain.clone(),
            rules: vec![
                redirect("tcp", "80", HTTP_PORT),
                redirect("tcp", "443", TLS_PORT),
                redirect("udp", "53", DNS_PORT),
            ],
        },
        Chain {
            table: "filter",
            parent: "INPUT",
            interface_match: "-i",
            name: format!("{}-IN", names.chain),
            rules: vec![
                accept("tcp", PROXY_PORT),
                accept("tcp", HTTP_PORT),
                accept("tcp", TLS_PORT),
                accept("udp", DNS_PORT),
                rule(&[
                    "-m",
                    "conntrack",
                    "--ctstate",
                    "ESTABLISHED,RELATED",
                    "-j",
                    "ACCEPT",
                ]),
                rule(&["-j", "DROP"]),
            ],
        },
        Chain {
            table: "filter",
            parent: "DOCKER-USER",
            interface_match: "-i",
            name: format!("{}-FWD", names.chain),
            rules: vec![rule(&["-j", "DROP"])],
        },
        Chain {
            table: "filter",
            parent: "OUTPUT",
            interface_match: "-o",
            name: format!("{}-OUT", names.chain),
            rules: vec![rule(&OUTSIDERS_REFUSED)],
        },
    ]
}

/// Fills each chain afresh and makes sure its jump is at the top of its built-in chain.
async fn apply_rules(names: &EgressNames, gateway: Ipv4Addr) -> Result<(), FirewallError> {
    for chain in chains(names, gateway) {
        let table = chain.table;
        // Made if missing (an error here means it exists), then emptied.
        let _ = run_iptables(&["-t", table, "-N", &chain.name]).await;
        run_iptables(&["-t", table, "-F", &chain.name]).await?;
        for rule in &chain.rules {
            let mut args = vec!["-t", table, "-A", &chain.name];
            args.extend(rule.iter().map(String::as_str));
            run_iptables(&args).await?;
        }
        let jump = [
            chain.interface_match,
            names.interface.as_str(),
            "-j",
            chain.name.as_str(),
        ];
        let mut check = vec!["-t", table, "-C", chain.parent];
        check.extend(jump);
        if run_iptables(&check).await.is_err() {
            let mut insert = vec!["-t", table, "-I", chain.parent, "1"];
            insert.extend(jump);
            run_iptables(&insert).await?;
        }
    }
    Ok(())
}

/// The iptables arguments that remove this network's rules: each jump (run until it fails,
/// once per copy), then each chain's flush and removal. Cleanup of tests runs them too.
pub fn removal_commands(names: &EgressNames) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    for chain in chains(names, Ipv4Addr::UNSPECIFIED) {
        let args = |verb: &str, rest: &[&str]| {
            let mut all = vec!["-t", chain.table, verb];
            all.extend_from_slice(rest);
            all.iter().map(|a| a.to_string()).collect::<Vec<_>>()
        };
        commands.push(args(
            "-D",
            &[
                chain.parent,
                chain.interface_match,
                &names.interface,
                "-j",
                &chain.name,
            ],
        ));
        commands.push(args("-F", &[&chain.name]));
        commands.push(args("-X", &[&chain.name]));
    }
    commands
}

async fn remove_rules(names: &EgressNames) {
    for command in removal_commands(names) {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        // A jump may have been added twice; a few rounds at most.
        let rounds = if args[2] == "-D" { 4 } else { 1 };
        for _ in 0..rounds {
            if run_iptables(&args).await.is_err() {
                break;
            }
        }
    }
}

fn write_resolv_conf(path: &Path, gateway: Ipv4Addr) -> Result<(), EgressNetworkError> {
    let text = format!(
        "# the sandboxd egress proxy\nnameserver {gateway}\noptions ndots:0 attempts:2 timeout:2\n"
    );
    // Readable by the sandbox user: the engine mounts it as it is.
    std::fs::write(path, text)
        .and_then(|()| {
            std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        })
        .map_err(|source| EgressNetworkError::ResolvConf {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sandboxes_with_secrets_get_placeholders_and_the_bundle() {
        let setup = SecretsSetup {
            ca_bundle: PathBuf::from("/state/egress-ca/sandbox-bundle.pem"),
            environment: Box::new(|session, runtime| match runtime {
                "agent" => vec![format!("API_KEY=placeholder-of-{session}")],
                _ => vec![],
            }),
        };
        let (env, binds) = setup.for_sandbox("s1", "agent");
        assert_eq!(env[0], "API_KEY=placeholder-of-s1");
        assert!(env.contains(&format!("SSL_CERT_FILE={CA_BUNDLE_IN_SANDBOX}")));
        assert_eq!(
            binds,
            [format!(
                "/state/egress-ca/sandbox-bundle.pem:{CA_BUNDLE_IN_SANDBOX}:ro"
            )]
        );
        assert_eq!(setup.for_sandbox("s1", "other"), (vec![], vec![]));
    }

    #[test]
    fn names_fit_the_kernel_and_iptables() {
        let names = EgressNames::for_instance("0123456789abcdef-extra");
        assert!(names.network.starts_with("sandboxd-egress-"));
        assert_ne!(
            EgressNames::for_instance("test-1-a").network,
            EgressNames::for_instance("test-1-b").network
        );
        assert!(names.interface.len() <= 15, "IFNAMSIZ");
        for chain in chains(&names, Ipv4Addr::new(172, 30, 0, 1)) {
            assert!(chain.name.len() <= 28, "{}", chain.name);
        }
    }

    #[test]
    fn only_the_proxys_doors_are_open() {
        let names = EgressNames::for_instance("abc");
        let [nat, input, forward, output] = chains(&names, Ipv4Addr::new(172, 30, 0, 1));
        let nat: Vec<String> = nat.rules.iter().map(|r| r.join(" ")).collect();
        assert_eq!(
            nat[0],
            "-p tcp --dport 80 -j DNAT --to-destination 172.30.0.1:3180"
        );
        assert_eq!(
            nat[1],
            "-p tcp --dport 443 -j DNAT --to-destination 172.30.0.1:3443"
        );
        assert_eq!(input.rules.last().unwrap().join(" "), "-j DROP");
        assert_eq!(
            forward.rules,
            vec![vec!["-j".to_string(), "DROP".to_string()]]
        );
        // Of the host's own packets towards the sandboxes, only the new connections of
        // processes other than root's are refused.
        assert_eq!((output.parent, output.interface_match), ("OUTPUT", "-o"));
        assert_eq!(
            output.rules[0].join(" "),
            "-m conntrack --ctstate NEW -m owner ! --uid-owner 0 -j REJECT"
        );
    }
}
