//! Types of the sandboxd HTTP API, shared by the server, the client and the tests.
//!
//! Everything here is plain data: what goes over the wire as JSON. The config crate resolves
//! the operator's file into [`RuntimeInfo`] and [`Policy`], so the service shows exactly what
//! is in force.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Whether a sandbox gets a network. Only the operator chooses, per runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    None,
    Bridge,
}

impl NetworkMode {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::None => "none",
            NetworkMode::Bridge => "bridge",
        }
    }
}

/// The ceilings of one runtime, after service-wide defaults were applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub mem_limit_bytes: u64,
    pub cpus: f64,
    pub pids_limit: u32,
    pub network_mode: NetworkMode,
    /// Size of each writable tmpfs (`/tmp` and the working directory); counts against memory.
    pub tmpfs_size_bytes: u64,
}

/// One entry of the runtime allowlist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    pub name: String,
    /// The image the sandbox runs, when the operator named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The recipe the image is built from, when the operator named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipe: Option<String>,
    #[serde(flatten)]
    pub limits: Limits,
    /// The program that runs a piece of source code in this runtime (e.g. `["python3"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interpreter: Vec<String>,
    /// Sandboxes kept started and ready, so opening a session takes no container start.
    #[serde(default)]
    pub pool_size: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeList {
    pub default_runtime: String,
    pub runtimes: Vec<RuntimeInfo>,
}

/// Limits nothing can raise, and the defaults under them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    pub default_timeout_secs: u64,
    pub max_timeout_secs: u64,
    /// Bytes of stdout, and separately of stderr, kept per command.
    pub max_output_bytes: u64,
    pub max_upload_bytes: u64,
    pub idle_timeout_secs: u64,
    pub max_lifetime_secs: u64,
    pub max_sessions: u32,
}

/// The configuration in force, as `GET /v1/config` shows it (the token is never included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigView {
    /// Always `"<redacted>"`: the token is a root credential.
    pub token: String,
    pub default_runtime: String,
    pub max_sessions: u32,
    /// Service-wide defaults that a runtime naming none of its own inherits.
    pub defaults: Limits,
    pub runtimes: BTreeMap<String, RuntimeInfo>,
    pub policy: Policy,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub sessions: u32,
    /// Ready sandboxes waiting in warm pools; they count against `max_sessions` too.
    pub pooled: u32,
    pub max_sessions: u32,
    pub memory_bytes: u64,
    pub processes: u64,
    pub runtimes_allowed: u32,
}

/// `POST /v1/sessions`. A request may name a runtime alias and nothing else about the container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

impl CreateSession {
    /// The fields a create request may carry; anything else is refused.
    pub const FIELDS: &'static [&'static str] = &["runtime", "tenant", "labels"];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionState {
    Running,
    Ended,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub id: String,
    pub runtime: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub state: SessionState,
    /// RFC 3339.
    pub created_at: String,
    pub last_activity_at: String,
    pub idle_secs: u64,
    pub memory_bytes: u64,
    pub process_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Why the session ended, in words (e.g. "closed by the client").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionList {
    pub sessions: Vec<SessionInfo>,
}

/// `POST /v1/sessions/{id}/exec`: exactly one of `command` (run by `/bin/sh -c`) or `argv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecResult {
    /// `None` when the process was killed by a signal.
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub timed_out: bool,
    pub oom_killed: bool,
    pub duration_ms: u64,
}

/// Every error response: `{"error": {"code": "...", "message": "..."}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Stable, machine-readable (e.g. `unknown_runtime`, `service_full`).
    pub code: String,
    /// What was wrong and what to do, for a person or an agent.
    pub message: String,
}

/// One entry of a session's activity log: what was addressed and how it went, never a payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
pub struct ActivityList {
    pub entries: Vec<ActivityEntry>,
}
