//! File operations: listing, reading, writing, deleting, describing, creating directories,
//! moving and watching, done by the agent on its own view
//! of the filesystem. Relative paths resolve against the agent's working directory (the
//! sandbox's) and symlinks resolve inside the sandbox, because that is where the agent runs:
//! the sandbox confines these operations, no path check here does. What the service asks for
//! is bounded all the same: entries listed, bytes read from files of unknown size, and bytes
//! written.
//!
//! Each function answers one request on `connection`. An `Err` means the connection is
//! unusable; a refused operation is answered with an
//! [`Event::Error`](sandboxd_agent_proto::Event::Error) and is `Ok`.

mod delete;
mod meta;
mod read;
mod refusal;
#[cfg(test)]
mod test_support;
mod watch;
mod write;

pub use delete::delete;
pub use meta::{make_dir, move_path, stat};
pub use read::{list_dir, read_file, ReadLimits};
pub use watch::watch;
pub use write::write_file;
