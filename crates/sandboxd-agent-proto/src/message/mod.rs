//! The JSON control messages: the two enums that travel, [`Request`] and [`Event`]. They hold
//! the messages of the connection itself (hello, ping, cancel, errors, exec); every other
//! operation is a variant of its topic's enums (`FilesRequest` and `FilesEvent` in `files.rs`,
//! and so for `process`, `ports`, `kernel`), which the two carry untagged: a topic's message
//! travels as its own tagged object, the same bytes as if it were a variant here. So an
//! operation is added in its topic's file alone, with its wire pin beside it.
//!
//! Compatibility rules: every op and event is a variant of an internally tagged enum, so a new one
//! is an added variant that leaves the encoding of the others unchanged; fields added to an
//! existing message get `#[serde(default)]`, and nobody uses `deny_unknown_fields`, so either side
//! may be older than the other. An agent answers an op it does not know with an
//! [`ERROR_BAD_REQUEST`](crate::error_code::ERROR_BAD_REQUEST) error and stays usable;
//! [`Event::Hello`] carries the version. Every message is pinned to its bytes: the topics' in their
//! files and the connection's own below, each through [`Request`] and [`Event`] (see `pins.rs`).

mod control;
mod exec;
mod files;
pub mod kernel;
#[cfg(test)]
mod pins;
mod ports;
mod process;
#[cfg(test)]
mod tests;

pub use control::{AGENT_NO_OOM_KILLER_FLAG, AGENT_SPARES, AGENT_WAKE_FILE, PROTOCOL_VERSION};
pub use exec::{ExecRequest, ExitReport};
pub use files::{
    ArchiveSummary, ChangeKind, DirEntry, EntryKind, FileChange, FileStat, FilesEvent, FilesRequest,
};
pub use kernel::{KernelEvent, KernelRequest};
pub use ports::{ListeningPort, PortsEvent, PortsRequest};
pub use process::{ProcessEvent, ProcessInfo, ProcessRequest, ProcessStartRequest, TermSize};

use crate::error_code::ErrorCode;
use crate::secret::AgentSecret;
use serde::{Deserialize, Serialize};

/// Service to agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Answered with [`Event::Pong`].
    Ping,
    /// The service closes this idle connection by choice, and stays: the agent dials a
    /// replacement at once instead of waiting for its word, as after the service went away.
    /// Not answered.
    Dismiss,
    /// Runs a process: output frames, then [`Event::Exited`].
    Exec(ExecRequest),
    /// Cancels the upload in progress on this connection, answered with an
    /// [`ERROR_CANCELLED`](crate::error_code::ERROR_CANCELLED) error once its temporary file is
    /// gone; ignored otherwise.
    Cancel,
    /// The first frame on a connection the service opened to a listening agent (`--listen`,
    /// for platforms that reach into the sandbox instead of letting it dial out): the service
    /// proves itself with the sandbox's secret, answered with [`Event::Hello`]; a wrong one
    /// closes the connection. The first secret a listening agent is sent becomes its own:
    /// nothing runs in the sandbox before the service's first connection, so no sandbox
    /// process can be first.
    Claim { secret: AgentSecret },
    /// The files requests, untagged: they carry their own `op`.
    #[serde(untagged)]
    Files(FilesRequest),
    /// The process requests, untagged: they carry their own `op`.
    #[serde(untagged)]
    Process(ProcessRequest),
    /// The ports requests, untagged: they carry their own `op`.
    #[serde(untagged)]
    Ports(PortsRequest),
    /// The kernel requests, untagged: they carry their own `op`.
    #[serde(untagged)]
    Kernel(KernelRequest),
}

/// Agent to service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// The first frame on every connection the agent opens. `secret` proves the dialer is
    /// the sandbox's agent; agents before protocol version 2 send none.
    Hello {
        version: u32,
        pid: u32,
        #[serde(default)]
        secret: Option<AgentSecret>,
    },
    Pong,
    /// Sent before the output by agents of earlier builds, which may still run in sandboxes
    /// that a restarted service takes back; ignored.
    Started {
        pid: u32,
    },
    Exited(ExitReport),
    /// The upload's temporary file is ready for the bytes.
    WriteReady,
    Error {
        code: ErrorCode,
        message: String,
    },
    /// Sent once per stream of an exec, after its exit and before its tail: the stream's
    /// output frames that follow come after `bytes` bytes left out past the head (the output
    /// went past the exec's `output_limit`; its head and tail are kept).
    OutputOmitted {
        stderr: bool,
        bytes: u64,
    },
    /// The files answers, untagged: they carry their own `type`.
    #[serde(untagged)]
    Files(FilesEvent),
    /// The process answers, untagged: they carry their own `type`.
    #[serde(untagged)]
    Process(ProcessEvent),
    /// The ports answers, untagged: they carry their own `type`.
    #[serde(untagged)]
    Ports(PortsEvent),
    /// The kernel answers, untagged: they carry their own `type`.
    #[serde(untagged)]
    Kernel(KernelEvent),
}

