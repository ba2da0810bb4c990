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
    /// Connections to ports one tenant's sessions may have open together (the administrator's
    /// count as one tenant).
    #[serde(default = "default_max_port_connections_per_tenant")]
    pub max_port_connections_per_tenant: u32,
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
    /// Bytes of the images of its sessions paused to disk (gVisor) one tenant may hold, all
    /// together (the untenanted ones count as one tenant); unset, the state directory's free
    /// space is the only bound.
    #[serde(default)]
    pub pause_quota_bytes: Option<u64>,
    /// Bytes of volumes one tenant may have, their sizes together (the untenanted ones count
    /// as one tenant).
    #[serde(default = "default_volume_quota_bytes")]
    pub volume_quota_bytes: u64,
    /// Volumes one tenant may have.
    #[serde(default = "default_volume_quota_count")]
    pub volume_quota_count: u32,
    /// Whether several open sessions may mount one volume writable at once; when not, a
    /// volume has at most one writer (any number of readers).
    #[serde(default)]
    pub volume_concurrent_writers: bool,
    /// Client connections the service holds open at once. When all are taken, a new one
    /// closes the longest-idle connection (waiting for its next request or still sending
    /// headers) of the client address holding the most.
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    /// Of `max_connections`, how many requests in progress are kept for the service token (the
    /// administrator, the dashboard): tenants and callers without a token never take them.
    #[serde(default = "default_reserved_connections")]
    pub reserved_connections: u32,
    /// Requests one tenant, or one client address without a token, may have in progress at
    /// once, long-lived streams (events, process output, watches) included; more get 429.
    #[serde(default = "default_max_requests_per_caller")]
    pub max_requests_per_caller: u32,
    /// Directory watches one session may hold at once (each holds one of its agent's
    /// connections, beside `max_port_connections`).
    #[serde(default = "default_max_watches_per_session")]
    pub max_watches_per_session: u32,
    /// Directory watches one tenant's sessions may hold together (the administrator's count as
    /// one tenant).
    #[serde(default = "default_max_watches_per_tenant")]
    pub max_watches_per_tenant: u32,
    /// Directory watches the service holds at once, all tenants together.
    #[serde(default = "default_max_watches")]
    pub max_watches: u32,
    /// Share links one session may hold.
    #[serde(default = "default_max_shares_per_session")]
    pub max_shares_per_session: u32,
    /// Share links one tenant's sessions may hold together (the administrator's count as one
    /// tenant).
    #[serde(default = "default_max_shares_per_tenant")]
    pub max_shares_per_tenant: u32,
    /// Share links the service keeps, all tenants together.
    #[serde(default = "default_max_shares")]
    pub max_shares: u32,
    /// Code contexts (each a kernel in the sandbox) one session may hold; at most 16, as many
    /// kernels as the agent runs.
    #[serde(default = "default_max_contexts_per_session")]
    pub max_contexts_per_session: u32,
    /// Code contexts one tenant's sessions may hold together (the administrator's count as one
    /// tenant).
    #[serde(default = "default_max_contexts_per_tenant")]
    pub max_contexts_per_tenant: u32,
    /// Name lookups one egress sandbox may have in flight at the service's DNS; past it, SERVFAIL
    /// at once.
    #[serde(default = "default_max_dns_lookups_per_sandbox")]
    pub max_dns_lookups_per_sandbox: u32,
    /// Name lookups the service's DNS has in flight for all egress sandboxes together; past it,
    /// SERVFAIL at once.
    #[serde(default = "default_max_dns_lookups")]
    pub max_dns_lookups: u32,
}

/// The defaults of [`Policy::max_connections`], [`Policy::reserved_connections`] and
/// [`Policy::max_requests_per_caller`].
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1024;
pub const DEFAULT_RESERVED_CONNECTIONS: u32 = 64;
pub const DEFAULT_MAX_REQUESTS_PER_CALLER: u32 = 256;
/// The defaults of [`Policy::max_watches_per_session`] and [`Policy::max_watches_per_tenant`].
pub const DEFAULT_MAX_WATCHES_PER_SESSION: u32 = 8;
pub const DEFAULT_MAX_WATCHES_PER_TENANT: u32 = 256;
/// The defaults of [`Policy::max_port_connections_per_tenant`],
/// [`Policy::max_contexts_per_session`] and [`Policy::max_contexts_per_tenant`].
pub const DEFAULT_MAX_PORT_CONNECTIONS_PER_TENANT: u32 = 512;
pub const DEFAULT_MAX_CONTEXTS_PER_SESSION: u32 = 16;
pub const DEFAULT_MAX_CONTEXTS_PER_TENANT: u32 = 128;
/// The defaults of [`Policy::max_watches`], [`Policy::max_shares_per_session`],
/// [`Policy::max_shares`] and [`Policy::max_dns_lookups`]: the service's own ceilings.
pub const DEFAULT_MAX_WATCHES: u32 = 1024;
pub const DEFAULT_MAX_SHARES_PER_SESSION: u32 = 100;
pub const DEFAULT_MAX_SHARES: u32 = 10_000;
pub const DEFAULT_MAX_DNS_LOOKUPS: u32 = 1024;
/// The defaults of [`Policy::max_shares_per_tenant`] and [`Policy::max_dns_lookups_per_sandbox`].
pub const DEFAULT_MAX_SHARES_PER_TENANT: u32 = 1000;
pub const DEFAULT_MAX_DNS_LOOKUPS_PER_SANDBOX: u32 = 32;

fn default_max_connections() -> u32 {
    DEFAULT_MAX_CONNECTIONS
}

fn default_reserved_connections() -> u32 {
    DEFAULT_RESERVED_CONNECTIONS
}

fn default_max_requests_per_caller() -> u32 {
    DEFAULT_MAX_REQUESTS_PER_CALLER
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

fn default_max_watches_per_session() -> u32 {
    DEFAULT_MAX_WATCHES_PER_SESSION
}

fn default_max_watches_per_tenant() -> u32 {
    DEFAULT_MAX_WATCHES_PER_TENANT
}

fn default_max_shares_per_tenant() -> u32 {
    DEFAULT_MAX_SHARES_PER_TENANT
}

fn default_max_dns_lookups_per_sandbox() -> u32 {
    DEFAULT_MAX_DNS_LOOKUPS_PER_SANDBOX
}

fn default_max_port_connections_per_tenant() -> u32 {
    DEFAULT_MAX_PORT_CONNECTIONS_PER_TENANT
}

fn default_max_contexts_per_session() -> u32 {
    DEFAULT_MAX_CONTEXTS_PER_SESSION
}

fn default_max_contexts_per_tenant() -> u32 {
    DEFAULT_MAX_CONTEXTS_PER_TENANT
}

fn default_max_watches() -> u32 {
    DEFAULT_MAX_WATCHES
}

fn default_max_shares_per_session() -> u32 {
    DEFAULT_MAX_SHARES_PER_SESSION
}

fn default_max_shares() -> u32 {
    DEFAULT_MAX_SHARES
}

fn default_max_dns_lookups() -> u32 {
    DEFAULT_MAX_DNS_LOOKUPS
}

pub const DEFAULT_VOLUME_QUOTA_BYTES: u64 = 10 << 30;
pub const DEFAULT_VOLUME_QUOTA_COUNT: u32 = 10;

fn default_volume_quota_bytes() -> u64 {
    DEFAULT_VOLUME_QUOTA_BYTES
}

fn default_volume_quota_count() -> u32 {
    DEFAULT_VOLUME_QUOTA_COUNT
}
