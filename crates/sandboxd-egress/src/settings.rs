//! The operator's settings of the proxy: upstream DNS, limits and timeouts, interception.

use crate::ca::Interception;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

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
    /// Name lookups in flight at the DNS door for all sandboxes together: bounds the door's
    /// memory and sockets whatever the number of askers; past it, SERVFAIL at once.
    pub max_lookups: usize,
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
            max_lookups: 1024,
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
