//! Processes in a session: starting one, its state, its input, its signals, its output stream
//! and the terminal's messages.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
