//! Starts the egress proxy when a runtime has `network_mode = "egress"`: on the gateway of the
//! Docker backend's egress network, with the core as its policy (which session an address
//! is, the rules in force, where the entries go).

use super::AssembleError;
use sandboxd_api::NetworkMode;
use sandboxd_config::{Config, PlaceholderKey};
use sandboxd_core::{Core, EgressEvent};
use sandboxd_docker::egress::SecretsSetup;
use sandboxd_docker::egress::{EgressNetwork, DNS_PORT, HTTP_PORT, PROXY_PORT, TLS_PORT};
use sandboxd_docker::DockerBackend;
use sandboxd_egress::{
    ConnectionRecord, Egress, Interception, Policy, SecretRecord, SessionRules, SessionSecret,
    Settings,
};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;

/// The directory of the service's state holding the CA, the placeholder key and the bundle
/// sandboxes with secrets trust.
const SECRETS_DIR: &str = "egress-ca";
const PLACEHOLDER_KEY_FILE: &str = "placeholder-key";
const SANDBOX_BUNDLE_FILE: &str = "sandbox-bundle.pem";

struct ServicePolicy {
    core: Core,
    network: Arc<EgressNetwork>,
    placeholders: Option<PlaceholderKey>,
}

impl ServicePolicy {
    /// The secrets of a session's runtime, with the session's placeholders.
    fn secrets(&self, session_id: &str) -> Arc<[SessionSecret]> {
        let (Some(key), Some(runtime)) =
            (&self.placeholders, self.core.session_runtime(session_id))
        else {
            return Arc::new([]);
        };
        self.core
            .config()
            .secrets
            .for_runtime(&runtime)
            .iter()
            .map(|secret| SessionSecret {
                secret: secret.clone(),
                placeholder: key.placeholder(session_id, &secret.name),
            })
            .collect()
    }
}

#[async_trait::async_trait]
impl Policy for ServicePolicy {
    async fn session(&self, peer: IpAddr) -> Option<SessionRules> {
        let session_id = self.network.session_at(peer).await?;
        let rules = self.core.session_egress(&session_id)?;
        let secrets = self.secrets(&session_id);
        Some(SessionRules {
            session_id,
            rules,
            secrets,
        })
    }

    fn record_secret(&self, record: SecretRecord) {
        let (door, refusal) = match &record.refusal {
            None => ("secret", None),
            Some(refusal) => ("secret_refused", Some((true, refusal.to_string()))),
        };
        self.core.record_egress(
            &record.session_id,
            EgressEvent {
                door,
                host: &record.host,
                port: record.port,
                refusal,
                bytes: 0,
                duration_ms: 0,
                secret: Some(&record.secret),
            },
        );
    }

    fn record(&self, record: ConnectionRecord) {
        let refusal = record
            .outcome
            .as_ref()
            .err()
            .map(|refusal| (refusal.by_policy(), refusal.to_string()));
        self.core.record_egress(
            &record.session_id,
            EgressEvent {
                door: record.door.as_str(),
                host: &record.host,
                port: record.port,
                refusal,
                bytes: record.bytes_sent + record.bytes_received,
                duration_ms: u64::try_from(record.duration.as_millis()).unwrap_or(u64::MAX),
                secret: None,
            },
        );
    }
}

