//! The activity log: every operation on a session, whoever made it, with what was addressed and
//! how it went — never the payload (no file contents, output, stdin, environment values, cwd,
//! or command arguments: a command is named by its plain program name or a fixed word).

use crate::error::Error;
use crate::state::auth::Principal;
use crate::state::sessions::{rfc3339, Sessions};
use sandboxd_api::ActivityEntry;
use sandboxd_backend::BackendError;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use time::OffsetDateTime;

/// Milliseconds since `started`, for an entry's duration (saturating: an entry never lasts
/// 584 million years).
pub(crate) fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The interface a request came through, as the activity log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    Api,
    Cli,
    Dashboard,
    Mcp,
    /// The E2B-compatible API (`sandboxd-e2b`), which the E2B SDKs speak.
    E2b,
}

impl Interface {
    pub fn name(self) -> &'static str {
        match self {
            Interface::Api => "api",
            Interface::Cli => "cli",
            Interface::Dashboard => "dashboard",
            Interface::Mcp => "mcp",
            Interface::E2b => "e2b",
        }
    }

    /// The interface a client names (`X-Sandboxd-Client`); anything else is the plain API.
    pub fn from_client_name(name: &str) -> Interface {
        match name {
            "cli" => Interface::Cli,
            "dashboard" => Interface::Dashboard,
            "mcp" => Interface::Mcp,
            _ => Interface::Api,
        }
    }
}

/// Who asks for an operation: the credential, and the interface it came through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub principal: Principal,
    pub interface: Interface,
}

impl Caller {
    pub fn new(principal: Principal, interface: Interface) -> Caller {
        Caller {
            principal,
            interface,
        }
    }

    pub fn actor(&self) -> Actor {
        Actor {
            principal: self.principal.name(),
            interface: self.interface.name().into(),
        }
    }
}

/// Who made an operation, as its activity entry names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// `admin` for the service token, `tenant:NAME` for a tenant's.
    pub principal: String,
    /// `api`, `cli`, `dashboard`, `mcp`, or `service` when the service itself acted.
    pub interface: String,
}

impl Actor {
    pub fn service() -> Actor {
        Actor {
            principal: "sandboxd".into(),
            interface: "service".into(),
        }
    }
}

/// How an operation went. Sizes and codes only, never content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// `ok`, `error`, `interrupted` (a command ended by SIGINT: Ctrl+C, Stop), or
    /// `cancelled` (its caller abandoned it).
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    pub duration_ms: u64,
    /// The error code and message the caller got, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Outcome {
    pub fn ok(duration_ms: u64) -> Outcome {
        Outcome {
            status: "ok".into(),
            duration_ms,
            ..Outcome::default()
        }
    }

    pub fn failed(duration_ms: u64, error: impl Into<String>) -> Outcome {
        Outcome {
            status: "error".into(),
            duration_ms,
            error: Some(error.into()),
            ..Outcome::default()
        }
    }

    pub fn with_exit_code(mut self, code: Option<i32>) -> Outcome {
        self.exit_code = code;
        self
    }

    pub fn with_bytes(mut self, bytes: u64) -> Outcome {
        self.bytes = Some(bytes);
        self
    }
}

/// How much of a message from the agent reaches a client or the log.
const MAX_AGENT_TEXT_CHARS: usize = 512;

/// Text from the agent is untrusted: without control characters, and short.
pub fn agent_text(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .take(MAX_AGENT_TEXT_CHARS)
        .collect()
}

/// An operation's activity entry, recorded exactly once: when the operation ends, or when it
/// is dropped unfinished (a download or stream whose client went away).
pub struct PendingEntry {
    sessions: Sessions,
    session_id: String,
    actor: Actor,
    action: &'static str,
    pub target: String,
    started: Instant,
    pub bytes: Option<u64>,
    pub exit_code: Option<i32>,
    ended: bool,
    /// `error` when it fails, unless its caller abandoned it.
    status: &'static str,
}

impl PendingEntry {
    pub fn new(
        sessions: &Sessions,
        session_id: &str,
        actor: Actor,
        action: &'static str,
        target: &str,
    ) -> PendingEntry {
        sessions.touch(session_id);
        PendingEntry {
            sessions: sessions.clone(),
            session_id: session_id.to_string(),
            actor,
            action,
            target: target.to_string(),
            started: Instant::now(),
            bytes: None,
            exit_code: None,
            ended: false,
            status: "error",
        }
    }

    /// Counts as activity on the session, keeping it from idling out.
    pub fn touch(&self) {
        self.sessions.touch(&self.session_id);
    }

