//! A session's directory trees as tar archives, both ways, done by the sandbox's agent (see
//! `files`): a download is the tar of a directory, symlinks as symlinks; an upload is
//! extracted under a directory, confined to it, and appears whole or not at all. Both are
//! bounded by the transfer limit (`policy.max_upload_bytes`) in bytes of file contents.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::ops::files::{checked_path, required};
use crate::state::activity::{agent_text, Caller, PendingEntry};
use sandboxd_agent_proto::{self as proto, ErrorCode, ProtoError, UploadError};
use sandboxd_api::ArchiveWritten;
use sandboxd_backend::AgentStream;
use sandboxd_config::format_bytes;
use std::time::Duration;
use tokio::io::AsyncRead;

/// As for single files: the longest wait for one step of a transfer.
const STEP_TIMEOUT: Duration = Duration::from_secs(60);

impl Core {
    /// Opens the directory tree at `path` as a tar, to read chunk by chunk. A tree whose files
    /// hold more than the transfer limit is refused before anything is sent.
    pub async fn download_archive(
        &self,
        caller: &Caller,
        session_id: &str,
        path: Option<String>,
    ) -> Result<ArchiveDownload, Error> {
        let path = checked_path(required(path)?)?;
        let session = self.running_session(caller, session_id, "download_archive")?;
        let mut entry = self.entry(caller, &session, "download_archive", &path);
        let limit = self.config().policy.max_upload_bytes;
        let opened = async {
            let agent = self.connect(&session).await?;
            proto::open_archive(agent, &path, limit, STEP_TIMEOUT)
                .await
                .map_err(|e| archive_error(Operation::ListFiles, e, limit))
        }
        .await;
        let archive = opened.map_err(|e| entry.fail(e))?;
        entry.bytes = Some(archive.content_bytes());
        Ok(ArchiveDownload { archive, entry })
    }

    /// Extracts the tar read from `source` under the directory `path` (created with its
    /// parents), confined to it. Nothing appears unless the whole archive is accepted.
    pub async fn upload_archive(
        &self,
        caller: &Caller,
        session_id: &str,
        path: Option<String>,
        source: impl AsyncRead + Unpin + Send,
    ) -> Result<ArchiveWritten, Error> {
        let path = checked_path(required(path)?)?;
        let session = self.running_session(caller, session_id, "upload_archive")?;
        let mut entry = self.entry(caller, &session, "upload_archive", &path);
        let limit = self.config().policy.max_upload_bytes;
        let result = async {
            let agent = self.connect(&session).await?;
            match proto::upload_archive(agent, &path, limit, source, STEP_TIMEOUT).await {
                Ok(summary) => Ok(summary),
                Err(UploadError::TooLarge { .. }) => Err(too_large(limit)),
                Err(UploadError::Source(e)) => Err(Error::bad_request(
                    "upload_interrupted",
                    format!(
                        "the archive could not be read to its end ({e}); nothing was extracted"
                    ),
                )),
                Err(UploadError::Proto(e)) => Err(archive_error(Operation::WriteFile, e, limit)),
            }
        }
        .await;
        entry.bytes = result.as_ref().ok().map(|summary| summary.bytes);
        let summary = entry.finish(result)?;
        Ok(ArchiveWritten {
            path,
            files: summary.files,
            dirs: summary.dirs,
            symlinks: summary.symlinks,
            bytes: summary.bytes,
        })
    }
}

fn too_large(limit: u64) -> Error {
    Error::PayloadTooLarge(format!(
        "the archive's files hold more than the service's transfer limit of {} (policy.max_upload_bytes)",
        format_bytes(limit)
    ))
}

/// The agent's refusal for being over the limit says so in the service's words; the others
/// are as for single files.
fn archive_error(operation: Operation, error: ProtoError, limit: u64) -> Error {
    match &error {
        ProtoError::Agent { code, message }
            if *code == ErrorCode::TooLarge && message.contains("limit") =>
        {
            too_large(limit)
        }
        _ => agent_error(operation, error),
    }
}

/// A tree being read as a tar. Its activity entry is recorded once the agent confirmed the
/// end, or when it is dropped unfinished (the reader went away).
pub struct ArchiveDownload {
    archive: proto::ArchiveDownload<AgentStream>,
    entry: PendingEntry,
}

impl ArchiveDownload {
    /// The next chunk of the tar, or `None` at its end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Error> {
        match self.archive.next_chunk().await {
            Ok(Some(chunk)) => Ok(Some(chunk)),
            Ok(None) => {
                self.entry.end(None);
                Ok(None)
            }
            Err(e) => {
                let message = agent_text(&format!("the archive broke off: {e}"));
                self.entry.end(Some(message.clone()));
                Err(Error::Agent(message))
            }
        }
    }
}
