//! The codes of an agent's [`Event::Error`](crate::Event::Error), as the [`ErrorCode`] enum
//! that each face matches exhaustively; on the wire each is its string (the `ERROR_*`
//! constants), so the enum changed no byte. The service's API answers file errors with the
//! same strings.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// `Event::Error` code: the request could not be decoded or is invalid.
pub const ERROR_BAD_REQUEST: &str = "bad_request";
/// `Event::Error` code: the program could not be started (missing, not executable, bad cwd).
pub const ERROR_SPAWN_FAILED: &str = "spawn_failed";
/// `Event::Error` code: no tracked process has the id asked for.
pub const ERROR_NO_SUCH_PROCESS: &str = "no_such_process";
/// `Event::Error` code: every tracked process slot holds a running process.
pub const ERROR_TOO_MANY_PROCESSES: &str = "too_many_processes";
/// `Event::Error` code: as many output streams are attached as the agent allows.
pub const ERROR_TOO_MANY_STREAMS: &str = "too_many_streams";
/// `Event::Error` code: the process's stdin was not enabled, is closed, or is not being read.
pub const ERROR_STDIN_UNAVAILABLE: &str = "stdin_unavailable";
/// `Event::Error` code: a terminal operation on a process that has no terminal.
pub const ERROR_NOT_A_TERMINAL: &str = "not_a_terminal";
/// `Event::Error` code: the process has exited and nothing is left to signal.
pub const ERROR_PROCESS_EXITED: &str = "process_exited";

// `Event::Error` codes of the file operations; the service's API answers with the same ones.
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
/// The service cancelled the operation with `Request::Cancel`.
pub const ERROR_CANCELLED: &str = "cancelled";
/// Something is already at the destination.
pub const ERROR_EXISTS: &str = "exists";
/// Nothing listens on the port asked for.
pub const ERROR_CONNECTION_REFUSED: &str = "connection_refused";
/// A move between two filesystems, which rename(2) cannot do.
pub const ERROR_CROSS_DEVICE: &str = "cross_device";
/// The context's kernel could not be started (missing, or it exited or did not answer before
/// it was ready).
pub const ERROR_KERNEL_UNAVAILABLE: &str = "kernel_unavailable";

/// Why an agent refused a request. Encoded as its string; a code this build does not know (an
/// agent of a later version, or a hostile one) decodes as [`ErrorCode::Other`] rather than
/// failing the whole event. A new code is a variant, its string in [`ErrorCode::as_str`] and
/// an entry in [`ErrorCode::KNOWN`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The request could not be decoded or is invalid.
    BadRequest,
    /// The program could not be started (missing, not executable, bad cwd).
    SpawnFailed,
    /// No tracked process has the id asked for.
    NoSuchProcess,
    /// Every tracked process slot holds a running process.
    TooManyProcesses,
    /// As many output streams are attached as the agent allows.
    TooManyStreams,
    /// The process's stdin was not enabled, is closed, or is not being read.
    StdinUnavailable,
    /// A terminal operation on a process that has no terminal.
    NotATerminal,
    /// The process has exited and nothing is left to signal.
    ProcessExited,
    /// Nothing exists at the path.
    NotFound,
    /// A directory where a file was needed, or one to delete without `recursive`.
    IsDirectory,
    /// The path, or one of its components, is not a directory where one was needed.
    NotADirectory,
    /// A device, FIFO or socket where a regular file was needed.
    NotAFile,
    /// The path is on a read-only filesystem.
    ReadOnly,
    PermissionDenied,
    /// More bytes than the request allows.
    TooLarge,
    /// The filesystem is full.
    NoSpace,
    /// The path is malformed, too long, or loops through symlinks.
    InvalidPath,
    /// The path is in use, or changed while the operation ran.
    Busy,
    /// Any other i/o failure.
    Io,
    /// The service cancelled the operation with `Request::Cancel`.
    Cancelled,
    /// Something is already at the destination.
    Exists,
    /// Nothing listens on the port asked for.
    ConnectionRefused,
    /// A move between two filesystems, which rename(2) cannot do.
    CrossDevice,
    /// The kernel could not be started (missing, or it exited or did not answer before it was
    /// ready).
    KernelUnavailable,
    /// A code this build does not know, as sent. Never one of the known strings when decoded.
    Other(String),
}

