//! What the proxy asks of the service and what it tells it: a session's rules in force, the
//! record of each connection and secret, and why a connection was refused.

use crate::secrets::SessionSecret;
use sandboxd_api::EgressRule;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

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

impl ConnectionRecord {
    pub(crate) fn allowed(
        session: &SessionRules,
        door: Door,
        host: &str,
        port: u16,
    ) -> ConnectionRecord {
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
