//! The messages of code contexts: a Jupyter kernel per context, which the agent starts on a
//! context's first run and speaks the Jupyter messaging protocol to. The service names the
//! kernel's command (from the runtime's config); the agent holds the kernels.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// In a kernel's command, what the agent replaces with its connection file's path.
pub const KERNEL_CONNECTION_FILE: &str = "{connection_file}";
/// The longest code a run may carry (it travels in one JSON frame).
pub const MAX_KERNEL_CODE_LEN: usize = 512 * 1024;
/// The largest single result forwarded (a MIME bundle, all its entries): it travels in one
/// JSON frame. A larger one is dropped and counted like output over the limit.
pub const MAX_KERNEL_RESULT_LEN: usize = 900 * 1024;

/// [`Request::KernelRun`](super::Request::KernelRun): runs `code` in the kernel of `context`, starting one first if
/// the context has none (or its kernel died). Answered with [`Event::KernelStream`](super::Event::KernelStream),
/// [`Event::KernelResult`](super::Event::KernelResult) and [`Event::KernelError`](super::Event::KernelError) as they happen, then
/// [`Event::KernelEnd`](super::Event::KernelEnd).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelRunRequest {
    /// The service's id of the context; the agent keeps one kernel per id.
    pub context: String,
    /// The context's language, which the agent keeps beside its kernel so that the service
    /// can learn its contexts again after a restart ([`Request::KernelList`](super::Request::KernelList)).
    #[serde(default)]
    pub language: String,
    /// The command that starts the kernel, holding [`KERNEL_CONNECTION_FILE`].
    pub kernel: Vec<String>,
    /// Where a newly started kernel runs.
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub code: String,
    /// The kernel is interrupted (SIGINT) this long after the run starts, and restarted if the
    /// interrupt does not end the run.
    pub timeout_ms: u64,
    /// Bytes forwarded in all (stream text and results); the rest is counted and dropped.
    pub output_limit: u64,
}

/// One context the agent holds ([`Event::Kernels`](super::Event::Kernels)): named in a run, not shut down
/// since.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelContext {
    pub context: String,
    pub language: String,
    #[serde(default)]
    pub cwd: Option<String>,
}

/// Whether `id` may name a context: 1 to 64 letters, digits, '-' and '_' (the service makes
/// `ctx-` and hex, or a language's name).
pub fn valid_context_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A display or final value: its MIME bundle, as Jupyter's `display_data`/`execute_result`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelResult {
    /// MIME type -> content (a string; base64 for binary types; JSON for application/json).
    pub data: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// The value of the run's last expression (an `execute_result`), not a display.
    #[serde(default)]
    pub is_main_result: bool,
}

/// An exception the code raised, as Jupyter's `error`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelError {
    pub name: String,
    pub value: String,
    pub traceback: Vec<String>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelOutcome {
    /// The code ran to its end.
    #[default]
    Ok,
    /// The code raised an exception ([`Event::KernelError`](super::Event::KernelError) says which).
    Error,
    /// The timeout interrupted it.
    TimedOut,
    /// The kernel exited or was killed while it ran.
    KernelDied,
}

/// [`Event::KernelEnd`](super::Event::KernelEnd).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelRunEnd {
    pub outcome: KernelOutcome,
    /// Jupyter's execution counter after the run.
    #[serde(default)]
    pub execution_count: Option<u32>,
    /// A kernel was started for this run (the context's first, or after its kernel died).
    #[serde(default)]
    pub started: bool,
    /// The kernel was restarted after the run: the interrupt did not stop it, or it died.
    /// The context's state (variables, imports) is gone.
    #[serde(default)]
    pub restarted: bool,
    /// How the kernel ended, when it died: its exit code or the signal that killed it.
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
    /// Output and results over the limit were dropped: this many bytes.
    #[serde(default)]
    pub dropped_bytes: u64,
    pub duration_ms: u64,
}

/// What a MIME bundle counts against a run's output limit: the length of its entries.
pub fn bundle_size(data: &BTreeMap<String, serde_json::Value>) -> u64 {
    data.values()
        .map(|value| match value {
            serde_json::Value::String(text) => text.len() as u64,
            other => other.to_string().len() as u64,
        })
        .sum()
}