    /// Records the entry, failed when `error` says why, unless it was recorded already.
    pub fn end(&mut self, error: Option<String>) {
        let status = if error.is_some() { self.status } else { "ok" };
        self.record(status, error);
    }

    /// Records how a command ended: `interrupted` when SIGINT ended it (Ctrl+C, Stop), failed
    /// when its timeout or the sandbox's memory limit killed it, else ok with its exit code.
    pub fn end_command(&mut self, ending: &CommandEnding) {
        self.exit_code = ending.exit_code;
        if ending.timed_out {
            self.end(Some("timed out".into()));
        } else if ending.oom_killed {
            self.end(Some("killed: out of memory".into()));
        } else if ending.signal == Some(SIGINT) || ending.exit_code == Some(128 + SIGINT) {
            self.record("interrupted", None);
        } else {
            self.end(None);
        }
    }

    fn record(&mut self, status: &str, error: Option<String>) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.touch();
        let elapsed = elapsed_ms(self.started);
        let mut outcome = Outcome {
            status: status.into(),
            duration_ms: elapsed,
            error,
            ..Outcome::default()
        }
        .with_exit_code(self.exit_code);
        if let Some(bytes) = self.bytes {
            outcome = outcome.with_bytes(bytes);
        }
        append(
            &self.sessions,
            &self.session_id,
            &self.actor,
            self.action,
            &self.target,
            outcome,
        );
    }

    /// Records the failure and passes it on.
    pub fn fail(&mut self, error: Error) -> Error {
        self.end(Some(error_text(&error)));
        error
    }

    /// Records how `result` went and passes it on.
    pub fn finish<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        self.end(result.as_ref().err().map(error_text));
        result
    }
}

const SIGINT: i32 = 2;

/// How a command ended, as exec and the process API report it.
pub struct CommandEnding {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub oom_killed: bool,
}

impl Drop for PendingEntry {
    /// An operation dropped unfinished was cancelled by its caller: the client went away, or
    /// a face abandoned it on the client's word (an MCP cancellation or timeout).
    fn drop(&mut self) {
        if !self.ended {
            self.status = CANCELLED;
        }
        self.end(Some(
            "cancelled: the client went away or cancelled the call".into(),
        ));
    }
}

/// The status of an operation its caller abandoned.
const CANCELLED: &str = "cancelled";

/// Adds an entry to a session's activity log: what was addressed and how it went, never a
/// payload.
pub fn append(
    sessions: &Sessions,
    session_id: &str,
    actor: &Actor,
    action: &str,
    target: &str,
    outcome: Outcome,
) {
    let entry = ActivityEntry {
        at: rfc3339(OffsetDateTime::now_utc()),
        principal: actor.principal.clone(),
        interface: actor.interface.clone(),
        action: action.to_string(),
        target: target.to_string(),
        status: outcome.status,
        exit_code: outcome.exit_code,
        bytes: outcome.bytes,
        duration_ms: outcome.duration_ms,
        error: outcome.error,
    };
    if let Err(e) = sessions.store().record_activity(session_id, &entry) {
        tracing::error!(session = session_id, action, error = %e, "cannot write the activity log");
    }
}

pub use crate::state::program::program_name;

/// What the log keeps of an error: its code, with the message only when the service wrote all
/// of it. A message that may quote the request or the sandbox (a cwd, an argument, an
/// environment name, the agent's words) is replaced by a fixed description.
pub fn error_text(error: &Error) -> String {
    let code = error.code();
    let description = match error.kind() {
        Error::BadRequest { .. } => "the request was refused",
        Error::NotFound(_) => "not found",
        Error::Forbidden { .. } => "the sandbox refused",
        Error::Conflict { .. } => "not possible on what is there",
        Error::LimitReached { .. } => "a limit was reached",
        Error::PayloadTooLarge(_) => "too large",
        Error::InsufficientStorage(_) => "the sandbox's filesystem is full",
        Error::Agent(_) => "the sandbox agent failed",
        Error::BadGateway { .. } => "the sandbox's port failed",
        Error::Backend(BackendError::AgentUnavailable(_)) => "the sandbox agent is unavailable",
        _ => return format!("{code}: {error}"),
    };
    format!("{code}: {description}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_that_may_quote_the_request_are_recorded_by_code() {
        let spawn = Error::bad_request("spawn_failed", "cannot run \"x\" in \"/secret-dir\"");
        assert_eq!(error_text(&spawn), "spawn_failed: the request was refused");
        let agent = Error::Agent("secret".into());
        assert_eq!(error_text(&agent), "agent_error: the sandbox agent failed");
        let full = Error::ServiceFull("all 4 sessions are in use".into());
        assert_eq!(error_text(&full), "service_full: all 4 sessions are in use");
    }
}
