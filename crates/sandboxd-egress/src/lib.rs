//! The egress proxy: the only way out of an `egress` sandbox.
//!
//! The service runs it on the host, on the address its sandboxes' network reaches it at. It
//! serves four doors, each given a listener bound by the caller:
//! - the explicit HTTP proxy (`HTTP_PROXY`/`HTTPS_PROXY`): `CONNECT host:port` and plain
//!   requests in absolute form ([`Egress::serve_proxy`]);
//! - plain HTTP redirected from port 80 by the host's firewall, routed by `Host`
//!   ([`Egress::serve_http`]);
//! - TLS redirected from port 443, routed by the ClientHello's server name, without
//!   terminating it ([`Egress::serve_tls`]);
//! - DNS ([`Egress::serve_dns`]): only names the session may reach resolve.
//!
//! Every connection is checked against its session's rules (found by the peer's address), the
//! name is resolved by the service itself, and the connection goes to the very address that
//! was checked: a name resolving to an address of IANA's special-purpose registries (private,
//! loopback, link-local, CGNAT, documentation, multicast...), a cloud metadata address or one
//! of the host's own is refused, so DNS rebinding gains nothing. Each connection allowed
//! or refused is reported to the [`Policy`] (host, port, outcome, bytes; never a payload).
//!
//! Secrets: TLS (redirected, or through `CONNECT`) to a host of one of the session's secrets
//! is the one exception to passing TLS through. With [`Settings::interception`] set, the proxy
//! ends it with a certificate of the service's CA ([`Interception`]), puts the secret's value
//! in for the session's placeholder where it belongs, and sends the request on over its own
//! verified TLS; a placeholder anywhere else refuses the request (`secrets.rs`).

mod addresses;
mod ca;
mod counted;
mod dns;
mod forward;
mod http;
mod intercept;
mod limits;
mod refusals;
mod resolve;
mod secrets;
mod tls;

pub use addresses::denied_reason;
pub use ca::{CaError, Interception};
pub use secrets::SessionSecret;

use sandboxd_api::EgressRule;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream, UdpSocket};

/// What the proxy asks of the service: whose a connection is, and where its entries go.
#[async_trait::async_trait]
pub trait Policy: Send + Sync + 'static {
    /// The session whose sandbox has this address, with the rules in force now; `None`
    /// refuses the connection.
    async fn session(&self, peer: IpAddr) -> Option<SessionRules>;
    /// One connection's (or name lookup's) outcome, for the session's activity log.
    fn record(&self, record: ConnectionRecord);
    /// A secret put into a request, or a request refused for the placeholder it carried.
    /// Only a service with secrets has any to record.
    fn record_secret(&self, _record: SecretRecord) {}
}

#[derive(Debug, Clone)]
pub struct SessionRules {
    pub session_id: String,
    pub rules: Arc<[EgressRule]>,
    /// The secrets of the session's runtime, with the session's placeholders.
    pub secrets: Arc<[SessionSecret]>,
}

/// A secret put into a request towards its host, or (with a refusal) a placeholder found
/// where it may not go. Names the secret, never its value.
#[derive(Debug, Clone)]
pub struct SecretRecord {
    pub session_id: String,
    pub host: String,
    pub port: u16,
    pub secret: String,
    pub refusal: Option<Refusal>,
}

/// Which door a connection came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `CONNECT` through the explicit proxy.
    Connect,
    /// A plain HTTP request, through the proxy or redirected.
    Http,
    /// TLS redirected from port 443.
    Tls,
    /// A name lookup.
    Dns,
}

impl Door {
    pub fn as_str(self) -> &'static str {
        match self {
            Door::Connect => "connect",
            Door::Http => "http",
            Door::Tls => "tls",
            Door::Dns => "dns",
        }
    }
}

/// One connection as the activity log records it.
#[derive(Debug, Clone)]
pub struct ConnectionRecord {
    pub session_id: String,
    pub door: Door,
    /// The name asked for (or the address, when a raw one was).
    pub host: String,
    pub port: u16,
    /// `Err` when refused or failed, saying why.
    pub outcome: Result<(), Refusal>,
    /// Bytes sent to the host and received from it.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub duration: Duration,
}

