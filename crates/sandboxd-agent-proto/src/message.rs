//! The JSON control messages.
//!
//! Compatibility rules: every op and event is a variant of an internally tagged enum, so a new
//! one is an added variant that leaves the encoding of the others unchanged; fields added to an
//! existing message get `#[serde(default)]`, and nobody uses `deny_unknown_fields`, so either
//! side may be older than the other. An agent answers an op it does not know with an
//! [`ERROR_BAD_REQUEST`] error and stays usable; [`Event::Hello`] carries the version.

pub use crate::kernel::{KernelError, KernelResult, KernelRunEnd, KernelRunRequest};
pub use crate::meta::{ChangeKind, FileChange, FileStat, ListeningPort};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The protocol version an agent announces in [`Event::Hello`]. Version 2 added the
/// [`AgentSecret`] to the hello; the service refuses agents that announce less.
pub const PROTOCOL_VERSION: u32 = 2;
/// The file beside the agent socket from which the agent reads its [`AgentSecret`] at start.
/// The service removes it once the agent has said hello, before anything else runs in the
/// sandbox, so no sandbox process can read it.
pub const AGENT_SECRET_FILE: &str = "agent-secret";
/// The FIFO beside the agent socket on which a dialing agent waits while the service is away:
/// the service writes a byte to it once it listens on the socket again (see
/// `host::wake_agent`), so thousands of agents need not keep retrying through a restart. A
/// byte while the agent is connected asks it for one more connection.
pub const AGENT_WAKE_FILE: &str = "agent-wake";
/// The secret's length in bytes: 32 bytes, written as 64 hex digits.
pub const AGENT_SECRET_LEN: usize = 32;
/// Idle connections the agent keeps open to the service, ready for requests; the service
/// asks for more when it finds none (see `host::AgentHub::acquire`). Each costs a thread in
/// the agent, and all of them wake at once when the service goes away.
pub const AGENT_SPARES: usize = 2;
/// The largest stdin frame the service sends.
pub const STDIN_CHUNK_LEN: usize = 64 * 1024;
/// The largest stdout/stderr frame the agent sends.
pub const OUTPUT_CHUNK_LEN: usize = 32 * 1024;
/// The largest frame of file content either side sends.
pub const FILE_CHUNK_LEN: usize = 64 * 1024;
/// The most entries an archive may hold, either way.
pub const MAX_ARCHIVE_ENTRIES: u64 = 100_000;

/// [`Event::Error`] code: the request could not be decoded or is invalid.
pub const ERROR_BAD_REQUEST: &str = "bad_request";
/// [`Event::Error`] code: the program could not be started (missing, not executable, bad cwd).
pub const ERROR_SPAWN_FAILED: &str = "spawn_failed";
/// [`Event::Error`] code: no tracked process has the id asked for.
pub const ERROR_NO_SUCH_PROCESS: &str = "no_such_process";
/// [`Event::Error`] code: every tracked process slot holds a running process.
pub const ERROR_TOO_MANY_PROCESSES: &str = "too_many_processes";
/// [`Event::Error`] code: as many output streams are attached as the agent allows.
pub const ERROR_TOO_MANY_STREAMS: &str = "too_many_streams";
/// [`Event::Error`] code: the process's stdin was not enabled, is closed, or is not being read.
pub const ERROR_STDIN_UNAVAILABLE: &str = "stdin_unavailable";
/// [`Event::Error`] code: a terminal operation on a process that has no terminal.
pub const ERROR_NOT_A_TERMINAL: &str = "not_a_terminal";
/// [`Event::Error`] code: the process has exited and nothing is left to signal.
pub const ERROR_PROCESS_EXITED: &str = "process_exited";

