//! The state the proxy's connections share: the settings, the service's policy, the resolver
//! and each session's bound; a client admitted by its session; a connection opened, tunnelled
//! or refused.

use crate::counted;
use crate::limits;
use crate::policy::{ConnectionRecord, Door, Policy, Refusal, SessionRules};
use crate::resolve;
use crate::settings::Settings;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;

pub(crate) struct Shared {
    pub(crate) settings: Settings,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) resolver: resolve::Resolver,
    pub(crate) limits: limits::PerKey<String>,
}

impl Shared {
    /// The client's session, if it has one and room under its bound.
    pub(crate) async fn admit(&self, peer: SocketAddr) -> Option<Client> {
        let Some(session) = self.policy.session(peer.ip()).await else {
            tracing::debug!(%peer, "egress connection from no egress session; closed");
            return None;
        };
        let Some(permit) = self.limits.acquire(&session.session_id) else {
            let refusal = Refusal::TooManyConnections(self.limits.max());
            self.refused(&session, Door::Connect, "", 0, refusal);
            return None;
        };
        Some(Client {
            session,
            _permit: Arc::new(permit),
        })
    }
}

/// The session a client connection belongs to, holding its place under the session's bound.
#[derive(Clone)]
pub(crate) struct Client {
    pub(crate) session: SessionRules,
    _permit: Arc<limits::Permit<String>>,
}

impl Shared {
    /// Checks `host:port` against the session's rules, resolves it and connects to the very
    /// address checked. `host` may carry a trailing dot and any case.
    pub(crate) async fn open(
        &self,
        session: &SessionRules,
        host: &str,
        port: u16,
    ) -> Result<TcpStream, Refusal> {
        if host.parse::<IpAddr>().is_ok() || host.starts_with('[') {
            return Err(Refusal::RawAddress(host.to_string()));
        }
        let allowed = sandboxd_api::normalize_host(host)
            .filter(|name| sandboxd_api::egress_allows(&session.rules, name, port));
        let Some(name) = allowed else {
            return Err(Refusal::NotAllowed {
                host: host.to_string(),
                port,
            });
        };
        let addresses = self.resolver.resolve(&name).await?;
        let mut last = None;
        for address in addresses {
            let connect = TcpStream::connect(SocketAddr::new(address, port));
            match tokio::time::timeout(self.settings.connect_timeout, connect).await {
                Ok(Ok(stream)) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Ok(Err(e)) => {
                    last = Some(Refusal::Unreachable {
                        host: name.clone(),
                        why: e.to_string(),
                    })
                }
                Err(_) => last = Some(Refusal::Timeout(format!("{name}:{port}"))),
            }
        }
        Err(last.unwrap_or(Refusal::NotResolved {
            host: name,
            why: "no address".into(),
        }))
    }
}

impl Shared {
    /// Carries bytes both ways until either side closes (or the connection's time is up),
    /// then records the connection.
    pub(crate) async fn tunnel<C>(
        &self,
        client: C,
        upstream: TcpStream,
        mut record: ConnectionRecord,
    ) where
        C: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let started = std::time::Instant::now();
        let (mut client, mut upstream) = (
            counted::Counted::new(client),
            counted::Counted::new(upstream),
        );
        // However the tunnel ends (closed, reset, out of time), what passed is counted.
        let _ = tokio::time::timeout(
            self.settings.max_connection_time,
            tokio::io::copy_bidirectional(&mut client, &mut upstream),
        )
        .await;
        record.bytes_sent += client.read;
        record.bytes_received += upstream.read;
        record.duration += started.elapsed();
        self.policy.record(record);
    }

    pub(crate) fn refused(
        &self,
        session: &SessionRules,
        door: Door,
        host: &str,
        port: u16,
        refusal: Refusal,
    ) {
        self.policy.record(ConnectionRecord {
            session_id: session.session_id.clone(),
            door,
            host: host.to_string(),
            port,
            outcome: Err(refusal),
            bytes_sent: 0,
            bytes_received: 0,
            duration: Duration::ZERO,
        });
    }
}
