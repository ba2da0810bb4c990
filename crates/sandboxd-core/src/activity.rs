//! The activity log: every operation on a session, whoever made it, with what was addressed and
//! how it went — never the payload (no file contents, output, stdin, environment values, cwd,
//! or command arguments: a command is named by its plain program name or a fixed word).

use crate::auth::Principal;
use crate::error::Error;
use crate::sessions::{rfc3339, Sessions};
use sandboxd_api::ActivityEntry;
use sandboxd_backend::BackendError;
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
        self.end(Some(error_text(&error)));
        error
    }

    /// Records how `result` went and passes it on.
    pub fn finish<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        self.end(result.as_ref().err().map(error_text));
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

/// The longest program name the log keeps; a longer one is recorded by a fixed word.
const MAX_PROGRAM_CHARS: usize = 64;

/// The program a command runs, as the log may name it: the base name of its first word (after
/// a shell string's leading `NAME=value` assignments) when that is a plain name, else a fixed
/// word: `shell` for a `sh -c` script, `program` for an argv. Arguments, environment values
/// and anything a shell would expand are payload and never appear.
pub fn program_name(argv: &[String]) -> String {
    let named = match argv {
        [shell, flag, script] if flag == "-c" && shell.ends_with("sh") => {
            let first = script
                .split_ascii_whitespace()
                .find(|word| !is_assignment(word));
            first.and_then(plain_program).unwrap_or("shell")
        }
        [program, ..] => plain_program(program).unwrap_or("program"),
        [] => "program",
    };
    named.to_string()
}

/// `word`'s base name, if the word is a plain path (nothing a shell would expand or quote, in
/// the directory either) and the name a plain name.
fn plain_program(word: &str) -> Option<&str> {
    let plain_byte = |b: u8| b.is_ascii_alphanumeric() || b"._+-".contains(&b);
    let name = word.rsplit('/').next().unwrap_or(word);
    let plain = word.bytes().all(|b| plain_byte(b) || b == b'/')
        && (1..=MAX_PROGRAM_CHARS).contains(&name.len())
        && name.bytes().any(|b| b != b'.');
    plain.then_some(name)
}

/// A shell variable assignment such as `TOKEN=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// What the log keeps of an error: its code, with the message only when the service wrote all
/// of it. A message that may quote the request or the sandbox (a cwd, an argument, an
/// environment name, the agent's words) is replaced by a fixed description.
pub fn error_text(error: &Error) -> String {
    let code = error.code();
    let description = match error {
        Error::BadRequest { .. } => "the request was refused",
        Error::NotFound(_) => "not found",
        Error::Forbidden { .. } => "the sandbox refused",
        Error::Conflict { .. } => "not possible on what is there",
        Error::LimitReached { .. } => "a limit was reached",
        Error::PayloadTooLarge(_) => "too large",
        Error::InsufficientStorage(_) => "the sandbox's filesystem is full",
        Error::Agent(_) => "the sandbox agent failed",
        Error::Backend(BackendError::AgentUnavailable(_)) => "the sandbox agent is unavailable",
        _ => return format!("{code}: {error}"),
    };
    format!("{code}: {description}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn names_the_program_and_nothing_else() {
        let name = |words: &[&str]| program_name(&argv(words));
        let sh = |script: &str| name(&["/bin/sh", "-c", script]);
        assert_eq!(
            name(&["/usr/bin/python3", "secret.py", "--key=s3cret"]),
            "python3"
        );
        assert_eq!(sh("TOKEN=s3cret curl -H x"), "curl");
        assert_eq!(sh("A=secret cmd"), "cmd");
        assert_eq!(sh("echo s3cret > f"), "echo");
        assert_eq!(sh("/usr/local/bin/node app.js"), "node");
    }

    #[test]
    fn what_is_not_a_plain_name_is_a_fixed_word() {
        let name = |words: &[&str]| program_name(&argv(words));
        let sh = |script: &str| name(&["/bin/sh", "-c", script]);
        assert_eq!(sh("curl${IFS}secret"), "shell");
        assert_eq!(sh("\"/usr/bin/py thon\" x"), "shell");
        assert_eq!(sh("'secret' x"), "shell");
        assert_eq!(sh("a\\b secret"), "shell");
        assert_eq!(sh("echo;secret"), "shell");
        assert_eq!(sh("A=1 B=2"), "shell");
        assert_eq!(sh("   "), "shell");
        assert_eq!(sh(&"x".repeat(65)), "shell");
        assert_eq!(name(&["/usr/bin/py thon", "x"]), "program");
        assert_eq!(name(&["/opt/secret dir/run"]), "program");
        assert_eq!(sh("\"/usr/bin/secret word\" x"), "shell");
        assert_eq!(sh("$HOME/bin/tool"), "shell");
        assert_eq!(name(&["$secret"]), "program");
        assert_eq!(name(&["my secret", "x"]), "program");
        assert_eq!(name(&["/tmp/"]), "program");
        assert_eq!(name(&[".."]), "program");
        assert_eq!(name(&[]), "program");
    }

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
