//! Tracked processes, which outlive the connection that started them: their start request,
//! their terminal's size and how the agent reports them.

use super::exec::{ExecRequest, ExitReport};
use serde::{Deserialize, Serialize};

/// [`ProcessRequest::ProcessStart`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessStartRequest {
    /// What to run. `timeout_ms` kills the process group as for an exec; `output_limit` is
    /// the ring's capacity: the newest bytes of output (stdout and stderr together) are kept.
    #[serde(flatten)]
    pub command: ExecRequest,
    /// How listings name the process (the service passes the program name).
    pub program: String,
    /// Runs it on a new terminal of this size, which is its stdin, stdout and stderr and its
    /// controlling terminal; `command.stdin` is then implied.
    #[serde(default)]
    pub pty: Option<TermSize>,
    /// Holds the process back instead of losing output: while what its attached streams have
    /// not sent yet fills the ring, its output is not read, so it waits on its writes (with
    /// none attached, once the ring is full, until one attaches or its timeout).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paced: bool,
}

/// A terminal's window size in character cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermSize {
    pub cols: u16,
    pub rows: u16,
}

/// A tracked process, as the agent reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// The agent's id for it; unlike the pid it is never reused within the sandbox.
    pub id: String,
    /// Also its process group id.
    pub pid: u32,
    pub program: String,
    pub pty: bool,
    /// Whether its stdin can be written now.
    pub stdin_open: bool,
    /// Unix time in milliseconds.
    pub started_at_ms: u64,
    pub timeout_ms: u64,
    /// The offset of the oldest byte of output still in the ring.
    pub output_start: u64,
    /// The bytes of output so far: the offset of the next byte.
    pub output_end: u64,
    /// Set once it has exited.
    #[serde(default)]
    pub exit: Option<ExitReport>,
}

/// The process requests, a part of [`Request`](super::Request).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ProcessRequest {
    /// Starts a process that outlives this connection, tracked by the agent with its output
    /// in a ring buffer: answered with [`ProcessEvent::Process`].
    ProcessStart(ProcessStartRequest),
    /// Answered with [`ProcessEvent::ProcessList`].
    ProcessList,
    /// Streams a tracked process's output from byte offset `since` (stdout and stderr count
    /// together): [`ProcessEvent::OutputFrom`], output frames (a terminal's are stdout frames),
    /// another `OutputFrom` after any gap, and once it has exited and everything was sent,
    /// [`ProcessEvent::Process`]. When `interactive`, stdin frames and
    /// [`ProcessRequest::ProcessResize`] may follow on the connection (both unanswered), and
    /// closing it before the process exits hangs the process up (SIGHUP to its group), as closing a
    /// terminal does.
    ProcessAttach {
        id: String,
        #[serde(default)]
        since: u64,
        #[serde(default)]
        interactive: bool,
    },
    /// Sends `signal` to the process's group: answered with [`ProcessEvent::Process`].
    ProcessSignal { id: String, signal: i32 },
    /// Writes the `len` bytes that follow in stdin frames to the process's stdin, then closes
    /// it if `close`: answered with [`ProcessEvent::StdinWritten`] once the process took them all.
    ProcessStdin {
        id: String,
        len: u64,
        #[serde(default)]
        close: bool,
    },
    /// Sets the window size of a process's terminal: answered with [`ProcessEvent::Process`].
    ProcessResize { id: String, size: TermSize },
    /// SIGKILLs every process in the sandbox but the agent and init, also those that left
    /// their command's process group: answered with [`ProcessEvent::KilledAll`].
    KillAll,
}

/// What the agent answers to [`ProcessRequest`]s, a part of [`Event`](super::Event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProcessEvent {
    /// The state of one tracked process.
    Process(ProcessInfo),
    ProcessList {
        processes: Vec<ProcessInfo>,
    },
    /// The output frames that follow start at this offset; what was asked for before it has
    /// left the ring.
    OutputFrom {
        offset: u64,
    },
    StdinWritten {
        bytes: u64,
    },
    /// How many processes [`ProcessRequest::KillAll`] killed, and how many it could not (a process
    /// forking faster than it can be killed).
    KilledAll {
        killed: u32,
        remaining: u32,
    },
}

#[cfg(test)]
mod wire {
    //! This topic's messages pinned to their bytes (see `pins.rs`).

    use super::*;
    use crate::message::pins::{self, exec, exit};

    fn process() -> ProcessInfo {
        ProcessInfo {
            id: "p1".into(),
            pid: 42,
            program: "sh".into(),
            pty: true,
            stdin_open: false,
            started_at_ms: 1_700_000_000_000,
            timeout_ms: 5,
            output_start: 1,
            output_end: 2,
            exit: Some(exit()),
        }
    }

