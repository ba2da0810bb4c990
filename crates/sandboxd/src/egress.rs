//! Starts the egress proxy when a runtime has `network_mode = "egress"`: on the gateway of the
//! Docker backend's egress network, with the core as its policy (which session an address
//! is, the rules in force, where the entries go).

use anyhow::{Context, Result};
use sandboxd_api::NetworkMode;
use sandboxd_core::{Core, EgressEvent};
use sandboxd_docker::egress::{EgressNetwork, DNS_PORT, HTTP_PORT, PROXY_PORT, TLS_PORT};
use sandboxd_docker::DockerBackend;
use sandboxd_egress::{ConnectionRecord, Egress, Policy, SessionRules, Settings};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

struct ServicePolicy {
    core: Core,
    network: Arc<EgressNetwork>,
}

#[async_trait::async_trait]
impl Policy for ServicePolicy {
    async fn session(&self, peer: IpAddr) -> Option<SessionRules> {
        let session_id = self.network.session_at(peer).await?;
        let rules = self.core.session_egress(&session_id)?;
        Some(SessionRules { session_id, rules })
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
                duration_ms: record.duration.as_millis() as u64,
            },
        );
    }
}

/// Sets up the network and serves the proxy's doors in the background, if any runtime needs
/// them.
pub async fn start(core: &Core, docker: &DockerBackend) -> Result<()> {
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
        .context("cannot set up the egress network")?;
    let gateway = IpAddr::V4(network.gateway());
    let servers = config.egress.name_servers();
    let policy = Arc::new(ServicePolicy {
        core: core.clone(),
        network: network.clone(),
    });
    let egress = Egress::new(Settings::new(servers), policy)
        .context("no name server for the egress proxy: set [egress] upstream_dns")?;
    let bind = |port: u16| {
        let address = SocketAddr::new(gateway, port);
        std::net::TcpListener::bind(address)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .and_then(tokio::net::TcpListener::from_std)
            .with_context(|| format!("cannot listen on {address} for the egress proxy"))
    };
    let (proxy, http, tls) = (bind(PROXY_PORT)?, bind(HTTP_PORT)?, bind(TLS_PORT)?);
    let dns = tokio::net::UdpSocket::bind(SocketAddr::new(gateway, DNS_PORT))
        .await
        .with_context(|| format!("cannot listen on {gateway}:{DNS_PORT} for the egress DNS"))?;
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
