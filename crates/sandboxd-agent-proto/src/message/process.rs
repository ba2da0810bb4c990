//! Tracked processes, which outlive the connection that started them: their start request,
//! their terminal's size and how the agent reports them.

use super::exec::{ExecRequest, ExitReport};
use serde::{Deserialize, Serialize};

/// [`Request::ProcessStart`](super::Request::ProcessStart).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessStartRequest {
    /// What to run. `timeout_ms` kills the process group as for an exec; `output_limit` is
    /// the ring's capacity: the newest bytes of output (stdout and stderr together) are kept.
    #[serde(flatten)]
    pub command: ExecRequest,
    /// How listings name the process (the service passes the program name).
    pub program: String,
    /// Runs it on a new terminal of this size, which is its stdin, stdout and stderr and its
    /// controlling terminal; `command.stdin` is then implied.
    #[serde(default)]
    pub pty: Option<TermSize>,
    /// Holds the process back instead of losing output: while what its attached streams have
    /// not sent yet fills the ring, its output is not read, so it waits on its writes (with
    /// none attached, once the ring is full, until one attaches or its timeout).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paced: bool,
}

/// A terminal's window size in character cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermSize {
    pub cols: u16,
    pub rows: u16,
}

/// A tracked process, as the agent reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// The agent's id for it; unlike the pid it is never reused within the sandbox.
    pub id: String,
    /// Also its process group id.
    pub pid: u32,
    pub program: String,
    pub pty: bool,
    /// Whether its stdin can be written now.
    pub stdin_open: bool,
    /// Unix time in milliseconds.
    pub started_at_ms: u64,
    pub timeout_ms: u64,
    /// The offset of the oldest byte of output still in the ring.
    pub output_start: u64,
    /// The bytes of output so far: the offset of the next byte.
    pub output_end: u64,
    /// Set once it has exited.
    #[serde(default)]
    pub exit: Option<ExitReport>,
}
