//! Refusals: a refused file operation's error code and message, and answering with one.

use sandboxd_agent_proto::{write_json, ErrorCode, Event, ProtoError};
use std::io;
use std::os::unix::net::UnixStream;

/// Why an operation was refused: an [`Event::Error`]'s code and message.
pub(super) struct Refusal {
    code: ErrorCode,
    message: String,
}

impl Refusal {
    pub(super) fn new(code: ErrorCode, message: String) -> Self {
        Self { code, message }
    }

    /// Names `path` and the system's reason, coded by what it means for the caller.
    pub(super) fn io(path: &str, error: io::Error) -> Self {
        let code = match error.raw_os_error().unwrap_or(0) {
            libc::ENOENT => ErrorCode::NotFound,
            libc::EISDIR => ErrorCode::IsDirectory,
            libc::ENOTDIR => ErrorCode::NotADirectory,
            // What open(2) says for a socket, or a device with no driver behind it.
            libc::ENXIO | libc::ENODEV => ErrorCode::NotAFile,
            libc::EROFS => ErrorCode::ReadOnly,
            libc::EACCES | libc::EPERM => ErrorCode::PermissionDenied,
            libc::ENOSPC | libc::EDQUOT | libc::EFBIG => ErrorCode::NoSpace,
            libc::ENAMETOOLONG | libc::ELOOP | libc::EINVAL => ErrorCode::InvalidPath,
            // Creating a directory where something else already is.
            libc::EEXIST => ErrorCode::NotADirectory,
            libc::EBUSY | libc::ENOTEMPTY | libc::ETXTBSY => ErrorCode::Busy,
            _ => ErrorCode::Io,
        };
        Self::new(code, format!("{path}: {error}"))
    }
}

pub(super) fn refuse(connection: &mut UnixStream, refusal: Refusal) -> Result<(), ProtoError> {
    write_json(
        connection,
        &Event::Error {
            code: refusal.code,
            message: refusal.message,
        },
    )
}
