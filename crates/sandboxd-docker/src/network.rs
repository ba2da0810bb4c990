//! The Docker network that bridge sandboxes join instead of the engine's default bridge.
//!
//! On the default bridge, containers reach each other, so one tenant's sandbox could talk to
//! another's. This network turns inter-container traffic off and keeps the outbound NAT, and a
//! host firewall rule keyed to its bridge interface drops connections from the sandboxes to the
//! host itself (Docker's rules leave the host's own services open to its containers). DNS needs
//! no host port: the engine's resolver for user-defined networks answers at 127.0.0.11 inside
//! each sandbox's own network namespace. A second rule, on the host's own outgoing packets,
//! keeps the host's other users from connecting to the sandboxes, which would pass by the
//! port proxy's token.
//!
//! One network serves every sandboxd instance on the engine: its fixed bridge interface name
//! makes the engine refuse a second one, so two services starting together end up sharing it.

use crate::labels::LABEL_MANAGED;
use bollard::models::{NetworkCreateRequest, NetworkInspect};
use bollard::Docker;
use sandboxd_backend::BackendError;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The network's name on the engine.
pub const BRIDGE_NETWORK: &str = "sandboxd-bridge";
/// Its bridge interface on the host, which the firewall rule names (at most 15 characters).
pub const BRIDGE_INTERFACE: &str = "sbx-bridge";
const _: () = assert!(BRIDGE_INTERFACE.len() <= 15, "IFNAMSIZ");

/// The options that make the network what it is; any other value is refused or replaced.
const OPTIONS: [(&str, &str); 3] = [
    ("com.docker.network.bridge.name", BRIDGE_INTERFACE),
    ("com.docker.network.bridge.enable_icc", "false"),
    ("com.docker.network.bridge.enable_ip_masquerade", "true"),
];

/// Inspect-or-create rounds before giving up, when other services race on the same network.
const ATTEMPTS: usize = 3;
const IPTABLES_TIMEOUT: Duration = Duration::from_secs(10);

/// Of the host's processes, only root's (the service's, the engine's) open connections to the
/// sandboxes: another local user would reach a sandbox's servers without the port proxy's
/// token. This is the match and target of a rule in OUTPUT, which only locally generated
/// packets pass, each with its socket's owner; replies to the sandboxes' own connections are
/// not NEW. Egress networks use it too.
pub(crate) const OUTSIDERS_REFUSED: [&str; 11] = [
    "-m",
    "conntrack",
    "--ctstate",
    "NEW",
    "-m",
    "owner",
    "!",
    "--uid-owner",
    "0",
    "-j",
    "REJECT",
];

/// The host firewall rules (after the iptables verb), each put at the top of its chain.
fn host_rules() -> [Vec<&'static str>; 2] {
    // Anything from the sandboxes to the host that is not part of a connection the host
    // opened is dropped.
    let from_sandboxes = vec![
        "INPUT",
        "-i",
        BRIDGE_INTERFACE,
        "-m",
        "conntrack",
        "!",
        "--ctstate",
        "ESTABLISHED,RELATED",
        "-j",
        "DROP",
    ];
    let mut to_sandboxes = vec!["OUTPUT", "-o", BRIDGE_INTERFACE];
    to_sandboxes.extend(OUTSIDERS_REFUSED);
    [from_sandboxes, to_sandboxes]
}

#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    #[error("a Docker network named {BRIDGE_NETWORK} exists that sandboxd did not make ({reason}); remove or rename it (`docker network rm {BRIDGE_NETWORK}`) so that bridge sandboxes get an isolated network")]
    Foreign { reason: String },
    #[error("the Docker network {BRIDGE_NETWORK} is set up differently from what this sandboxd needs ({reason}) and containers are attached to it, so it cannot be replaced; end them (`docker network inspect {BRIDGE_NETWORK}`) and retry")]
    InUse { reason: String },
    #[error("cannot set up the Docker network {BRIDGE_NETWORK}: {0}")]
    Engine(#[from] bollard::errors::Error),
    #[error("cannot set up the Docker network {BRIDGE_NETWORK} after {ATTEMPTS} attempts (is another service replacing it?): {last}")]
    Unsettled { last: String },
}

