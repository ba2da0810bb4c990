//! Refusals: a refused file operation's error code and message, and answering with one.

use sandboxd_agent_proto::{write_json, ErrorCode, Event, ProtoError};
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;

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
            // gVisor answers a write to a read-only file system with EACCES.
            libc::EACCES if on_read_only_fs(path) => ErrorCode::ReadOnly,
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

/// Whether the file system holding `path` (or its nearest existing ancestor) is mounted
/// read-only.
fn on_read_only_fs(path: &str) -> bool {
    let Some(existing) = Path::new(path).ancestors().find(|p| p.exists()) else {
        return false;
    };
    let Ok(c_path) = CString::new(existing.as_os_str().as_bytes()) else {
        return false;
    };
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a valid NUL-terminated path and a buffer of the size statvfs writes.
    if unsafe { libc::statvfs(c_path.as_ptr(), stats.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: statvfs succeeded, so it filled the buffer.
    let stats = unsafe { stats.assume_init() };
    stats.f_flag & libc::ST_RDONLY != 0
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
