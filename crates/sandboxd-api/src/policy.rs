//! The service policy as the API shows it: limits nothing can raise, and the defaults under them.

use serde::{Deserialize, Serialize};

/// Limits nothing can raise, and the defaults under them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Policy {
    pub default_timeout_secs: u64,
    pub max_timeout_secs: u64,
    /// Bytes of stdout, and separately of stderr, kept per command.
    pub max_output_bytes: u64,
    pub max_upload_bytes: u64,
    /// Bytes of request bodies the service holds at once, all requests together; a body
    /// that cannot get its share within a few seconds is refused with 503 `service_busy`.
    pub max_body_bytes_in_flight: u64,
    pub idle_timeout_secs: u64,
    pub max_lifetime_secs: u64,
    pub max_sessions: u32,
    /// Failed authentications one client address may make per minute before it must wait.
    pub auth_failures_per_minute: u32,
    /// Bytes of a command's output an MCP tool result carries, both streams together: the
    /// head and the tail of each, with a marker saying what was left out and where it is.
    #[serde(default = "default_mcp_output_bytes")]
    pub mcp_output_bytes: u64,
    /// Connections to a session's ports open at once (at most 48: each holds one of its
    /// agent's connections).
    pub max_port_connections: u32,
    /// Bytes per second a session's port connections carry, all of them and both ways.
    pub port_bytes_per_sec: u64,
    /// What happens to a session idle for `idle_timeout_secs`: closed, or paused.
    pub idle_action: IdleAction,
    /// How long a session may stay paused before it is closed.
    pub paused_timeout_secs: u64,
    /// Bytes of snapshots one tenant may keep, all together (the untenanted ones count as
    /// one tenant).
    pub snapshot_quota_bytes: u64,
    /// Snapshots one tenant may keep.
    pub snapshot_quota_count: u32,
}

/// The default of [`Policy::mcp_output_bytes`]: a few thousand tokens of a model's context.
pub const DEFAULT_MCP_OUTPUT_BYTES: u64 = 24 << 10;

fn default_mcp_output_bytes() -> u64 {
    DEFAULT_MCP_OUTPUT_BYTES
}

/// What the service does with a session that was idle for `policy.idle_timeout_secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum IdleAction {
    /// Closes it.
    #[default]
    Close,
    /// Pauses it; it is closed after `policy.paused_timeout_secs` paused.
    Pause,
}
