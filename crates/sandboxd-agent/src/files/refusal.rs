//! Refusals: a refused file operation's error code and message, and answering with one.

use sandboxd_agent_proto::{
    write_json, Event, ProtoError, ERROR_BUSY, ERROR_INVALID_PATH, ERROR_IO, ERROR_IS_DIRECTORY,
    ERROR_NOT_A_DIRECTORY, ERROR_NOT_A_FILE, ERROR_NOT_FOUND, ERROR_NO_SPACE,
    ERROR_PERMISSION_DENIED, ERROR_READ_ONLY,
};
use std::io;
use std::os::unix::net::UnixStream;

/// Why an operation was refused: an [`Event::Error`]'s code and message.
pub(super) struct Refusal {
    code: &'static str,
    message: String,
}

impl Refusal {
    pub(super) fn new(code: &'static str, message: String) -> Self {
        Self { code, message }
    }

    /// Names `path` and the system's reason, coded by what it means for the caller.
    pub(super) fn io(path: &str, error: io::Error) -> Self {
        let code = match error.raw_os_error().unwrap_or(0) {
            libc::ENOENT => ERROR_NOT_FOUND,
            libc::EISDIR => ERROR_IS_DIRECTORY,
            libc::ENOTDIR => ERROR_NOT_A_DIRECTORY,
            // What open(2) says for a socket, or a device with no driver behind it.
            libc::ENXIO | libc::ENODEV => ERROR_NOT_A_FILE,
            libc::EROFS => ERROR_READ_ONLY,
            libc::EACCES | libc::EPERM => ERROR_PERMISSION_DENIED,
            libc::ENOSPC | libc::EDQUOT | libc::EFBIG => ERROR_NO_SPACE,
            libc::ENAMETOOLONG | libc::ELOOP | libc::EINVAL => ERROR_INVALID_PATH,
            // Creating a directory where something else already is.
            libc::EEXIST => ERROR_NOT_A_DIRECTORY,
            libc::EBUSY | libc::ENOTEMPTY | libc::ETXTBSY => ERROR_BUSY,
            _ => ERROR_IO,
        };
        Self::new(code, format!("{path}: {error}"))
    }
}

pub(super) fn refuse(connection: &mut UnixStream, refusal: Refusal) -> Result<(), ProtoError> {
    write_json(
        connection,
        &Event::Error {
            code: refusal.code.into(),
            message: refusal.message,
        },
    )
}
