//! Code contexts: stateful code execution in a session, through a Jupyter kernel of the
//! session's runtime. Variables, imports and open files persist between runs of a context;
//! each run streams what the code prints, its rich results (MIME bundles) and its errors.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `POST /v1/sessions/{id}/contexts`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    /// A language the session's runtime has a kernel for (its `kernels`); when absent, python
    /// if it has that kernel, else its first.
    #[serde(default)]
    pub language: Option<String>,
    /// Where the kernel starts; the sandbox's working directory when absent.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// A code context of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ContextInfo {
    /// Its id; a language's default context has the language's name as its id.
    pub id: String,
    pub language: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// Runs so far.
    pub runs: u64,
    /// Times its kernel was restarted (asked for, after a timeout the interrupt did not end,
    /// or after the kernel died): each time its state was lost.
    pub restarts: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ContextList {
    pub contexts: Vec<ContextInfo>,
}

/// `POST /v1/sessions/{id}/code` and `POST /v1/sessions/{id}/contexts/{context}/run`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RunCode {
    pub code: String,
    /// The context to run in; the language's default context (made on first use) when absent.
    /// Ignored by the context's own run route.
    #[serde(default)]
    pub context: Option<String>,
    /// For the default context: the language (when absent, python if the runtime has that
    /// kernel, else its first).
    #[serde(default)]
    pub language: Option<String>,
    /// For the default context, when this run makes it: its working directory (the sandbox's
    /// working directory when absent). A default context made already keeps its own.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The run is interrupted after this long (the policy's default when absent); the kernel
    /// is restarted only if the interrupt does not end it.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// One thing a run produced, in order; `end` is last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CodeEvent {
    Stdout {
        text: String,
    },
    Stderr {
        text: String,
    },
    /// A display or the value of the code's last expression: its MIME bundle, as Jupyter
    /// defines it (`text/plain`, `image/png` and other binary types base64, `image/svg+xml`,
    /// `text/html`, `application/json`, `text/markdown`, `text/latex`, ...).
    Result(CodeResult),
    /// An exception the code raised (also `KeyboardInterrupt` when the timeout interrupted it).
    Error(CodeError),
    End(CodeEnd),
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct CodeResult {
    /// MIME type -> content.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub data: BTreeMap<String, serde_json::Value>,
    /// The value of the run's last expression, rather than a display.
    pub is_main_result: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct CodeError {
    pub name: String,
    pub value: String,
    /// The traceback's lines (with the kernel's terminal colour codes).
    pub traceback: Vec<String>,
}

/// How a run went.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct CodeEnd {
    pub context: String,
    pub language: String,
    /// `ok`, `error` (an exception), `timed_out` (interrupted by the timeout) or
    /// `kernel_died` (the kernel exited or was killed while it ran).
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_count: Option<u32>,
    /// The kernel was restarted after this run: the context's state is gone.
    pub restarted: bool,
    /// Output or results over the policy's `max_output_bytes` were left out.
    pub truncated: bool,
    /// How many bytes were left out.
    pub dropped_bytes: u64,
    /// How the kernel ended, when it died.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub duration_ms: u64,
}