// [`Event::Error`] codes of the file operations; the service's API answers with the same ones.
/// Nothing exists at the path.
pub const ERROR_NOT_FOUND: &str = "not_found";
/// A directory where a file was needed, or one to delete without `recursive`.
pub const ERROR_IS_DIRECTORY: &str = "is_directory";
/// The path, or one of its components, is not a directory where one was needed.
pub const ERROR_NOT_A_DIRECTORY: &str = "not_a_directory";
/// A device, FIFO or socket where a regular file was needed.
pub const ERROR_NOT_A_FILE: &str = "not_a_file";
/// The path is on a read-only filesystem.
pub const ERROR_READ_ONLY: &str = "read_only";
pub const ERROR_PERMISSION_DENIED: &str = "permission_denied";
/// More bytes than the request allows.
pub const ERROR_TOO_LARGE: &str = "too_large";
/// The filesystem is full.
pub const ERROR_NO_SPACE: &str = "no_space";
/// The path is malformed, too long, or loops through symlinks.
pub const ERROR_INVALID_PATH: &str = "invalid_path";
/// The path is in use, or changed while the operation ran.
pub const ERROR_BUSY: &str = "busy";
/// Any other i/o failure.
pub const ERROR_IO: &str = "io_error";
/// The service cancelled the operation with [`Request::Cancel`].
pub const ERROR_CANCELLED: &str = "cancelled";
/// Something is already at the destination.
pub const ERROR_EXISTS: &str = "exists";
/// Nothing listens on the port asked for.
pub const ERROR_CONNECTION_REFUSED: &str = "connection_refused";
/// A move between two filesystems, which rename(2) cannot do.
pub const ERROR_CROSS_DEVICE: &str = "cross_device";

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
    /// Lists a directory, describing symlinks rather than what they point to:
    /// [`Event::DirEntries`] batches with at most `max_entries` entries in all, then
    /// [`Event::DirEnd`].
    ListDir { path: String, max_entries: u32 },
    /// Streams a regular file: [`Event::FileOpened`], its bytes in stdout frames, then
    /// [`Event::FileEnd`]. A file whose size is unknown (e.g. in /proc) is sent up to
    /// `unsized_limit` bytes and refused with [`ERROR_TOO_LARGE`] beyond. A file larger than
    /// `max_size`, or sparse with more than `max_unallocated` bytes beyond what it has
    /// allocated (`st_blocks` × 512), is refused with [`ERROR_TOO_LARGE`] before a byte is sent.
    ReadFile {
        path: String,
        unsized_limit: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_size: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_unallocated: Option<u64>,
    },
    /// Replaces a file atomically, creating missing parent directories: [`Event::WriteReady`],
    /// then the service sends at most `max_bytes` in stdin frames and an empty one to commit,
    /// answered with [`Event::FileWritten`]. Nothing appears at the path before the commit,
    /// and an error, a [`Request::Cancel`] or a broken connection leaves nothing behind.
    WriteFile { path: String, max_bytes: u64 },
    /// Removes a file or a symlink (never what it points to), or with `recursive` a directory
    /// and everything in it: [`Event::Deleted`].
    Delete {
        path: String,
        #[serde(default)]
        recursive: bool,
    },
    /// Cancels the upload in progress on this connection, answered with an
    /// [`ERROR_CANCELLED`] error once its temporary file is gone; ignored otherwise.
    Cancel,
    /// Starts a process that outlives this connection, tracked by the agent with its output
    /// in a ring buffer: answered with [`Event::Process`].
    ProcessStart(ProcessStartRequest),
    /// Answered with [`Event::ProcessList`].
    ProcessList,
    /// Streams a tracked process's output from byte offset `since` (stdout and stderr count
    /// together): [`Event::OutputFrom`], output frames (a terminal's are stdout frames),
    /// another `OutputFrom` after any gap, and once it has exited and everything was sent,
    /// [`Event::Process`]. When `interactive`, stdin frames and [`Request::ProcessResize`]
    /// may follow on the connection (both unanswered), and closing it before the process
    /// exits hangs the process up (SIGHUP to its group), as closing a terminal does.
    ProcessAttach {
        id: String,
        #[serde(default)]
        since: u64,
        #[serde(default)]
        interactive: bool,
    },
    /// Sends `signal` to the process's group: answered with [`Event::Process`].
    ProcessSignal { id: String, signal: i32 },
    /// Writes the `len` bytes that follow in stdin frames to the process's stdin, then closes
    /// it if `close`: answered with [`Event::StdinWritten`] once the process took them all.
    ProcessStdin {
        id: String,
        len: u64,
        #[serde(default)]
        close: bool,
    },
    /// Sets the window size of a process's terminal: answered with [`Event::Process`].
    ProcessResize { id: String, size: TermSize },
    /// SIGKILLs every process in the sandbox but the agent and init, also those that left
    /// their command's process group: answered with [`Event::KilledAll`].
    KillAll,
    /// Describes what is at `path` without following a final symlink: [`Event::Stat`].
    Stat { path: String },
    /// Creates a directory, and with `parents` its missing ancestors: [`Event::DirMade`]
    /// (`created` false when a directory was there already).
    MakeDir {
        path: String,
        #[serde(default)]
        parents: bool,
    },
    /// Renames `from` to `to` (rename(2)); an existing `to` is refused with [`ERROR_EXISTS`]
    /// unless `overwrite`: [`Event::Stat`] of the destination.
    Move {
        from: String,
        to: String,
        #[serde(default)]
        overwrite: bool,
    },
    /// Watches a directory (and with `recursive` those below it, at most `max_watches` in
    /// all): [`Event::Watching`], then [`Event::FileChanges`] batches until the service
    /// closes the connection or sends [`Request::Cancel`], or the directory goes away
    /// ([`Event::WatchEnd`]). Changes the kernel could not queue arrive as one
    /// [`ChangeKind::Overflow`].
    Watch {
        path: String,
        #[serde(default)]
        recursive: bool,
        max_watches: u32,
    },
    /// Connects to `port` on the sandbox's loopback (127.0.0.1, else ::1): [`Event::PortConnected`],
    /// then the connection carries the bytes both ways: stdin frames to the port, stdout
    /// frames from it, an empty frame for an end. The agent closes the connection after.
    PortConnect { port: u16 },
    /// The TCP ports listening in the sandbox, at most `max_ports`: [`Event::Ports`].
    ListPorts { max_ports: u32 },
    /// The first frame on a connection the service opened to a listening agent (`--listen`,
    /// for platforms that reach into the sandbox instead of letting it dial out): the service
    /// proves itself with the sandbox's secret, answered with [`Event::Hello`]; a wrong one
    /// closes the connection. The first secret a listening agent is sent becomes its own:
    /// nothing runs in the sandbox before the service's first connection, so no sandbox
    /// process can be first.
    Claim { secret: AgentSecret },
    /// Streams the directory tree at `path` as a tar: [`Event::ArchiveOpened`] once it was
    /// walked (or [`ERROR_TOO_LARGE`] before a byte is sent when its files hold more than
    /// `max_bytes` or it has more than [`MAX_ARCHIVE_ENTRIES`] entries), the tar's bytes in
    /// stdout frames, then [`Event::ArchiveEnd`]. Symlinks are archived as symlinks, never
    /// followed; other special files are skipped and counted.
    ReadArchive { path: String, max_bytes: u64 },
    /// Extracts a tar under the directory `path` (created with its parents): [`Event::WriteReady`],
    /// then the service sends the tar in stdin frames and an empty one to end it, answered with
    /// [`Event::ArchiveWritten`]. Confined to `path`: names with `..` or a leading `/`, names
    /// through a symlink, hard links and special files are refused, modes lose
    /// setuid/setgid/sticky, file contents are capped at `max_bytes` in all. The tree appears
    /// only once the whole tar was taken; a refusal, a [`Request::Cancel`] or a broken
    /// connection leaves nothing behind. A top-level name that already exists under `path` is
    /// refused.
    WriteArchive { path: String, max_bytes: u64 },
    /// See [`KernelRunRequest`].
    KernelRun(KernelRunRequest),
    /// Stops the kernel of `context` (SIGKILL to its group) and forgets it; the context's
    /// next run starts a new one: [`Event::KernelStopped`].
    KernelShutdown { context: String },
    /// The contexts the agent holds kernels for (started or to be started), so a restarted
    /// service learns them again: [`Event::Kernels`].
    KernelList,
    /// Keeps a context the service made, before its first run starts a kernel for it (or
    /// after a restart stopped its kernel), so it is listed: [`Event::Kernels`], or
    /// [`ERROR_TOO_MANY_PROCESSES`] when the agent holds as many contexts as it may.
    KernelDeclare(crate::kernel::KernelContext),
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

