//! The JSON control messages.
//!
//! Compatibility rules: every op and event is a variant of an internally tagged enum, so a new
//! one is an added variant that leaves the encoding of the others unchanged; fields added to an
//! existing message get `#[serde(default)]`, and nobody uses `deny_unknown_fields`, so either
//! side may be older than the other. An agent answers an op it does not know with an
//! [`ERROR_BAD_REQUEST`] error and stays usable; [`Event::Hello`] carries the version.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The protocol version an agent announces in [`Event::Hello`].
pub const PROTOCOL_VERSION: u32 = 1;
/// The largest stdin frame the service sends.
pub const STDIN_CHUNK_LEN: usize = 64 * 1024;
/// The largest stdout/stderr frame the agent sends.
pub const OUTPUT_CHUNK_LEN: usize = 32 * 1024;

/// [`Event::Error`] code: the request could not be decoded or is invalid.
pub const ERROR_BAD_REQUEST: &str = "bad_request";
/// [`Event::Error`] code: the program could not be started (missing, not executable, bad cwd).
pub const ERROR_SPAWN_FAILED: &str = "spawn_failed";

/// Service to agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Answered with [`Event::Pong`].
    Ping,
    /// Runs a process: [`Event::Started`], output frames, then [`Event::Exited`].
    Exec(ExecRequest),
}

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

/// Agent to service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// The first frame on every connection the agent opens.
    Hello {
        version: u32,
        pid: u32,
    },
    Pong,
    Started {
        pid: u32,
    },
    Exited(ExitReport),
    Error {
        code: String,
        message: String,
    },
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_are_tagged_by_op() {
        let exec = Request::Exec(ExecRequest {
            argv: vec!["echo".into(), "hi".into()],
            env: BTreeMap::from([("A".into(), "1".into())]),
            timeout_ms: 1000,
            output_limit: 10,
            ..ExecRequest::default()
        });
        assert_eq!(
            serde_json::to_value(&exec).unwrap(),
            json!({"op": "exec", "argv": ["echo", "hi"], "cwd": null, "env": {"A": "1"},
                   "stdin": false, "timeout_ms": 1000, "output_limit": 10})
        );
        assert_eq!(
            serde_json::to_value(Request::Ping).unwrap(),
            json!({"op": "ping"})
        );
    }

    #[test]
    fn optional_exec_fields_default_and_unknown_fields_are_ignored() {
        let request: Request = serde_json::from_value(json!({
            "op": "exec", "argv": ["true"], "timeout_ms": 5, "output_limit": 6, "added_later": 1
        }))
        .unwrap();
        let Request::Exec(exec) = request else {
            panic!("not an exec: {request:?}")
        };
        assert_eq!((exec.cwd, exec.env.len(), exec.stdin), (None, 0, false));
    }

    #[test]
    fn unknown_op_is_a_decode_error() {
        assert!(serde_json::from_value::<Request>(json!({"op": "read_file"})).is_err());
    }

    #[test]
    fn events_are_tagged_by_type_with_flat_fields() {
        let exited = Event::Exited(ExitReport {
            exit_code: Some(3),
            stdout_bytes: 7,
            ..ExitReport::default()
        });
        assert_eq!(
            serde_json::to_value(&exited).unwrap(),
            json!({"type": "exited", "exit_code": 3, "signal": null, "timed_out": false,
                   "oom_killed": false, "stdout_bytes": 7, "stderr_bytes": 0, "duration_ms": 0})
        );
        let hello: Event = serde_json::from_str(r#"{"type":"hello","version":1,"pid":7}"#).unwrap();
        assert_eq!(hello, Event::Hello { version: 1, pid: 7 });
        let error = Event::Error {
            code: ERROR_SPAWN_FAILED.into(),
            message: "x".into(),
        };
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"type": "error", "code": "spawn_failed", "message": "x"})
        );
    }
}
