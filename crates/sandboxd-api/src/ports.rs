//! The ports types: what listens in a sandbox, and share links to a port.

use serde::{Deserialize, Serialize};

/// The protocol a raw TCP tunnel to a port upgrades to (`GET /v1/sessions/{id}/tunnels/{port}`).
pub const TUNNEL_PROTOCOL: &str = "sandboxd-tunnel";

/// `GET /v1/sessions/{id}/ports`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct PortList {
    pub ports: Vec<PortInfo>,
}

/// A TCP port listening in the sandbox, read from the sandbox's own /proc/net/tcp{,6}.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct PortInfo {
    pub port: u16,
    /// The address it is bound to: `127.0.0.1`, `0.0.0.0`, `::1`, `::`...
    pub address: String,
    /// The process holding it, when it could be found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// `POST /v1/sessions/{id}/ports/{port}/share`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ShareRequest {
    /// How long the link works, in seconds: at most (and by default) one hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_secs: Option<u64>,
}

/// A share link: a URL that reaches one port of one session without the token, until it
/// expires, is revoked or the session ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ShareInfo {
    /// Names the link for listing and revoking; not the capability.
    pub id: String,
    pub port: u16,
    /// The path that reaches the port: `/p/{capability}/`. Present only in the answer that
    /// made the link; the service keeps only its hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The whole link, where it is known: `https://{capability}.{share_domain}/` when the
    /// operator configured `[ports] share_domain`, else the service's URL and `path` as the
    /// client reached it. Present only in the answer that made the link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    pub expires_at: String,
    /// Who made it: `admin` or `tenant:NAME`.
    pub created_by: String,
}

/// `GET /v1/sessions/{id}/shares`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ShareList {
    pub shares: Vec<ShareInfo>,
}