/// [`Request::ProcessStart`].
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

/// One entry of [`Event::DirEntries`]; a symlink is described, not followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirEntry {
    /// Bytes of the name that are not UTF-8 are replaced with U+FFFD.
    pub name: String,
    pub kind: EntryKind,
    pub size: u64,
    /// The permission bits, with setuid, setgid and sticky.
    pub mode: u32,
    /// The last modification, since the Unix epoch.
    pub modified_secs: i64,
    pub modified_nanos: u32,
    /// For a symlink, what it leads to, followed to the end; `None` when it leads nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kind: Option<EntryKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// A device, FIFO or socket.
    Other,
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
    DirEntries {
        entries: Vec<DirEntry>,
    },
    /// The listing is complete; `truncated` when the directory held more than `max_entries`.
    DirEnd {
        truncated: bool,
    },
    /// The path is a regular file, open for reading; `size` is exact when known.
    FileOpened {
        size: Option<u64>,
    },
    /// Every byte of the file was sent.
    FileEnd {
        bytes: u64,
    },
    /// The upload's temporary file is ready for the bytes.
    WriteReady,
    FileWritten {
        bytes: u64,
    },
    Deleted,
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
    /// How many processes [`Request::KillAll`] killed, and how many it could not (a process
    /// forking faster than it can be killed).
    KilledAll {
        killed: u32,
        remaining: u32,
    },
    /// The tree was walked: `entries` will be sent, holding `bytes` bytes of file contents.
    ArchiveOpened {
        entries: u64,
        bytes: u64,
    },
    /// Every entry was sent; `skipped` counts the special files left out.
    ArchiveEnd(ArchiveSummary),
    /// The tar was extracted and is in place.
    ArchiveWritten(ArchiveSummary),
    Error {
        code: String,
        message: String,
    },
    Stat(FileStat),
    DirMade {
        created: bool,
    },
    Watching,
    FileChanges {
        changes: Vec<FileChange>,
    },
    /// The watched directory is gone: no change follows.
    WatchEnd,
    PortConnected,
    Ports {
        ports: Vec<ListeningPort>,
    },
    /// Sent once per stream of an exec, after its exit and before its tail: the stream's
    /// output frames that follow come after `bytes` bytes left out past the head (the output
    /// went past the exec's `output_limit`; its head and tail are kept).
    OutputOmitted {
        stderr: bool,
        bytes: u64,
    },
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
    /// The answer to [`Request::KernelList`]: at most the agent's limit of kernels.
    Kernels {
        kernels: Vec<crate::kernel::KernelContext>,
    },
}

