//! The codes an agent's `Event::Error` carries; the service's API answers file errors with
//! the same ones.

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