/// Each topic's messages are the top enums' messages: a writer passes a topic's request or
/// event where a [`Request`] or [`Event`] is taken.
macro_rules! topic {
    ($topic:ident, $request:ident, $event:ident) => {
        impl From<$request> for Request {
            fn from(request: $request) -> Self {
                Request::$topic(request)
            }
        }
        impl From<$event> for Event {
            fn from(event: $event) -> Self {
                Event::$topic(event)
            }
        }
    };
}
topic!(Files, FilesRequest, FilesEvent);
topic!(Process, ProcessRequest, ProcessEvent);
topic!(Ports, PortsRequest, PortsEvent);
topic!(Kernel, KernelRequest, KernelEvent);

#[cfg(test)]
mod wire {
    //! The connection's own messages pinned to their bytes (see `pins.rs`); the topics' are
    //! in their files.

    use super::*;
    use crate::message::pins::{self, exec, exit};

    fn secret() -> AgentSecret {
        AgentSecret::from_bytes(&[0x5a; 32])
    }

    /// Every request, each with the bytes it travels as.
    fn requests() -> Vec<(Request, &'static str)> {
        vec![
            (Request::Ping, r#"{"op":"ping"}"#),
            (Request::Dismiss, r#"{"op":"dismiss"}"#),
            (
                Request::Exec(exec()),
                r#"{"op":"exec","argv":["sh","-c","true"],"cwd":"/w","env":{"A":"1"},"stdin":true,"timeout_ms":1000,"output_limit":64}"#,
            ),
            (Request::Cancel, r#"{"op":"cancel"}"#),
            (
                Request::Claim { secret: secret() },
                r#"{"op":"claim","secret":"5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"}"#,
            ),
        ]
    }

    /// Every event, each with the bytes it travels as.
    fn events() -> Vec<(Event, &'static str)> {
        vec![
            (
                Event::Hello {
                    version: 2,
                    pid: 7,
                    secret: Some(secret()),
                },
                r#"{"type":"hello","version":2,"pid":7,"secret":"5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"}"#,
            ),
            (
                Event::Hello {
                    version: 1,
                    pid: 7,
                    secret: None,
                },
                r#"{"type":"hello","version":1,"pid":7,"secret":null}"#,
            ),
            (Event::Pong, r#"{"type":"pong"}"#),
            (Event::Started { pid: 3 }, r#"{"type":"started","pid":3}"#),
            (
                Event::Exited(exit()),
                r#"{"type":"exited","exit_code":3,"signal":null,"timed_out":true,"oom_killed":false,"stdout_bytes":7,"stderr_bytes":8,"duration_ms":9}"#,
            ),
            (Event::WriteReady, r#"{"type":"write_ready"}"#),
            (
                Event::Error {
                    code: ErrorCode::SpawnFailed,
                    message: "no such file".into(),
                },
                r#"{"type":"error","code":"spawn_failed","message":"no such file"}"#,
            ),
            (
                // A code this build does not know is kept as sent, both ways.
                Event::Error {
                    code: ErrorCode::Other("made_up".into()),
                    message: "m".into(),
                },
                r#"{"type":"error","code":"made_up","message":"m"}"#,
            ),
            (
                Event::OutputOmitted {
                    stderr: true,
                    bytes: 13,
                },
                r#"{"type":"output_omitted","stderr":true,"bytes":13}"#,
            ),
        ]
    }

    /// Each request encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_request_is_the_same_bytes() {
        let tags = pins::requests(requests(), |message| match message {
            Request::Ping => "ping",
            Request::Dismiss => "dismiss",
            Request::Exec(_) => "exec",
            Request::Cancel => "cancel",
            Request::Claim { .. } => "claim",
            Request::Files(_) | Request::Process(_) | Request::Ports(_) | Request::Kernel(_) => {
                "pinned in its topic's file"
            }
        });
        assert_eq!(tags.len(), 5, "{tags:?}");
    }

    /// Each event encodes to its bytes and decodes back to itself, and none is left out.
    #[test]
    fn every_event_is_the_same_bytes() {
        let tags = pins::events(events(), |message| match message {
            Event::Hello { .. } => "hello",
            Event::Pong => "pong",
            Event::Started { .. } => "started",
            Event::Exited(_) => "exited",
            Event::WriteReady => "write_ready",
            Event::Error { .. } => "error",
            Event::OutputOmitted { .. } => "output_omitted",
            Event::Files(_) | Event::Process(_) | Event::Ports(_) | Event::Kernel(_) => {
                "pinned in its topic's file"
            }
        });
        assert_eq!(tags.len(), 7, "{tags:?}");
    }
}
