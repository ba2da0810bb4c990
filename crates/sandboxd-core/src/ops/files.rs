//! A session's files. The sandbox's agent does every operation inside the sandbox; the service
//! never opens a sandbox path itself. Relative paths are relative to the sandbox's working
//! directory. Contents stream through in both directions and are never logged; the activity
//! log gets the path, the byte count and how it went.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::state::activity::{agent_text, Caller, PendingEntry};
use crate::state::sessions::rfc3339;
use sandboxd_agent_proto::{self as proto, EntryKind, UploadError};
use sandboxd_api::{Chunks, FileDeleted, FileEntry, FileKind, FileList, FileWritten};
use sandboxd_backend::{AgentStream, WORKDIR};
use sandboxd_config::format_bytes;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::io::AsyncRead;

/// Entries a listing returns at most; beyond, it says `truncated`.
const MAX_LIST_ENTRIES: u32 = 10_000;
/// Linux's PATH_MAX: a longer path cannot be opened anyway.
const MAX_PATH_LEN: usize = 4096;
/// The longest wait for one step of an operation: an answer or a chunk from the agent, or
/// the client's next chunk of an upload.
pub(crate) const STEP_TIMEOUT: Duration = Duration::from_secs(60);

impl Core {
    /// Lists a directory (the working directory by default); a symlink is described, not
    /// followed.
    pub async fn list_files(
        &self,
        caller: &Caller,
        session_id: &str,
        path: Option<String>,
    ) -> Result<FileList, Error> {
        let path = checked_path(path.unwrap_or_else(|| ".".into()))?;
        let session = self.running_session(caller, session_id, "list_files")?;
        let mut entry = self.entry(caller, &session, "list_files", &path);
        let result = async {
            let agent = self.connect(&session).await?;
            proto::list_dir(agent, &path, MAX_LIST_ENTRIES, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::ListFiles, e))
        }
        .await;
        let listing = entry.finish(result)?;
        let mut entries: Vec<FileEntry> = listing.entries.into_iter().map(file_entry).collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(FileList {
            path,
            entries,
            truncated: listing.truncated,
        })
    }

    /// Opens a file to read it chunk by chunk. A file over the transfer limit
    /// (`policy.max_upload_bytes`) is refused, and so is a sparse one whose holes exceed the
    /// sandbox's writable size: it cost the sandbox nothing and would be served whole.
    pub async fn read_file(
        &self,
        caller: &Caller,
        session_id: &str,
        path: Option<String>,
    ) -> Result<Download, Error> {
        let path = checked_path(required(path)?)?;
        let session = self.running_session(caller, session_id, "read_file")?;
        let mut entry = self.entry(caller, &session, "read_file", &path);
        let policy = &self.config().policy;
        let limits = proto::ReadLimits {
            unsized_limit: policy.max_output_bytes,
            max_size: policy.max_upload_bytes,
            // /tmp and the working directory are tmpfs of this size: a file with more holes
            // than that is sparse beyond anything the sandbox could hold.
            max_unallocated: self
                .config()
                .runtime(&session.runtime)
                .map_or(policy.max_upload_bytes, |r| r.limits.tmpfs_size_bytes),
        };
        let opened = async {
            let agent = self.connect(&session).await?;
            let file = proto::open_file(agent, &path, limits, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::ReadFile, e))?;
            // The agent refuses such a file itself; what it announces becomes a
            // Content-Length, so it is never trusted past the limit.
            match file.size() {
                Some(size) if size > limits.max_size => Err(Error::PayloadTooLarge(format!(
                    "the file is {size} bytes, over the service's download limit of {} (policy.max_upload_bytes)",
                    format_bytes(limits.max_size)
                ))),
                _ => Ok(file),
            }
        }
        .await;
        let file = opened.map_err(|e| entry.fail(e))?;
        entry.bytes = Some(0);
        Ok(Download { file, entry })
    }

    /// Writes a file whole from `source` (replacing it), creating missing parent directories,
    /// with `mode`'s permission bits (octal, as `"0755"`; 0644 without one).
    /// `declared_length`, when the caller knows it, refuses an oversized upload at once.
    pub async fn write_file(
        &self,
        caller: &Caller,
        session_id: &str,
        path: Option<String>,
        mode: Option<&str>,
        declared_length: Option<u64>,
        source: impl AsyncRead + Unpin + Send,
    ) -> Result<FileWritten, Error> {
        let path = checked_path(required(path)?)?;
        let mode = mode.map(permission_bits).transpose()?;
        let session = self.running_session(caller, session_id, "write_file")?;
        let mut entry = self.entry(caller, &session, "write_file", &path);
        let limit = self.config().policy.max_upload_bytes;
        let too_large = || {
            Error::PayloadTooLarge(format!(
                "the upload is over the service's limit of {} (policy.max_upload_bytes); send a smaller file",
                format_bytes(limit)
            ))
        };
        let result = async {
            if declared_length.is_some_and(|length| length > limit) {
                return Err(too_large());
            }
            let agent = self.connect(&session).await?;
            match proto::upload_file(agent, &path, mode, limit, source, STEP_TIMEOUT).await {
                Ok(bytes) => Ok(bytes),
                Err(UploadError::TooLarge { .. }) => Err(too_large()),
                Err(UploadError::Source(e)) => Err(Error::bad_request(
                    "upload_interrupted",
                    format!(
                        "the upload's body could not be read to its end ({e}); nothing was written"
                    ),
                )),
                Err(UploadError::Proto(e)) => Err(agent_error(Operation::WriteFile, e)),
            }
        }
        .await;
        entry.bytes = result.as_ref().ok().copied();
        let bytes = entry.finish(result)?;
        Ok(FileWritten { path, bytes })
    }

    /// Deletes a file, or a directory and everything in it with `recursive`. Nothing at
    /// `path` is no error: what was asked for is so.
    pub async fn delete_file(
        &self,
        caller: &Caller,
        session_id: &str,
        path: Option<String>,
        recursive: bool,
    ) -> Result<FileDeleted, Error> {
        let path = required(path)?;
        // As rm(1) does: removing what `.`, `..` or `/` name would empty a tree and then fail.
        if let "" | "." | ".." = path.trim_end_matches('/').rsplit('/').next().unwrap_or("") {
            return Err(invalid_path(format!(
                "{path} does not name an entry to delete"
            )));
        }
        let path = checked_path(path)?;
        let session = self.running_session(caller, session_id, "delete_file")?;
        let mut entry = self.entry(caller, &session, "delete_file", &path);
        let result = async {
            let agent = self.connect(&session).await?;
            proto::delete_path(agent, &path, recursive, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::DeleteFile, e))
        }
        .await;
        entry.finish(result)?;
        Ok(FileDeleted { path })
    }
}

