//! The activity log: every operation on a session, whoever made it, with what was addressed and
//! how it went — never the payload (no file contents, output, stdin, environment values, or
//! command arguments beyond the program name).

use crate::{ApiError, Service};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::time::Instant;

pub use sandboxd_api::CLIENT_HEADER;

/// Who made a request: the credential and the interface it came through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// `admin` for the service token; later, a tenant's name.
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

impl<S: Send + Sync> FromRequestParts<S> for Actor {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Actor, Infallible> {
        let interface = parts
            .headers
            .get(CLIENT_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| matches!(*v, "cli" | "dashboard" | "mcp"))
            .unwrap_or("api")
            .to_string();
        let principal = parts
            .extensions
            .get::<crate::auth::Principal>()
            .map_or_else(|| "admin".to_string(), crate::auth::Principal::name);
        Ok(Actor {
            principal,
            interface,
        })
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
    service: Service,
    session_id: String,
    actor: Actor,
    action: &'static str,
    pub target: String,
    started: Instant,
    pub bytes: Option<u64>,
    pub exit_code: Option<i32>,
    recorded: bool,
}

impl PendingEntry {
    pub fn new(
        service: &Service,
        session_id: &str,
        actor: Actor,
        action: &'static str,
        target: &str,
    ) -> PendingEntry {
        service.sessions().touch(session_id);
        PendingEntry {
            service: service.clone(),
            session_id: session_id.to_string(),
            actor,
            action,
            target: target.to_string(),
            started: Instant::now(),
            bytes: None,
            exit_code: None,
            recorded: false,
        }
    }

    /// Counts as activity on the session, keeping it from idling out.
    pub fn touch(&self) {
        self.service.sessions().touch(&self.session_id);
    }

    /// Records the entry, failed when `error` says why, unless it was recorded already.
    pub fn record(&mut self, error: Option<String>) {
        if std::mem::replace(&mut self.recorded, true) {
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
        self.service.record(
            &self.session_id,
            &self.actor,
            self.action,
            &self.target,
            outcome,
        );
    }

    /// Records the failure and passes it on.
    pub fn fail(&mut self, error: ApiError) -> ApiError {
        self.record(Some(error.to_string()));
        error
    }

    /// Records how `result` went and passes it on.
    pub fn finish<T>(&mut self, result: Result<T, ApiError>) -> Result<T, ApiError> {
        self.record(result.as_ref().err().map(ToString::to_string));
        result
    }
}

impl Drop for PendingEntry {
    fn drop(&mut self) {
        self.record(Some("interrupted: the client went away".into()));
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
