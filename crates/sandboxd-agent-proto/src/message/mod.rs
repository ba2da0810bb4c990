//! The JSON control messages: the two enums that travel, [`Request`] and [`Event`], whose
//! variants carry the structs of the topic modules (one per kind of operation).
//!
//! Compatibility rules: every op and event is a variant of an internally tagged enum, so a new
//! one is an added variant that leaves the encoding of the others unchanged; fields added to an
//! existing message get `#[serde(default)]`, and nobody uses `deny_unknown_fields`, so either
//! side may be older than the other. An agent answers an op it does not know with an
//! [`ERROR_BAD_REQUEST`](crate::error_code::ERROR_BAD_REQUEST) error and stays usable; [`Event::Hello`] carries the version.
//! `tests/wire.rs` pins every message to its bytes.

mod control;
mod exec;
mod files;
pub mod kernel;
mod ports;
mod process;
#[cfg(test)]
mod tests;

pub use control::{AGENT_SPARES, AGENT_WAKE_FILE, PROTOCOL_VERSION};
pub use exec::{ExecRequest, ExitReport};
pub use files::{ArchiveSummary, ChangeKind, DirEntry, EntryKind, FileChange, FileStat};
pub use kernel::{KernelContext, KernelError, KernelResult, KernelRunEnd, KernelRunRequest};
pub use ports::ListeningPort;
pub use process::{ProcessInfo, ProcessStartRequest, TermSize};

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
    /// Lists a directory, describing symlinks rather than what they point to:
    /// [`Event::DirEntries`] batches with at most `max_entries` entries in all, then
    /// [`Event::DirEnd`].
    ListDir { path: String, max_entries: u32 },
    /// Streams a regular file: [`Event::FileOpened`], its bytes in stdout frames, then
    /// [`Event::FileEnd`]. A file whose size is unknown (e.g. in /proc) is sent up to
    /// `unsized_limit` bytes and refused with [`ERROR_TOO_LARGE`](crate::error_code::ERROR_TOO_LARGE) beyond. A file larger than
    /// `max_size`, or sparse with more than `max_unallocated` bytes beyond what it has
    /// allocated (`st_blocks` × 512), is refused with [`ERROR_TOO_LARGE`](crate::error_code::ERROR_TOO_LARGE) before a byte is sent.
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
    /// The file gets `mode`'s permission bits (`0o777` at most; 0644 without one).
    WriteFile {
        path: String,
        max_bytes: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// Removes a file or a symlink (never what it points to), or with `recursive` a directory
    /// and everything in it: [`Event::Deleted`].
    Delete {
        path: String,
        #[serde(default)]
        recursive: bool,
    },
    /// Cancels the upload in progress on this connection, answered with an
    /// [`ERROR_CANCELLED`](crate::error_code::ERROR_CANCELLED) error once its temporary file is gone; ignored otherwise.
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
    /// Renames `from` to `to` (rename(2)); an existing `to` is refused with [`ERROR_EXISTS`](crate::error_code::ERROR_EXISTS)
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
    /// walked (or [`ERROR_TOO_LARGE`](crate::error_code::ERROR_TOO_LARGE) before a byte is sent when its files hold more than
    /// `max_bytes` or it has more than [`MAX_ARCHIVE_ENTRIES`](crate::limits::MAX_ARCHIVE_ENTRIES) entries), the tar's bytes in
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
    /// [`ERROR_TOO_MANY_PROCESSES`](crate::error_code::ERROR_TOO_MANY_PROCESSES) when the agent holds as many contexts as it may.
    KernelDeclare(KernelContext),
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
        code: ErrorCode,
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
        kernels: Vec<KernelContext>,
    },
}
