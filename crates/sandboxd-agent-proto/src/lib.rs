//! The wire protocol between sandboxd and its in-sandbox agent.
//!
//! The agent dials the service over a unix socket. On that byte stream both sides exchange
//! frames: a kind byte, a big-endian `u32` payload length and the payload (see [`frame`]).
//! Control messages travel as JSON frames ([`Request`] from the service, [`Event`] from the
//! agent); process output and input travel as raw data frames.
//!
//! The core (framing, messages, errors, the bounded tar reader and extractor) is std-only (and
//! libc and the pure-Rust tar crate) so the agent stays small and static. The
//! `tokio` feature adds the service side in `host`: async framing, the `AgentHub` that
//! accepts agent connections, and the clients (`run_exec`, `ping`, the tracked-process and
//! file ones).

mod error;
mod error_code;
pub mod frame;
#[cfg(feature = "tokio")]
pub mod host;
mod limits;
mod message;
mod secret;
pub mod tar_extract;
pub mod tar_read;

pub use error::ProtoError;
pub use error_code::{
    ErrorCode, ERROR_BAD_REQUEST, ERROR_BUSY, ERROR_CANCELLED, ERROR_CONNECTION_REFUSED,
    ERROR_CROSS_DEVICE, ERROR_EXISTS, ERROR_INVALID_PATH, ERROR_IO, ERROR_IS_DIRECTORY,
    ERROR_KERNEL_UNAVAILABLE, ERROR_NOT_A_DIRECTORY, ERROR_NOT_A_FILE, ERROR_NOT_A_TERMINAL,
    ERROR_NOT_FOUND, ERROR_NO_SPACE, ERROR_NO_SUCH_PROCESS, ERROR_PERMISSION_DENIED,
    ERROR_PROCESS_EXITED, ERROR_READ_ONLY, ERROR_SPAWN_FAILED, ERROR_STDIN_UNAVAILABLE,
    ERROR_TOO_LARGE, ERROR_TOO_MANY_PROCESSES, ERROR_TOO_MANY_STREAMS,
};
pub use frame::{read_frame, write_frame, write_json, Frame, FrameKind};
#[cfg(feature = "tokio")]
pub use host::{archive_stream_limit, open_archive, upload_archive, ArchiveDownload};
#[cfg(feature = "tokio")]
pub use host::{carry, connect_port, list_ports, Carried};
#[cfg(feature = "tokio")]
pub use host::{
    delete_path, list_dir, open_file, upload_file, DirListing, FileDownload, ReadLimits,
    UploadError,
};
#[cfg(feature = "tokio")]
pub use host::{make_dir, move_path, stat_path, watch_dir, DirWatch};
#[cfg(feature = "tokio")]
pub use host::{
    ping, run_exec, AgentHub, AgentLease, ExecResult, OutputSink, HELLO_TIMEOUT, MAX_IDLE,
    OUTPUT_SINK,
};
pub use limits::{
    FILE_CHUNK_LEN, MAX_ARCHIVE_ENTRIES, MAX_FRAME_LEN, OUTPUT_CHUNK_LEN, STDIN_CHUNK_LEN,
};
pub use message::kernel;
pub use message::{
    ArchiveSummary, ChangeKind, DirEntry, EntryKind, Event, ExecRequest, ExitReport, FileChange,
    FileStat, FilesEvent, FilesRequest, KernelEvent, KernelRequest, ListeningPort, PortsEvent,
    PortsRequest, ProcessEvent, ProcessInfo, ProcessRequest, ProcessStartRequest, Request,
    TermSize,
};
pub use message::{AGENT_NO_OOM_KILLER_FLAG, AGENT_SPARES, AGENT_WAKE_FILE, PROTOCOL_VERSION};
pub use secret::{AgentSecret, AGENT_SECRET_FILE, AGENT_SECRET_LEN};
