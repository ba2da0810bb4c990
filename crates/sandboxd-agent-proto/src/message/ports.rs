//! The sandbox's listening TCP ports, as [`Event::Ports`](super::Event::Ports) lists them.

use serde::{Deserialize, Serialize};

/// A TCP port listening in the sandbox, from its /proc/net/tcp{,6}.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListeningPort {
    pub port: u16,
    /// The address it is bound to, e.g. `127.0.0.1`, `0.0.0.0`, `::`.
    pub address: String,
    /// The process holding the socket, when the agent could find it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// That process's name (its `comm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}