/// The per-sandbox secret an agent proves itself with: [`AGENT_SECRET_LEN`] bytes as lowercase
/// hex. Its `Debug` form never shows it, so it cannot reach a log through an event.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentSecret(String);

impl AgentSecret {
    /// The secret for `bytes`.
    pub fn from_bytes(bytes: &[u8; AGENT_SECRET_LEN]) -> AgentSecret {
        AgentSecret(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Reads the secret as the agent's secret file holds it (surrounding whitespace ignored);
    /// `None` unless it is exactly [`AGENT_SECRET_LEN`] bytes of lowercase hex.
    pub fn parse(text: &str) -> Option<AgentSecret> {
        let text = text.trim();
        let well_formed = text.len() == 2 * AGENT_SECRET_LEN
            && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        well_formed.then(|| AgentSecret(text.to_string()))
    }

    /// The hex form, as the secret file holds it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for AgentSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentSecret(<redacted>)")
    }
}

/// Compares in time independent of where the secrets differ, so a dialer cannot learn the
/// secret byte by byte from how fast it is refused. Hand-written rather than `subtle` because
/// the agent links std and libc only; `black_box` keeps the compiler from adding an early exit.
impl PartialEq for AgentSecret {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        let difference = a
            .iter()
            .zip(b)
            .fold(0u8, |acc, (x, y)| std::hint::black_box(acc | (x ^ y)));
        a.len() == b.len() && difference == 0
    }
}

