//! File operations: listing, reading, writing, deleting, describing, creating directories,
//! moving and watching, and whole trees as tar archives, done by the agent on its own view
//! of the filesystem. Relative paths resolve against the agent's working directory (the
//! sandbox's) and symlinks resolve inside the sandbox, because that is where the agent runs:
//! the sandbox confines these operations, no path check here does. What the service asks for
//! is bounded all the same: entries listed, bytes read from files of unknown size, and bytes
//! written.
//!
//! Each function answers one request on `connection`. An `Err` means the connection is
//! unusable; a refused operation is answered with an
//! [`Event::Error`](sandboxd_agent_proto::Event::Error) and is `Ok`.

mod archive;
mod delete;
mod meta;
mod read;
mod refusal;
mod tar_read;
#[cfg(test)]
mod test_support;
mod unpack;
mod watch;
mod write;

pub use archive::read_archive;
pub use delete::delete;
pub use meta::{make_dir, move_path, stat};
pub use read::{list_dir, read_file, ReadLimits};
pub use unpack::write_archive;
pub use watch::watch;
pub use write::write_file;