/// Why a connection did not go through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("refused by policy: {host}:{port} is not on this sandbox's egress allow-list")]
    NotAllowed { host: String, port: u16 },
    #[error("refused by policy: connections must name a host, not an address ({0})")]
    RawAddress(String),
    #[error("refused by policy: {host} resolves to {address}, {why}")]
    DeniedAddress {
        host: String,
        address: IpAddr,
        why: &'static str,
    },
    #[error("refused by policy: {0}")]
    NotHttp(&'static str),
    #[error("refused by policy: the request carries the placeholder of secret \"{secret}\", which {why}")]
    Secret { secret: String, why: &'static str },
    #[error("refused by policy: this sandbox already has {0} connections open")]
    TooManyConnections(usize),
    /// A lookup past a bound on those in flight (its sandbox's, or all sandboxes').
    #[error("refused by policy: {0} name lookups are already in flight")]
    TooManyLookups(usize),
    /// Refusals and failures of one sandbox past the few recorded one by one in an interval.
    #[error("{count} more name lookups refused or failed in {seconds} s, counted as this one entry; the last: {last}")]
    Counted {
        count: u64,
        seconds: u64,
        last: Box<Refusal>,
    },
    #[error("{host} could not be resolved: {why}")]
    NotResolved { host: String, why: String },
    #[error("{0} did not answer in time")]
    Timeout(String),
    #[error("cannot reach {host}: {why}")]
    Unreachable { host: String, why: String },
}

impl Refusal {
    /// Whether the policy refused it (rather than the network failing it).
    pub fn by_policy(&self) -> bool {
        match self {
            Refusal::Counted { last, .. } => last.by_policy(),
            Refusal::NotResolved { .. } | Refusal::Timeout(_) | Refusal::Unreachable { .. } => {
                false
            }
            _ => true,
        }
    }
}

/// The proxy's bounds and where it resolves names.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The name servers the service resolves with (the host's, or a test's own).
    pub upstream_dns: Vec<SocketAddr>,
    /// Connections one session may have open through the proxy at once.
    pub max_connections_per_session: usize,
    /// Name lookups one sandbox (one source address) may have in flight at the DNS door;
    /// past it a query is answered SERVFAIL at once, so a sandbox asking for names that never
    /// resolve holds this many of the service's lookups, not all of them.
    pub max_lookups_per_sandbox: usize,
    /// How long resolving a name may take in all, for a lookup or a connection.
    pub dns_timeout: Duration,
    /// How often a sandbox's DNS refusals past the first few are recorded, as one entry.
    pub refusals_counted_for: Duration,
    /// Longest a request's head (request line and headers) or a ClientHello may be.
    pub max_header_bytes: usize,
    /// How long a client has to send its request head or ClientHello.
    pub header_timeout: Duration,
    /// How long connecting to a host may take.
    pub connect_timeout: Duration,
    /// How long one connection may last in all.
    pub max_connection_time: Duration,
    /// The CA that hosts of secrets are intercepted with; `None` intercepts nothing.
    pub interception: Option<Arc<Interception>>,
}