/// A file being read. Its activity entry is recorded as soon as the last byte is in hand, or
/// when it is dropped unfinished (the reader went away).
pub struct Download {
    file: proto::FileDownload<AgentStream>,
    entry: PendingEntry,
}

impl Download {
    /// The file's size, when the agent knows it.
    pub fn size(&self) -> Option<u64> {
        self.file.size()
    }

    /// The next chunk, or `None` at the end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Error> {
        match self.file.next_chunk().await {
            Ok(Some(chunk)) => {
                *self.entry.bytes.get_or_insert(0) += chunk.len() as u64;
                if self.file.is_finished() {
                    self.entry.end(None);
                }
                Ok(Some(chunk))
            }
            Ok(None) => {
                self.entry.end(None);
                Ok(None)
            }
            Err(e) => {
                let message = agent_text(&format!("the file transfer broke off: {e}"));
                self.entry.end(Some(message.clone()));
                Err(Error::Agent(message))
            }
        }
    }
}

/// What [`sandboxd_api::read_bounded`] reads, for a face that wants the whole file or nothing.
impl Chunks for Download {
    type Chunk = Vec<u8>;
    type Error = Error;

    fn announced_size(&self) -> Option<u64> {
        self.size()
    }

    async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Error> {
        Download::next_chunk(self).await
    }
}

