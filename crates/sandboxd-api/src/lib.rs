//! Types of the sandboxd HTTP API, shared by the server, the client and the tests.
//!
//! Everything here is plain data: what goes over the wire as JSON. The config crate resolves
//! the operator's file into [`RuntimeInfo`] and [`Policy`], so the service shows exactly what
//! is in force.

mod contexts;
mod egress;
mod files_meta;
mod output_watch;
mod policy;
mod ports;
mod remedy;
mod sandboxes;
mod snapshots;

pub use contexts::{
    CodeEnd, CodeError, CodeEvent, CodeResult, ContextInfo, ContextList, ContextRequest, RunCode,
};
pub use egress::{
    egress_allows, first_widening, normalize_host, EgressRule, SessionNetwork,
    DEFAULT_EGRESS_PORTS, MAX_EGRESS_RULES,
};
pub use files_meta::{DirMade, FileChange, FileChangeKind, FileInfo, MakeDir, MovePath};
pub use output_watch::OutputWatch;
pub use policy::{
    IdleAction, Policy, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONTEXTS_PER_SESSION,
    DEFAULT_MAX_CONTEXTS_PER_TENANT, DEFAULT_MAX_DNS_LOOKUPS_PER_SANDBOX,
    DEFAULT_MAX_PORT_CONNECTIONS_PER_TENANT, DEFAULT_MAX_REQUESTS_PER_CALLER,
    DEFAULT_MAX_SHARES_PER_TENANT, DEFAULT_MAX_WATCHES_PER_SESSION, DEFAULT_MAX_WATCHES_PER_TENANT,
    DEFAULT_MCP_OUTPUT_BYTES, DEFAULT_RESERVED_CONNECTIONS,
};
pub use ports::{PortInfo, PortList, ShareInfo, ShareList, ShareRequest, TUNNEL_PROTOCOL};
pub use remedy::{with_wording, without_rest_wording, Remedy};
pub use sandboxes::{read_bounded, Chunks, Failure, Sandboxes};
use serde::{Deserialize, Serialize};
pub use snapshots::{ForkRequest, ForkResult, SnapshotInfo, SnapshotList, SnapshotRequest};
use std::collections::BTreeMap;

/// The header a first-party client sets to say which interface it is: `cli`, `dashboard` or
/// `mcp` (default: `api`). The activity log records it.
pub const CLIENT_HEADER: &str = "x-sandboxd-client";

/// Whether a sandbox gets a network. Only the operator chooses, per runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    None,
    Bridge,
    /// Only the names of the runtime's `egress` list, through the service's proxy.
    Egress,
}

impl NetworkMode {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::None => "none",
            NetworkMode::Bridge => "bridge",
            NetworkMode::Egress => "egress",
        }
    }
}

/// The ceilings of one runtime, after service-wide defaults were applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RuntimeInfo {
    pub name: String,
    /// The image the sandbox runs, when the operator named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The recipe the image is built from, when the operator named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipe: Option<String>,
    /// For a recipe: the image its build is tagged with, `sandboxd/recipe-NAME:HASH12` (the
    /// hash of the recipe's content, so a changed recipe is built again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe_image: Option<String>,
    #[serde(flatten)]
    pub limits: Limits,
    /// The program that runs a piece of source code in this runtime (e.g. `["python3"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interpreter: Vec<String>,
    /// Sandboxes kept started and ready, so opening a session takes no container start.
    #[serde(default)]
    pub pool_size: u32,
    /// The Jupyter kernels of this runtime, for code contexts: language -> the command that
    /// starts one (`{connection_file}` stands for its connection file).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub kernels: std::collections::BTreeMap<String, Vec<String>>,
    /// With `network_mode = "egress"`: the names (and ports) its sandboxes may reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub egress: Vec<EgressRule>,
}

/// One entry of `GET /v1/runtimes`: the runtime, and where its image stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RuntimeEntry {
    #[serde(flatten)]
    pub runtime: RuntimeInfo,
    #[serde(flatten)]
    pub status: ImageStatus,
}

/// Where a runtime's image stands: `{"state": "ready"}`, `{"state": "not_built"}`,
/// `{"state": "building", "progress": {...}}` or `{"state": "failed", "reason": "..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ImageStatus {
    /// The image is on the platform: a session starts at once.
    Ready,
    /// Not on the platform yet: the first session (or `POST /v1/runtimes/{name}/build`)
    /// pulls it, or builds it from its recipe.
    NotBuilt,
    /// Being pulled or built now; sessions asking for it wait for this one build.
    Building { progress: BuildProgress },
    /// The last attempt failed; the next session (or build request) tries again.
    Failed { reason: String },
}