    /// Every request, each with the bytes it travels as.
    fn requests() -> Vec<(ProcessRequest, &'static str)> {
        vec![
            (
                ProcessRequest::ProcessStart(ProcessStartRequest {
                    command: exec(),
                    program: "sh".into(),
                    pty: Some(TermSize { cols: 80, rows: 24 }),
                    paced: true,
                }),
                r#"{"op":"process_start","argv":["sh","-c","true"],"cwd":"/w","env":{"A":"1"},"stdin":true,"timeout_ms":1000,"output_limit":64,"program":"sh","pty":{"cols":80,"rows":24},"paced":true}"#,
            ),
            (
                ProcessRequest::ProcessStart(ProcessStartRequest {
                    command: ExecRequest::default(),
                    program: "x".into(),
                    pty: None,
                    paced: false,
                }),
                r#"{"op":"process_start","argv":[],"cwd":null,"env":{},"stdin":false,"timeout_ms":0,"output_limit":0,"program":"x","pty":null}"#,
            ),
            (ProcessRequest::ProcessList, r#"{"op":"process_list"}"#),
            (
                ProcessRequest::ProcessAttach {
                    id: "p1".into(),
                    since: 5,
                    interactive: true,
                },
                r#"{"op":"process_attach","id":"p1","since":5,"interactive":true}"#,
            ),
            (
                ProcessRequest::ProcessSignal {
                    id: "p1".into(),
                    signal: 9,
                },
                r#"{"op":"process_signal","id":"p1","signal":9}"#,
            ),
            (
                ProcessRequest::ProcessStdin {
                    id: "p1".into(),
                    len: 3,
                    close: true,
                },
                r#"{"op":"process_stdin","id":"p1","len":3,"close":true}"#,
            ),
            (
                ProcessRequest::ProcessResize {
                    id: "p1".into(),
                    size: TermSize { cols: 1, rows: 2 },
                },
                r#"{"op":"process_resize","id":"p1","size":{"cols":1,"rows":2}}"#,
            ),
            (ProcessRequest::KillAll, r#"{"op":"kill_all"}"#),
        ]
    }

    /// Every event, each with the bytes it travels as.
    fn events() -> Vec<(ProcessEvent, &'static str)> {
        vec![
            (
                ProcessEvent::Process(process()),
                r#"{"type":"process","id":"p1","pid":42,"program":"sh","pty":true,"stdin_open":false,"started_at_ms":1700000000000,"timeout_ms":5,"output_start":1,"output_end":2,"exit":{"exit_code":3,"signal":null,"timed_out":true,"oom_killed":false,"stdout_bytes":7,"stderr_bytes":8,"duration_ms":9}}"#,
            ),
            (
                ProcessEvent::ProcessList {
                    processes: vec![ProcessInfo::default()],
                },
                r#"{"type":"process_list","processes":[{"id":"","pid":0,"program":"","pty":false,"stdin_open":false,"started_at_ms":0,"timeout_ms":0,"output_start":0,"output_end":0,"exit":null}]}"#,
            ),
            (
                ProcessEvent::OutputFrom { offset: 11 },
                r#"{"type":"output_from","offset":11}"#,
            ),
            (
                ProcessEvent::StdinWritten { bytes: 12 },
                r#"{"type":"stdin_written","bytes":12}"#,
            ),
            (
                ProcessEvent::KilledAll {
                    killed: 2,
                    remaining: 1,
                },
                r#"{"type":"killed_all","killed":2,"remaining":1}"#,
            ),
        ]
    }

    /// Each request encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_request_is_the_same_bytes() {
        let tags = pins::requests(requests(), |message| match message {
            ProcessRequest::ProcessStart(_) => "process_start",
            ProcessRequest::ProcessList => "process_list",
            ProcessRequest::ProcessAttach { .. } => "process_attach",
            ProcessRequest::ProcessSignal { .. } => "process_signal",
            ProcessRequest::ProcessStdin { .. } => "process_stdin",
            ProcessRequest::ProcessResize { .. } => "process_resize",
            ProcessRequest::KillAll => "kill_all",
        });
        assert_eq!(tags.len(), 7, "{tags:?}");
    }

    /// Each event encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_event_is_the_same_bytes() {
        let tags = pins::events(events(), |message| match message {
            ProcessEvent::Process(_) => "process",
            ProcessEvent::ProcessList { .. } => "process_list",
            ProcessEvent::OutputFrom { .. } => "output_from",
            ProcessEvent::StdinWritten { .. } => "stdin_written",
            ProcessEvent::KilledAll { .. } => "killed_all",
        });
        assert_eq!(tags.len(), 5, "{tags:?}");
    }
}
