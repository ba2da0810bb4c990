//! One command run to its end on one connection: [`Request::Exec`](super::Request::Exec) and its [`Event::Exited`](super::Event::Exited).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// [`Request::Exec`](super::Request::Exec).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecRequest {
    /// Program and arguments; never run through a shell. Must not be empty.
    pub argv: Vec<String>,
    /// Working directory; the agent's own (the container's working dir) when absent.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Set on top of the agent's environment (minus its `SANDBOXD_*` variables).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Whether stdin frames follow; otherwise the process's stdin is `/dev/null`.
    #[serde(default)]
    pub stdin: bool,
    /// The process group is killed this long after the start.
    pub timeout_ms: u64,
    /// Bytes forwarded per output stream; the rest is counted and dropped.
    pub output_limit: u64,
}

/// [`Event::Exited`](super::Event::Exited).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitReport {
    /// Set when the process exited on its own.
    pub exit_code: Option<i32>,
    /// Set when the process was killed by a signal.
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// The kernel's OOM killer fired in the sandbox while the process ran, and it died by a signal.
    pub oom_killed: bool,
    /// All bytes the process wrote to stdout, including those over the limit.
    pub stdout_bytes: u64,
    /// All bytes the process wrote to stderr, including those over the limit.
    pub stderr_bytes: u64,
    pub duration_ms: u64,
}