/// How far a pull or build is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct BuildProgress {
    /// The build step under way (from 1) and how many there are, when building.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// The latest line of output.
    pub line: String,
}

/// One line of `POST /v1/runtimes/{name}/build` (newline-delimited JSON): the runtime's image
/// as it changes. The last line has the state `ready` or `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuntimeBuildEvent {
    pub runtime: String,
    pub image: String,
    #[serde(flatten)]
    pub status: ImageStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RuntimeList {
    pub default_runtime: String,
    pub runtimes: Vec<RuntimeEntry>,
}

/// A tenant: an agent or team with its own token, runtimes and session quota.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TenantInfo {
    pub name: String,
    /// The runtimes it may open.
    pub runtimes: Vec<String>,
    pub max_sessions: u32,
}

/// The configuration in force, as `GET /v1/config` shows it (the token is never included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConfigView {
    /// Always `"<redacted>"`: the token is a root credential.
    pub token: String,
    pub default_runtime: String,
    pub max_sessions: u32,
    /// Service-wide defaults that a runtime naming none of its own inherits.
    pub defaults: Limits,
    pub runtimes: BTreeMap<String, RuntimeInfo>,
    pub policy: Policy,
    /// Tenants with their own tokens (shown without them).
    #[serde(default)]
    pub tenants: Vec<TenantInfo>,
    /// Browser origins allowed beyond the service's own (e.g. the MCP Inspector's).
    #[serde(default)]
    pub extra_allowed_origins: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// A snapshot's id: the session starts with its files, runtime and labels (the
    /// request's own labels are added over them); processes are not in a snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// For an `egress` runtime: a narrower allow-list than the runtime's (never a wider one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<String>>))]
    pub egress: Option<Vec<EgressRule>>,
}

impl CreateSession {
    /// The fields a create request may carry; anything else is refused.
    pub const FIELDS: &'static [&'static str] =
        &["runtime", "tenant", "labels", "snapshot", "egress"];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SessionState {
    Running,
    Ended,
    /// Frozen: no CPU, memory, processes and files kept; any operation resumes it.
    Paused,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
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
    /// Set when the session has an idle expiry of its own (an E2B sandbox's timeout), shorter
    /// than the policy's `idle_timeout_secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
    /// When it was paused, while it is (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<String>,
}

/// `GET /v1/events`, event `session`: a session opened or ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionChange {
    pub id: String,
    pub state: SessionState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Why it ended, in words, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SessionList {
    pub sessions: Vec<SessionInfo>,
}

/// `POST /v1/sessions/{id}/exec`: exactly one of `command` (run by `/bin/sh -c`) or `argv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorDetail {
    /// Stable, machine-readable (e.g. `unknown_runtime`, `service_full`).
    pub code: String,
    /// What was wrong and what to do, for a person or an agent.
    pub message: String,
    /// What to do about it, as a stable key, when the error has a remedy: `open_session`,
    /// `list_sessions`, `close_session`, `list_runtimes`, `list_processes`, `kill_all`,
    /// `list_directory`, `read_file`, `read_part`, `delete_recursively`. `message` ends with
    /// it in the API's words (a route); another face (the CLI) may word it its own way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remedy: Option<String>,
}

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

/// `GET /v1/sessions/{id}/files?path=DIR`: a directory's entries, sorted by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileList {
    /// The path as requested.
    pub path: String,
    pub entries: Vec<FileEntry>,
    /// The directory holds more entries than a listing returns.
    pub truncated: bool,
}

/// One entry of a directory; a symlink is described, not followed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileEntry {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FileKind,
    pub size: u64,
    /// The permission bits in octal, e.g. `"0644"`.
    pub mode: String,
    /// RFC 3339; `None` for a time that cannot be shown.
    pub modified: Option<String>,
    /// For a symlink, the type of what it leads to (followed to the end); absent when it
    /// leads nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<FileKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    /// A device, FIFO or socket.
    Other,
}

/// `PUT /v1/sessions/{id}/files/content?path=FILE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileWritten {
    pub path: String,
    pub bytes: u64,
}

/// `DELETE /v1/sessions/{id}/files?path=PATH`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileDeleted {
    pub path: String,
}

/// `PUT /v1/sessions/{id}/archive?path=DIR`: what the tar held, now under `path`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ArchiveWritten {
    pub path: String,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file contents.
    pub bytes: u64,
}

