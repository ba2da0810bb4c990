//! The activity log: every operation on a session, whoever made it, with what was addressed and
//! how it went — never the payload (no file contents, output, stdin, environment values, or
//! command arguments beyond the program name).

use crate::auth::Principal;
use crate::error::Error;
use crate::sessions::{rfc3339, Sessions};
use sandboxd_api::ActivityEntry;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use time::OffsetDateTime;

/// The interface a request came through, as the activity log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    Api,
    Cli,
    Dashboard,
    Mcp,
}

impl Interface {
    pub fn name(self) -> &'static str {
        match self {
            Interface::Api => "api",
            Interface::Cli => "cli",
            Interface::Dashboard => "dashboard",
            Interface::Mcp => "mcp",
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
    /// `ok` or `error`.
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
        }
    }

    /// Counts as activity on the session, keeping it from idling out.
    pub fn touch(&self) {
        self.sessions.touch(&self.session_id);
    }

    /// Records the entry, failed when `error` says why, unless it was recorded already.
    pub fn end(&mut self, error: Option<String>) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.touch();
        let elapsed = self.started.elapsed().as_millis() as u64;
        let mut outcome = match error {
            None => Outcome::ok(elapsed),
            Some(error) => Outcome::failed(elapsed, error),
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
        self.end(Some(error.to_string()));
        error
    }

    /// Records how `result` went and passes it on.
    pub fn finish<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        self.end(result.as_ref().err().map(ToString::to_string));
        result
    }
}

impl Drop for PendingEntry {
    fn drop(&mut self) {
        self.end(Some("interrupted: the client went away".into()));
    }
}

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

/// The program a command runs, as the log may name it: the first word that is not a variable
/// assignment, without its directory, cut short. Arguments are payload and never appear.
pub fn program_name(argv: &[String]) -> String {
    let words: Vec<&str> = match argv {
        [shell, flag, script] if flag == "-c" && shell.ends_with("sh") => {
            script.split_whitespace().collect()
        }
        _ => argv.iter().map(String::as_str).take(1).collect(),
    };
    let program = words
        .into_iter()
        .find(|w| !w.contains('='))
        .unwrap_or("")
        .rsplit('/')
        .next()
        .unwrap_or("");
    program
        .chars()
        .filter(|c| !c.is_control())
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn names_the_program_and_nothing_else() {
        assert_eq!(
            program_name(&argv(&["/usr/bin/python3", "secret.py", "--key=s3cret"])),
            "python3"
        );
        assert_eq!(
            program_name(&argv(&["/bin/sh", "-c", "TOKEN=s3cret curl -H x"])),
            "curl"
        );
        assert_eq!(
            program_name(&argv(&["/bin/sh", "-c", "echo s3cret > f"])),
            "echo"
        );
        assert_eq!(program_name(&argv(&["/bin/sh", "-c", "A=1 B=2"])), "");
    }
}