impl From<NetworkError> for BackendError {
    fn from(e: NetworkError) -> BackendError {
        BackendError::Setup(e.to_string())
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum FirewallError {
    #[error("cannot run iptables: {0}")]
    Spawn(std::io::Error),
    #[error("`{command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
    #[error("`{command}` did not finish within {}s", IPTABLES_TIMEOUT.as_secs())]
    Timeout { command: String },
}

/// Sets up the bridge sandboxes' network on demand, one caller at a time.
#[derive(Default)]
pub(crate) struct BridgeNetwork {
    lock: tokio::sync::Mutex<()>,
    /// The firewall warning is logged once, not at every bridge sandbox.
    warned: AtomicBool,
}

impl BridgeNetwork {
    /// Makes sure the network and the host rules are in place. Run before each bridge sandbox:
    /// it costs an inspect and an `iptables -C` per rule, and it repairs a network pruned or a
    /// rule flushed while the service ran. A firewall that cannot be set is logged, not fatal.
    pub async fn ensure(&self, docker: &Docker) -> Result<(), NetworkError> {
        let _one_at_a_time = self.lock.lock().await;
        ensure_network(docker).await?;
        if let Err(e) = ensure_host_rules().await {
            if !self.warned.swap(true, Ordering::Relaxed) {
                let by_hand: Vec<String> = host_rules()
                    .iter()
                    .map(|rule| format!("iptables -I {}", rule.join(" ")))
                    .collect();
                tracing::warn!(
                    "bridge sandboxes may reach services listening on this host (at the gateway of {BRIDGE_INTERFACE} or any host address), and the host's other users the sandboxes: the firewall rules that stop them could not be applied ({e}); run sandboxd as root, or add them yourself: {}",
                    by_hand.join("; ")
                );
            }
        }
        Ok(())
    }
}

async fn ensure_network(docker: &Docker) -> Result<(), NetworkError> {
    let mut last = String::new();
    for _ in 0..ATTEMPTS {
        match docker.inspect_network(BRIDGE_NETWORK, None).await {
            Ok(network) => {
                let Some(reason) = mismatch(&network) else {
                    return Ok(());
                };
                replace(docker, &network, reason).await?;
            }
            Err(e) if status(&e) == Some(404) => {}
            Err(e) => return Err(e.into()),
        }
        match docker.create_network(create_request()).await {
            Ok(_) => return Ok(()),
            // Another service made it (or one like it) meanwhile: look at it again.
            Err(e) if matches!(status(&e), Some(403 | 409)) => last = e.to_string(),
            Err(e) => return Err(e.into()),
        }
    }
    Err(NetworkError::Unsettled { last })
}

/// Removes a network of ours that is set up otherwise (an older sandboxd's), if it is unused.
async fn replace(
    docker: &Docker,
    network: &NetworkInspect,
    reason: String,
) -> Result<(), NetworkError> {
    let ours = network
        .labels
        .as_ref()
        .and_then(|l| l.get(LABEL_MANAGED))
        .is_some_and(|v| v == "true");
    if !ours {
        return Err(NetworkError::Foreign { reason });
    }
    if network.containers.as_ref().is_some_and(|c| !c.is_empty()) {
        return Err(NetworkError::InUse { reason });
    }
    tracing::info!("replacing the Docker network {BRIDGE_NETWORK}: {reason}");
    let id = network.id.as_deref().unwrap_or(BRIDGE_NETWORK);
    match docker.remove_network(id).await {
        Ok(()) => Ok(()),
        Err(e) if status(&e) == Some(404) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn create_request() -> NetworkCreateRequest {
    NetworkCreateRequest {
        name: BRIDGE_NETWORK.to_string(),
        driver: Some("bridge".to_string()),
        internal: Some(false),
        labels: Some(HashMap::from([(
            LABEL_MANAGED.to_string(),
            "true".to_string(),
        )])),
        options: Some(
            OPTIONS
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Default::default()
    }
}

/// Why an existing network is not the one [`create_request`] makes, if it is not.
fn mismatch(network: &NetworkInspect) -> Option<String> {
    let driver = network.driver.as_deref().unwrap_or_default();
    if driver != "bridge" {
        return Some(format!("its driver is {driver:?}, not \"bridge\""));
    }
    if network.internal == Some(true) {
        return Some("it is internal, with no way out".to_string());
    }
    let options = network.options.clone().unwrap_or_default();
    OPTIONS.iter().find_map(|(key, want)| {
        let have = options.get(*key).map(String::as_str);
        // The engine's default for masquerading is on, so an absent option is as good.
        let fine = have == Some(want) || (have.is_none() && *want == "true");
        (!fine).then(|| match have {
            Some(have) => format!("option {key} is {have:?}, not {want:?}"),
            None => format!("option {key} is unset, not {want:?}"),
        })
    })
}

pub(crate) fn status(e: &bollard::errors::Error) -> Option<u16> {
    match e {
        bollard::errors::Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

/// Puts each of [`host_rules`] at the top of its chain unless it is there already.
async fn ensure_host_rules() -> Result<(), FirewallError> {
    for rule in host_rules() {
        if iptables("-C", &rule).await.is_err() {
            iptables("-I", &rule).await?;
        }
    }
    Ok(())
}

async fn iptables(verb: &str, rule: &[&str]) -> Result<(), FirewallError> {
    let mut args = vec![verb];
    args.extend_from_slice(rule);
    run_iptables(&args).await
}

/// Runs `iptables -w ARGS...`, bounded in time.
pub(crate) async fn run_iptables(args: &[&str]) -> Result<(), FirewallError> {
    let mut all = vec!["-w"];
    all.extend_from_slice(args);
    let command = format!("iptables {}", all.join(" "));
    let run = tokio::process::Command::new("iptables")
        .args(&all)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(IPTABLES_TIMEOUT, run)
        .await
        .map_err(|_| FirewallError::Timeout {
            command: command.clone(),
        })?
        .map_err(FirewallError::Spawn)?;
    if output.status.success() {
        return Ok(());
    }
    Err(FirewallError::Failed {
        command,
        stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn network(options: &[(&str, &str)]) -> NetworkInspect {
        NetworkInspect {
            driver: Some("bridge".to_string()),
            options: Some(
                options
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn the_network_made_is_the_network_accepted() {
        let request = create_request();
        let made = NetworkInspect {
            driver: request.driver,
            internal: request.internal,
            options: request.options,
            ..Default::default()
        };
        assert_eq!(mismatch(&made), None);
        let masquerade_by_default = network(&OPTIONS[..2]);
        assert_eq!(mismatch(&masquerade_by_default), None);
    }

    #[test]
    fn other_settings_are_named() {
        let icc_on = network(&[
            ("com.docker.network.bridge.name", BRIDGE_INTERFACE),
            ("com.docker.network.bridge.enable_icc", "true"),
        ]);
        let reason = mismatch(&icc_on).unwrap();
        assert!(reason.contains("enable_icc"), "{reason}");
        let other_interface = network(&[("com.docker.network.bridge.name", "br-x")]);
        assert!(mismatch(&other_interface).unwrap().contains("br-x"));
        let mut overlay = network(&OPTIONS);
        overlay.driver = Some("overlay".to_string());
        assert!(mismatch(&overlay).unwrap().contains("overlay"));
        let mut internal = network(&OPTIONS);
        internal.internal = Some(true);
        assert!(mismatch(&internal).is_some());
    }
}