/// `POST /v1/sessions/{id}/processes`: exactly one of `command` (run by `/bin/sh -c`) or
/// `argv`. The process runs in the background, in its own process group, until it exits or
/// its timeout kills the group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StartProcess {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Whether its stdin can be written (`POST .../stdin`); otherwise it reads `/dev/null`.
    #[serde(default)]
    pub stdin: bool,
    /// Text given to its stdin as it starts, which is then closed (a program's source, for
    /// `python3 -`); it needs no `stdin: true` and no separate write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// By default `policy.default_timeout_secs`, as for exec; at most `policy.max_timeout_secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Runs it on a terminal of `cols` x `rows` (default 80 x 24), which is its stdin, stdout
    /// and stderr; its output then comes as `stdout` only.
    #[serde(default)]
    pub pty: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u16>,
    /// Hold the process back rather than lose output: while its output stream lags by the
    /// buffer's size (`policy.max_output_bytes`), the process waits on its writes. Without a
    /// stream following it, it waits once the buffer is full (until one attaches, or its
    /// timeout). For a client that wants every byte, as `sandboxd exec` does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paced: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ProcessState {
    Running,
    Exited,
}

/// A background process of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProcessInfo {
    /// The handle in `/v1/sessions/{id}/processes/{process_id}`; unlike `pid`, never reused
    /// within the session.
    pub id: String,
    /// Its pid in the sandbox, also its process group id.
    pub pid: u32,
    /// The program's name, without arguments.
    pub program: String,
    pub state: ProcessState,
    pub pty: bool,
    /// Whether `POST .../stdin` can write to it now.
    pub stdin_open: bool,
    /// RFC 3339.
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// How long it ran, or has been running so far.
    pub duration_ms: u64,
    pub timeout_secs: u64,
    /// Set when it exited on its own.
    pub exit_code: Option<i32>,
    /// Set when a signal killed it.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub oom_killed: bool,
    /// The offset of the oldest byte of output still kept (stdout and stderr count together).
    /// The first quarter of `policy.max_output_bytes` is kept to the end and the newest output
    /// in the rest, so a stream that lags loses the middle (a `dropped` event says how much),
    /// never the start or the end.
    pub output_start: u64,
    /// The bytes of output so far: the offset of the next byte.
    pub output_bytes: u64,
}

/// `GET /v1/sessions/{id}/processes`: oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProcessList {
    pub processes: Vec<ProcessInfo>,
}

/// `DELETE /v1/sessions/{id}/processes`: what killing every process in the sandbox did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct KilledProcesses {
    /// Processes killed (the agent and the sandbox's init are never among them).
    pub killed: u32,
    /// Processes still alive when the agent gave up: a process forking faster than it can be
    /// killed. Call again, or close the session.
    pub remaining: u32,
}

/// `POST /v1/sessions/{id}/tickets`: a short-lived, single-use credential for one terminal
/// WebSocket (`ticket.<ticket>` subprotocol) or output stream (`?ticket=`) of that session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Ticket {
    /// 64 hex digits (32 random bytes).
    pub ticket: String,
    /// RFC 3339.
    pub expires_at: String,
    pub expires_in_secs: u64,
}

/// `POST .../processes/{process_id}/stdin` with a JSON body (any other body is written
/// as it is).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ProcessInput {
    #[serde(default)]
    pub data: String,
    /// Closes stdin after writing `data`.
    #[serde(default)]
    pub close: bool,
}

/// The answer to a stdin write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InputWritten {
    /// All of them: a write that cannot be completed is an error.
    pub bytes: u64,
    pub closed: bool,
}

/// `POST .../processes/{process_id}/signal`: a name (`TERM`, `SIGTERM`; see the README for
/// the list) or a number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SignalRequest {
    pub signal: SignalSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum SignalSpec {
    Number(i32),
    Name(String),
}

/// `POST .../processes/{process_id}/resize`, and the `resize` message of a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TerminalSize {
    pub cols: u16,
    pub rows: u16,
}

/// The data of a `stdout` or `stderr` event of `GET .../processes/{process_id}/stream`.
/// The event's `id` is the offset after these bytes: resume there with `?since=` or
/// `Last-Event-ID`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OutputChunk {
    /// The offset of the first byte (stdout and stderr count together).
    pub offset: u64,
    /// The bytes as UTF-8 (invalid sequences replaced), unless `?encoding=base64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The bytes, with `?encoding=base64` (standard alphabet, padded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
}

/// The data of a `dropped` event: output that left the ring before it could be sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OutputDropped {
    pub offset: u64,
    pub bytes: u64,
}

/// The text messages of the terminal WebSocket (`GET /v1/sessions/{id}/pty`); its binary
/// messages are the terminal's bytes, both ways.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TerminalMessage {
    /// Client to service: the window size changed.
    Resize { cols: u16, rows: u16 },
    /// Service to client, first: the process on the terminal.
    Started { process: ProcessInfo },
    /// Service to client, last before the close: the process exited.
    Exit {
        exit_code: Option<i32>,
        signal: Option<i32>,
    },
    /// Service to client: something failed; the socket closes after it.
    Error { code: String, message: String },
}
