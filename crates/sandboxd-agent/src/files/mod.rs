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
#[cfg(test)]
mod test_support;
mod unpack;
mod watch;
mod write;

use sandboxd_agent_proto::{FilesRequest, ProtoError};
use std::os::unix::net::UnixStream;

pub use archive::read_archive;
pub use delete::delete;
pub use meta::{make_dir, move_path, stat};
pub use read::{list_dir, read_file, ReadLimits};
pub use unpack::write_archive;
pub use watch::watch;
pub use write::write_file;

/// The table of the file requests: each to its handler.
pub(crate) fn serve(c: &mut UnixStream, request: FilesRequest) -> Result<(), ProtoError> {
    match request {
        FilesRequest::ListDir { path, max_entries } => list_dir(c, &path, max_entries),
        FilesRequest::ReadFile {
            path,
            unsized_limit,
            max_size,
            max_unallocated,
        } => {
            let limits = ReadLimits {
                unsized_limit,
                max_size,
                max_unallocated,
            };
            read_file(c, &path, limits)
        }
        FilesRequest::WriteFile {
            path,
            max_bytes,
            mode,
        } => write_file(c, &path, mode, max_bytes),
        FilesRequest::Delete { path, recursive } => delete(c, &path, recursive),
        FilesRequest::Stat { path } => stat(c, &path),
        FilesRequest::MakeDir { path, parents } => make_dir(c, &path, parents),
        FilesRequest::Move {
            from,
            to,
            overwrite,
        } => move_path(c, &from, &to, overwrite),
        FilesRequest::Watch {
            path,
            recursive,
            max_watches,
        } => watch(c, &path, recursive, max_watches),
        FilesRequest::ReadArchive { path, max_bytes } => read_archive(c, &path, max_bytes),
        FilesRequest::WriteArchive { path, max_bytes } => write_archive(c, &path, max_bytes),
    }
}