fn file_kind(kind: EntryKind) -> FileKind {
    match kind {
        EntryKind::File => FileKind::File,
        EntryKind::Dir => FileKind::Dir,
        EntryKind::Symlink => FileKind::Symlink,
        EntryKind::Other => FileKind::Other,
    }
}

pub(crate) fn file_entry(entry: proto::DirEntry) -> FileEntry {
    FileEntry {
        name: entry.name,
        kind: file_kind(entry.kind),
        target_type: entry.target_kind.map(file_kind),
        size: entry.size,
        mode: format!("{:04o}", entry.mode),
        // Any time can be set on a file; one out of the formatter's range is shown as null.
        modified: OffsetDateTime::from_unix_timestamp(entry.modified_secs)
            .and_then(|at| at.replace_nanosecond(entry.modified_nanos))
            .ok()
            .map(rfc3339),
    }
}

/// A file mode as permission bits in octal, `0000` to `0777`: setuid, setgid and sticky are
/// refused, so an upload never makes a privileged program.
fn permission_bits(mode: &str) -> Result<u32, Error> {
    u32::from_str_radix(mode, 8)
        .ok()
        .filter(|bits| mode.len() <= 4 && *bits <= 0o777)
        .ok_or_else(|| {
            Error::bad_request(
                "invalid_request",
                format!(
                    "`mode` {mode:?} is not permission bits: give octal digits from 0000 to 0777, e.g. 0755"
                ),
            )
        })
}

pub(crate) fn required(path: Option<String>) -> Result<String, Error> {
    path.ok_or_else(|| {
        invalid_path(
            "name the file with `?path=`, relative to the sandbox's working directory or absolute",
        )
    })
}

/// Refuses a path the agent could not use, before anything is sent to it, and answers it
/// absolute, as every answer names it: see [`absolute`].
pub(crate) fn checked_path(path: String) -> Result<String, Error> {
    if path.is_empty() {
        return Err(invalid_path("`path` is empty"));
    }
    if path.contains('\0') {
        return Err(invalid_path("`path` contains a NUL byte"));
    }
    if path.len() > MAX_PATH_LEN {
        return Err(invalid_path(format!(
            "`path` is longer than {MAX_PATH_LEN} bytes"
        )));
    }
    Ok(absolute(&path))
}

/// `path` made absolute by its text alone, as envd and Go's `filepath.Abs` do: a relative
/// path is joined to the working directory, and `.`, `..` and empty components are
/// resolved by name (`..` of `/` is `/`). Nothing in the sandbox is looked at: a symlink
/// on the way is the agent's to follow.
fn absolute(path: &str) -> String {
    let base = if path.starts_with('/') { "" } else { WORKDIR };
    let mut parts = Vec::new();
    for part in base.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    format!("/{}", parts.join("/"))
}

fn invalid_path(message: impl Into<String>) -> Error {
    Error::bad_request(proto::ERROR_INVALID_PATH, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_answered_absolute_by_their_text() {
        for (given, answered) in [
            ("a.txt", "/workspace/a.txt"),
            (".", "/workspace"),
            ("./d/../e/", "/workspace/e"),
            ("../etc//passwd", "/etc/passwd"),
            ("/home/user/./x", "/home/user/x"),
            ("/../..", "/"),
            ("/", "/"),
        ] {
            assert_eq!(checked_path(given.into()).unwrap(), answered, "{given}");
        }
        assert!(checked_path(String::new()).is_err());
        assert!(checked_path("a\0b".into()).is_err());
    }

    #[test]
    fn a_mode_is_permission_bits_only() {
        assert_eq!(permission_bits("0755").unwrap(), 0o755);
        assert_eq!(permission_bits("644").unwrap(), 0o644);
        for refused in ["4755", "1777", "0800", "", "rwx", "00755", "-1"] {
            assert!(permission_bits(refused).is_err(), "{refused}");
        }
    }
}
