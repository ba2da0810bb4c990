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

/// [`KernelRequest::KernelRun`]: runs `code` in the kernel of `context`, starting one first if
/// the context has none (or its kernel died). Answered with [`KernelEvent::KernelStream`],
/// [`KernelEvent::KernelResult`] and [`KernelEvent::KernelError`] as they happen, then
/// [`KernelEvent::KernelEnd`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelRunRequest {
    /// The service's id of the context; the agent keeps one kernel per id.
    pub context: String,
    /// The context's language, which the agent keeps beside its kernel so that the service
    /// can learn its contexts again after a restart ([`KernelRequest::KernelList`]).
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

/// One context the agent holds ([`KernelEvent::Kernels`]): named in a run, not shut down
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
    /// The code raised an exception ([`KernelEvent::KernelError`] says which).
    Error,
    /// The timeout interrupted it.
    TimedOut,
    /// The kernel exited or was killed while it ran.
    KernelDied,
}

/// [`KernelEvent::KernelEnd`].
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

/// The kernel requests, a part of [`Request`](super::Request).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum KernelRequest {
    /// See [`KernelRunRequest`].
    KernelRun(KernelRunRequest),
    /// Stops the kernel of `context` (SIGKILL to its group) and forgets it; the context's
    /// next run starts a new one: [`KernelEvent::KernelStopped`].
    KernelShutdown { context: String },
    /// The contexts the agent holds kernels for (started or to be started), so a restarted
    /// service learns them again: [`KernelEvent::Kernels`].
    KernelList,
    /// Keeps a context the service made, before its first run starts a kernel for it (or after a
    /// restart stopped its kernel), so it is listed: [`KernelEvent::Kernels`], or
    /// [`ERROR_TOO_MANY_PROCESSES`](crate::error_code::ERROR_TOO_MANY_PROCESSES) when the agent
    /// holds as many contexts as it may.
    KernelDeclare(KernelContext),
}

/// What the agent answers to [`KernelRequest`]s, a part of [`Event`](super::Event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum KernelEvent {
    /// Text the running code wrote: `name` is `stdout` or `stderr`.
    KernelStream {
        name: String,
        text: String,
    },
    KernelResult(KernelResult),
    KernelError(KernelError),
    /// The run is over.
    KernelEnd(KernelRunEnd),
    /// `existed` when the context had a kernel.
    KernelStopped {
        existed: bool,
    },
    /// The answer to [`KernelRequest::KernelList`]: at most the agent's limit of kernels.
    Kernels {
        kernels: Vec<KernelContext>,
    },
}

#[cfg(test)]
mod wire {
    //! This topic's messages pinned to their bytes (see `pins.rs`).

    use super::*;
    use crate::message::pins;
    use std::collections::BTreeMap;

    fn context() -> KernelContext {
        KernelContext {
            context: "ctx-1".into(),
            language: "python".into(),
            cwd: Some("/w".into()),
        }
    }

    /// Every request, each with the bytes it travels as.
    fn requests() -> Vec<(KernelRequest, &'static str)> {
        vec![
            (
                KernelRequest::KernelRun(KernelRunRequest {
                    context: "ctx-1".into(),
                    language: "python".into(),
                    kernel: vec!["k".into(), "{connection_file}".into()],
                    cwd: None,
                    env: BTreeMap::from([("B".into(), "2".into())]),
                    code: "1+1".into(),
                    timeout_ms: 10,
                    output_limit: 20,
                }),
                r#"{"op":"kernel_run","context":"ctx-1","language":"python","kernel":["k","{connection_file}"],"cwd":null,"env":{"B":"2"},"code":"1+1","timeout_ms":10,"output_limit":20}"#,
            ),
            (
                KernelRequest::KernelShutdown {
                    context: "ctx-1".into(),
                },
                r#"{"op":"kernel_shutdown","context":"ctx-1"}"#,
            ),
            (KernelRequest::KernelList, r#"{"op":"kernel_list"}"#),
            (
                KernelRequest::KernelDeclare(context()),
                r#"{"op":"kernel_declare","context":"ctx-1","language":"python","cwd":"/w"}"#,
            ),
        ]
    }

    /// Every event, each with the bytes it travels as.
    fn events() -> Vec<(KernelEvent, &'static str)> {
        vec![
            (
                KernelEvent::KernelStream {
                    name: "stdout".into(),
                    text: "hi\n".into(),
                },
                r#"{"type":"kernel_stream","name":"stdout","text":"hi\n"}"#,
            ),
            (
                KernelEvent::KernelResult(KernelResult {
                    data: BTreeMap::from([
                        ("text/plain".into(), serde_json::json!("2")),
                        ("application/json".into(), serde_json::json!({"a": [1]})),
                    ]),
                    metadata: serde_json::Map::from_iter([("m".into(), serde_json::json!(true))]),
                    is_main_result: true,
                }),
                r#"{"type":"kernel_result","data":{"application/json":{"a":[1]},"text/plain":"2"},"metadata":{"m":true},"is_main_result":true}"#,
            ),
            (
                KernelEvent::KernelError(KernelError {
                    name: "ValueError".into(),
                    value: "bad".into(),
                    traceback: vec!["line 1".into()],
                }),
                r#"{"type":"kernel_error","name":"ValueError","value":"bad","traceback":["line 1"]}"#,
            ),
            (
                KernelEvent::KernelEnd(KernelRunEnd {
                    outcome: KernelOutcome::KernelDied,
                    execution_count: Some(4),
                    started: true,
                    restarted: true,
                    exit_code: None,
                    signal: Some(9),
                    dropped_bytes: 14,
                    duration_ms: 15,
                }),
                r#"{"type":"kernel_end","outcome":"kernel_died","execution_count":4,"started":true,"restarted":true,"exit_code":null,"signal":9,"dropped_bytes":14,"duration_ms":15}"#,
            ),
            (
                KernelEvent::KernelStopped { existed: true },
                r#"{"type":"kernel_stopped","existed":true}"#,
            ),
            (
                KernelEvent::Kernels {
                    kernels: vec![context()],
                },
                r#"{"type":"kernels","kernels":[{"context":"ctx-1","language":"python","cwd":"/w"}]}"#,
            ),
        ]
    }

    /// Each request encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_request_is_the_same_bytes() {
        let tags = pins::requests(requests(), |message| match message {
            KernelRequest::KernelRun(_) => "kernel_run",
            KernelRequest::KernelShutdown { .. } => "kernel_shutdown",
            KernelRequest::KernelList => "kernel_list",
            KernelRequest::KernelDeclare(_) => "kernel_declare",
        });
        assert_eq!(tags.len(), 4, "{tags:?}");
    }

    /// Each event encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_event_is_the_same_bytes() {
        let tags = pins::events(events(), |message| match message {
            KernelEvent::KernelStream { .. } => "kernel_stream",
            KernelEvent::KernelResult(_) => "kernel_result",
            KernelEvent::KernelError(_) => "kernel_error",
            KernelEvent::KernelEnd(_) => "kernel_end",
            KernelEvent::KernelStopped { .. } => "kernel_stopped",
            KernelEvent::Kernels { .. } => "kernels",
        });
        assert_eq!(tags.len(), 6, "{tags:?}");
    }
}