impl Settings {
    pub fn new(upstream_dns: Vec<SocketAddr>) -> Settings {
        Settings {
            upstream_dns,
            max_connections_per_session: 64,
            max_lookups_per_sandbox: 32,
            // A working upstream answers in well under a second even uncached; a sandbox's
            // stub resolver waits 5 s before it asks again (glibc), so it gets a SERVFAIL
            // before it resends, and a silent upstream holds a lookup 2 s, not 10.
            dns_timeout: Duration::from_secs(2),
            refusals_counted_for: Duration::from_secs(10),
            max_header_bytes: 64 << 10,
            header_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            max_connection_time: Duration::from_secs(3600),
            interception: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("the egress proxy needs at least one upstream name server")]
    NoNameServer,
}

/// The proxy; cheap to clone, one per service.
#[derive(Clone)]
pub struct Egress {
    shared: Arc<Shared>,
}

struct Shared {
    settings: Settings,
    policy: Arc<dyn Policy>,
    resolver: resolve::Resolver,
    limits: limits::PerKey<String>,
}

impl Egress {
    pub fn new(settings: Settings, policy: Arc<dyn Policy>) -> Result<Egress, EgressError> {
        let resolver = resolve::Resolver::new(&settings.upstream_dns, settings.dns_timeout)?;
        Ok(Egress {
            shared: Arc::new(Shared {
                limits: limits::PerKey::new(settings.max_connections_per_session),
                settings,
                policy,
                resolver,
            }),
        })
    }

    /// The explicit proxy: `CONNECT` and absolute-form requests.
    pub async fn serve_proxy(&self, listener: TcpListener) {
        self.accept(listener, |shared, stream, client| {
            http::serve(shared, stream, client, http::Mode::Proxy)
        })
        .await
    }

    /// Plain HTTP redirected from port 80: routed by `Host`.
    pub async fn serve_http(&self, listener: TcpListener) {
        self.accept(listener, |shared, stream, client| {
            http::serve(shared, stream, client, http::Mode::Transparent)
        })
        .await
    }

    /// TLS redirected from port 443: routed by the server name, passed through untouched.
    pub async fn serve_tls(&self, listener: TcpListener) {
        self.accept(listener, tls::serve).await
    }

    /// DNS over UDP for the sandboxes.
    pub async fn serve_dns(&self, socket: UdpSocket) {
        dns::serve(self.shared.clone(), socket).await
    }

    async fn accept<F, Fut>(&self, listener: TcpListener, handle: F)
    where
        F: Fn(Arc<Shared>, TcpStream, Client) -> Fut + Clone + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors and the like: wait rather than spin.
                    tracing::warn!(error = %e, "egress proxy cannot accept");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let (shared, handle) = (self.shared.clone(), handle.clone());
            tokio::spawn(async move {
                let Some(client) = shared.admit(peer).await else {
                    return;
                };
                let _ = stream.set_nodelay(true);
                handle(shared, stream, client).await
            });
        }
    }
}

impl Shared {
    /// The client's session, if it has one and room under its bound.
    async fn admit(&self, peer: SocketAddr) -> Option<Client> {
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
struct Client {
    session: SessionRules,
    _permit: Arc<limits::Permit<String>>,
}

impl Shared {
    /// Checks `host:port` against the session's rules, resolves it and connects to the very
    /// address checked. `host` may carry a trailing dot and any case.
    async fn open(
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
    async fn tunnel<C>(&self, client: C, upstream: TcpStream, mut record: ConnectionRecord)
    where
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

    fn refused(&self, session: &SessionRules, door: Door, host: &str, port: u16, refusal: Refusal) {
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

impl Shared {
    /// Refuses a request for the placeholder it carries: recorded, and answered 403.
    fn secret_refused(
        &self,
        session: &SessionRules,
        host: &str,
        port: u16,
        misplaced: secrets::Misplaced,
    ) -> ::http::Response<forward::ProxyBody> {
        let refusal = Refusal::Secret {
            secret: misplaced.secret.clone(),
            why: misplaced.why,
        };
        let response = forward::refusal_answer(&refusal);
        self.policy.record_secret(SecretRecord {
            session_id: session.session_id.clone(),
            host: host.to_string(),
            port,
            secret: misplaced.secret,
            refusal: Some(refusal),
        });
        response
    }
}

impl ConnectionRecord {
    fn allowed(session: &SessionRules, door: Door, host: &str, port: u16) -> ConnectionRecord {
        ConnectionRecord {
            session_id: session.session_id.clone(),
            door,
            host: host.to_string(),
            port,
            outcome: Ok(()),
            bytes_sent: 0,
            bytes_received: 0,
            duration: Duration::ZERO,
        }
    }
}