impl ErrorCode {
    /// Every code but [`ErrorCode::Other`].
    pub const KNOWN: [ErrorCode; 24] = [
        ErrorCode::BadRequest,
        ErrorCode::SpawnFailed,
        ErrorCode::NoSuchProcess,
        ErrorCode::TooManyProcesses,
        ErrorCode::TooManyStreams,
        ErrorCode::StdinUnavailable,
        ErrorCode::NotATerminal,
        ErrorCode::ProcessExited,
        ErrorCode::NotFound,
        ErrorCode::IsDirectory,
        ErrorCode::NotADirectory,
        ErrorCode::NotAFile,
        ErrorCode::ReadOnly,
        ErrorCode::PermissionDenied,
        ErrorCode::TooLarge,
        ErrorCode::NoSpace,
        ErrorCode::InvalidPath,
        ErrorCode::Busy,
        ErrorCode::Io,
        ErrorCode::Cancelled,
        ErrorCode::Exists,
        ErrorCode::ConnectionRefused,
        ErrorCode::CrossDevice,
        ErrorCode::KernelUnavailable,
    ];

    /// The code as it travels.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::BadRequest => ERROR_BAD_REQUEST,
            ErrorCode::SpawnFailed => ERROR_SPAWN_FAILED,
            ErrorCode::NoSuchProcess => ERROR_NO_SUCH_PROCESS,
            ErrorCode::TooManyProcesses => ERROR_TOO_MANY_PROCESSES,
            ErrorCode::TooManyStreams => ERROR_TOO_MANY_STREAMS,
            ErrorCode::StdinUnavailable => ERROR_STDIN_UNAVAILABLE,
            ErrorCode::NotATerminal => ERROR_NOT_A_TERMINAL,
            ErrorCode::ProcessExited => ERROR_PROCESS_EXITED,
            ErrorCode::NotFound => ERROR_NOT_FOUND,
            ErrorCode::IsDirectory => ERROR_IS_DIRECTORY,
            ErrorCode::NotADirectory => ERROR_NOT_A_DIRECTORY,
            ErrorCode::NotAFile => ERROR_NOT_A_FILE,
            ErrorCode::ReadOnly => ERROR_READ_ONLY,
            ErrorCode::PermissionDenied => ERROR_PERMISSION_DENIED,
            ErrorCode::TooLarge => ERROR_TOO_LARGE,
            ErrorCode::NoSpace => ERROR_NO_SPACE,
            ErrorCode::InvalidPath => ERROR_INVALID_PATH,
            ErrorCode::Busy => ERROR_BUSY,
            ErrorCode::Io => ERROR_IO,
            ErrorCode::Cancelled => ERROR_CANCELLED,
            ErrorCode::Exists => ERROR_EXISTS,
            ErrorCode::ConnectionRefused => ERROR_CONNECTION_REFUSED,
            ErrorCode::CrossDevice => ERROR_CROSS_DEVICE,
            ErrorCode::KernelUnavailable => ERROR_KERNEL_UNAVAILABLE,
            ErrorCode::Other(code) => code,
        }
    }

    /// The code for `code` as it travels.
    pub fn parse(code: &str) -> ErrorCode {
        Self::KNOWN
            .into_iter()
            .find(|known| known.as_str() == code)
            .unwrap_or_else(|| ErrorCode::Other(code.to_string()))
    }
}

impl From<&str> for ErrorCode {
    fn from(code: &str) -> Self {
        ErrorCode::parse(code)
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        Ok(ErrorCode::parse(&code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_travel_as_their_strings_and_unknown_ones_are_kept() {
        let strings: Vec<&str> = ErrorCode::KNOWN.iter().map(ErrorCode::as_str).collect();
        assert_eq!(
            strings,
            [
                "bad_request",
                "spawn_failed",
                "no_such_process",
                "too_many_processes",
                "too_many_streams",
                "stdin_unavailable",
                "not_a_terminal",
                "process_exited",
                "not_found",
                "is_directory",
                "not_a_directory",
                "not_a_file",
                "read_only",
                "permission_denied",
                "too_large",
                "no_space",
                "invalid_path",
                "busy",
                "io_error",
                "cancelled",
                "exists",
                "connection_refused",
                "cross_device",
                "kernel_unavailable",
            ]
        );
        for code in ErrorCode::KNOWN {
            let encoded = serde_json::to_string(&code).unwrap();
            assert_eq!(encoded, format!("\"{}\"", code.as_str()));
            assert_eq!(serde_json::from_str::<ErrorCode>(&encoded).unwrap(), code);
        }
        let unknown: ErrorCode = serde_json::from_str(r#""format_disk""#).unwrap();
        assert_eq!(unknown, ErrorCode::Other("format_disk".into()));
        assert_eq!(serde_json::to_string(&unknown).unwrap(), r#""format_disk""#);
    }
}