impl Eq for AgentSecret {}

/// What an archive held, by kind of entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveSummary {
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file contents.
    pub bytes: u64,
    /// Special files (devices, FIFOs, sockets) left out of a download.
    #[serde(default)]
    pub skipped: u64,
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
    fn process_start_carries_the_exec_fields_flat() {
        let start = Request::ProcessStart(ProcessStartRequest {
            command: ExecRequest {
                argv: vec!["sh".into()],
                timeout_ms: 5,
                output_limit: 6,
                ..ExecRequest::default()
            },
            program: "sh".into(),
            pty: Some(TermSize { cols: 80, rows: 24 }),
            // Left out when false: an older agent reads the same request.
            paced: false,
        });
        let encoded = serde_json::to_value(&start).unwrap();
        assert_eq!(
            encoded,
            json!({"op": "process_start", "argv": ["sh"], "cwd": null, "env": {}, "stdin": false,
                   "timeout_ms": 5, "output_limit": 6, "program": "sh",
                   "pty": {"cols": 80, "rows": 24}})
        );
        assert_eq!(serde_json::from_value::<Request>(encoded).unwrap(), start);
        let attach: Request =
            serde_json::from_value(json!({"op": "process_attach", "id": "p1"})).unwrap();
        assert_eq!(
            attach,
            Request::ProcessAttach {
                id: "p1".into(),
                since: 0,
                interactive: false
            }
        );
    }

    #[test]
    fn unknown_op_is_a_decode_error() {
        assert!(serde_json::from_value::<Request>(json!({"op": "format_disk"})).is_err());
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
        assert_eq!(
            hello,
            Event::Hello {
                version: 1,
                pid: 7,
                secret: None
            }
        );
        let error = Event::Error {
            code: ERROR_SPAWN_FAILED.into(),
            message: "x".into(),
        };
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"type": "error", "code": "spawn_failed", "message": "x"})
        );
    }

    #[test]
    fn the_secret_travels_in_the_hello_and_never_shows_in_debug() {
        let secret = AgentSecret::from_bytes(&[0xab; AGENT_SECRET_LEN]);
        assert_eq!(secret.expose(), "ab".repeat(AGENT_SECRET_LEN));
        let hello = Event::Hello {
            version: PROTOCOL_VERSION,
            pid: 7,
            secret: Some(secret.clone()),
        };
        let encoded = serde_json::to_value(&hello).unwrap();
        assert_eq!(encoded["secret"], secret.expose());
        assert_eq!(serde_json::from_value::<Event>(encoded).unwrap(), hello);
        assert!(!format!("{hello:?}").contains("abab"), "{hello:?}");
    }

    #[test]
    fn secrets_parse_strictly_and_compare_by_value() {
        let text = format!("  {}\n", "0f".repeat(AGENT_SECRET_LEN));
        let secret = AgentSecret::parse(&text).unwrap();
        assert_eq!(secret, AgentSecret::from_bytes(&[0x0f; AGENT_SECRET_LEN]));
        assert_ne!(secret, AgentSecret::from_bytes(&[0x0e; AGENT_SECRET_LEN]));
        assert_ne!(secret, AgentSecret("0f".repeat(AGENT_SECRET_LEN - 1)));
        for bad in [
            "",
            "0f",
            &"0F".repeat(AGENT_SECRET_LEN),
            &"zz".repeat(AGENT_SECRET_LEN),
        ] {
            assert!(AgentSecret::parse(bad).is_none(), "{bad}");
        }
    }
}
