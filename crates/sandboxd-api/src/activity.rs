//! What the service records: a session's activity log and the audit log.

use serde::{Deserialize, Serialize};

/// The header a first-party client sets to say which interface it is: `cli`, `dashboard` or
/// `mcp` (default: `api`). The activity log records it.
pub const CLIENT_HEADER: &str = "x-sandboxd-client";

/// One entry of a session's activity log: what was addressed and how it went, never a payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivityEntry {
    /// RFC 3339.
    pub at: String,
    /// Which credential: `admin` for the service token, or a tenant.
    pub principal: String,
    /// `api`, `cli`, `dashboard`, `mcp`, or `service` when the service itself acted.
    pub interface: String,
    /// e.g. `open`, `exec`, `write_file`, `close`, `expire`.
    pub action: String,
    /// A path, a program name or a runtime alias.
    pub target: String,
    /// `ok` or `error`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `GET /v1/sessions/{id}/activity`: the most recent entries, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivityList {
    pub entries: Vec<ActivityEntry>,
}

/// One entry of the audit log: an attempt the service refused, for the administrator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    /// RFC 3339.
    pub at: String,
    /// Which credential tried: e.g. `tenant:a`.
    pub principal: String,
    /// `api`, `cli`, `dashboard` or `mcp`.
    pub interface: String,
    /// The operation asked for, e.g. `get_session`, `exec`, `read_file`, `close`.
    pub action: String,
    /// The session it addressed: another tenant's.
    pub session_id: String,
    /// `denied`: answered as an unknown id.
    pub outcome: String,
}

/// `GET /v1/audit`: the most recent entries, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditList {
    pub entries: Vec<AuditEntry>,
}