/// Sets up the network and serves the proxy's doors in the background, if any runtime needs
/// them.
pub async fn start(
    core: &Core,
    docker: &DockerBackend,
    state_dir: &Path,
    ca: Option<Interception>,
) -> Result<(), AssembleError> {
    let config = core.config();
    if !config
        .runtimes
        .values()
        .any(|r| r.limits.network_mode == NetworkMode::Egress)
    {
        return Ok(());
    }
    let network = docker
        .egress_network()
        .await
        .map_err(AssembleError::EgressNetwork)?;
    let gateway = IpAddr::V4(network.gateway());
    let servers = config.egress.name_servers();
    let mut settings = Settings::new(servers);
    settings.max_lookups_per_sandbox = config.policy.max_dns_lookups_per_sandbox as usize;
    settings.max_lookups = config.policy.max_dns_lookups as usize;
    let mut placeholders = None;
    if let Some(ca) = ca {
        let (interception, key) = start_secrets(core, docker, &state_dir.join(SECRETS_DIR), ca)?;
        settings.interception = Some(Arc::new(interception));
        placeholders = Some(key);
    }
    let policy = Arc::new(ServicePolicy {
        core: core.clone(),
        network: network.clone(),
        placeholders,
    });
    let egress = Egress::new(settings, policy).map_err(AssembleError::EgressNameServer)?;
    let bind = |port: u16| {
        let address = SocketAddr::new(gateway, port);
        std::net::TcpListener::bind(address)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .and_then(tokio::net::TcpListener::from_std)
            .map_err(|source| AssembleError::Listen {
                address: address.to_string(),
                purpose: " for the egress proxy",
                source,
            })
    };
    let (proxy, http, tls) = (bind(PROXY_PORT)?, bind(HTTP_PORT)?, bind(TLS_PORT)?);
    let dns = tokio::net::UdpSocket::bind(SocketAddr::new(gateway, DNS_PORT))
        .await
        .map_err(|source| AssembleError::Listen {
            address: format!("{gateway}:{DNS_PORT}"),
            purpose: " for the egress DNS",
            source,
        })?;
    // The doors serve until the service stops.
    tokio::spawn({
        let egress = egress.clone();
        async move { egress.serve_proxy(proxy).await }
    });
    tokio::spawn({
        let egress = egress.clone();
        async move { egress.serve_http(http).await }
    });
    tokio::spawn({
        let egress = egress.clone();
        async move { egress.serve_tls(tls).await }
    });
    tokio::spawn(async move { egress.serve_dns(dns).await });
    eprintln!(
        "sandboxd: egress proxy on {gateway}:{PROXY_PORT} (network {})",
        network.names().network
    );
    Ok(())
}

/// With secrets in use, the egress CA (made at the first start, kept after), which recipe
/// builds then trust too: before the core takes the config.
pub fn load_ca(
    config: &mut Config,
    state_dir: &Path,
) -> Result<Option<Interception>, AssembleError> {
    if !config.secrets.any_in_use() {
        return Ok(None);
    }
    let dir = state_dir.join(SECRETS_DIR);
    let interception = Interception::load_or_create(&dir, &config.egress.upstream_ca_pem)
        .map_err(AssembleError::EgressCa)?;
    config.trust_in_builds(interception.ca_pem().as_bytes());
    Ok(Some(interception))
}

/// The placeholder key and the bundle that sandboxes with secrets trust; gives the Docker
/// backend what those sandboxes get.
fn start_secrets(
    core: &Core,
    docker: &DockerBackend,
    dir: &Path,
    interception: Interception,
) -> Result<(Interception, PlaceholderKey), AssembleError> {
    let config = core.config();
    let key = placeholder_key(&dir.join(PLACEHOLDER_KEY_FILE))?;
    let bundle = dir.join(SANDBOX_BUNDLE_FILE);
    // Written anew at each start (the host's roots may have changed); certificates only.
    let written = std::fs::write(&bundle, interception.sandbox_bundle()).and_then(|()| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bundle, std::fs::Permissions::from_mode(0o644))
    });
    written.map_err(|source| AssembleError::Write {
        path: bundle.clone(),
        source,
    })?;
    let (env_key, env_core) = (key.clone(), core.clone());
    docker.set_egress_secrets(SecretsSetup {
        ca_bundle: bundle,
        environment: Box::new(move |session_id, runtime| {
            env_key.environment(env_core.config().secrets.for_runtime(runtime), session_id)
        }),
    });
    let names: Vec<&str> = config.secrets.names().collect();
    eprintln!(
        "sandboxd: egress secrets {} added by the proxy; its CA is {}",
        names.join(", "),
        dir.join("ca.pem").display()
    );
    Ok((interception, key))
}

/// The key placeholders are made with: 32 random bytes, made once, readable by the service
/// only.
fn placeholder_key(path: &Path) -> Result<PlaceholderKey, AssembleError> {
    if let Ok(bytes) = std::fs::read(path) {
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| AssembleError::PlaceholderKey {
                path: path.to_path_buf(),
            })?;
        return Ok(PlaceholderKey::new(bytes));
    }
    let bytes: [u8; 32] = rand::random();
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| file.write_all(&bytes).and_then(|()| file.sync_all()))
        .map_err(|source| AssembleError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(PlaceholderKey::new(bytes))
}
