//! A volume's files without a session: a file read or written whole, streamed, from the
//! host. The backend opens it confined to the volume (no symlink followed, no other
//! filesystem reached); an upload counts against `policy.max_upload_bytes` like a session's
//! and stops at the volume's size with "no space".

use crate::core::Core;
use crate::error::Error;
use crate::ops::volumes::volume_host_error;
use crate::state::activity::Caller;
use sandboxd_api::FileWritten;
use sandboxd_config::format_bytes;
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Bytes read from a volume's file at a time.
const CHUNK: usize = 64 << 10;

/// A volume's file being read.
pub struct VolumeDownload {
    file: tokio::fs::File,
    size: u64,
}

impl VolumeDownload {
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The next chunk, or `None` at the end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let mut buffer = vec![0; CHUNK];
        let read = self
            .file
            .read(&mut buffer)
            .await
            .map_err(volume_host_error)?;
        if read == 0 {
            return Ok(None);
        }
        buffer.truncate(read);
        Ok(Some(buffer))
    }

    /// The file's chunks as a stream, for a face to send as a body.
    pub fn into_stream(self) -> impl futures_util::Stream<Item = io::Result<Vec<u8>>> {
        futures_util::stream::try_unfold(self, |mut download| async move {
            match download.next_chunk().await {
                Ok(Some(chunk)) => Ok(Some((chunk, download))),
                Ok(None) => Ok(None),
                Err(e) => Err(io::Error::other(e.to_string())),
            }
        })
    }
}

/// What a failure to open a volume's file means to the caller.
/// Where the backend keeps a volume's data out of the host's reach (Kubernetes: a claim only
/// a pod on a node can mount), its files are reached through a session that mounts it.
pub(crate) fn files_need_a_session() -> Error {
    Error::bad_request(
        "volumes_unavailable",
        "this service's backend keeps a volume's files where only a sandbox reaches them (on Kubernetes, a PersistentVolumeClaim that only a pod can mount): open a session that mounts the volume and use that session's files",
    )
}

pub(crate) fn open_error(name: &str, path: &str, e: io::Error) -> Error {
    let at = format!("{path} of volume \"{name}\"");
    match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound(format!("no file {at}")),
        io::ErrorKind::IsADirectory => Error::Conflict {
            code: "is_a_directory",
            message: format!("{at} is a directory"),
        },
        io::ErrorKind::NotADirectory => Error::Conflict {
            code: "not_a_directory",
            message: format!("a part of {at} is not a directory"),
        },
        io::ErrorKind::StorageFull => {
            Error::InsufficientStorage(format!("volume \"{name}\" is full"))
        }
        // ELOOP (a symlink), EXDEV (another filesystem), EACCES, a FIFO or a device.
        _ => Error::Forbidden {
            code: "path_refused",
            message: format!(
                "{at} cannot be reached from the host ({e}): files of a volume are read and written there without following symlinks, and only regular files"
            ),
        },
    }
}

pub(crate) fn checked_path(path: Option<String>) -> Result<String, Error> {
    let path = path.filter(|p| !p.is_empty()).ok_or_else(|| {
        Error::bad_request(
            "invalid_request",
            "`path` is required: the file in the volume",
        )
    })?;
    if path.len() > 4096 || path.contains('\0') {
        return Err(Error::bad_request(
            "invalid_request",
            "`path` is too long or holds a NUL byte",
        ));
    }
    Ok(path)
}

impl Core {
    /// Opens a file of the caller's volume for reading.
    pub async fn read_volume_file(
        &self,
        caller: &Caller,
        name: &str,
        path: Option<String>,
    ) -> Result<VolumeDownload, Error> {
        let path = checked_path(path)?;
        let tenant = caller.principal.tenant();
        let volume = self.volume_for(caller, tenant, name, "read_volume_file")?;
        let file = self.open_volume_file(name, &volume.id, &path, false)?;
        let size = file.metadata().map_err(volume_host_error)?.len();
        Ok(VolumeDownload {
            file: tokio::fs::File::from_std(file),
            size,
        })
    }

    /// The volume's file at `path`, opened on the host without following a symlink, for
    /// writing (created, emptied) or reading.
    fn open_volume_file(
        &self,
        name: &str,
        volume_id: &str,
        path: &str,
        write: bool,
    ) -> Result<std::fs::File, Error> {
        self.backend()
            .open_volume_file(volume_id, path, write)
            .ok_or_else(files_need_a_session)?
            .map_err(|e| open_error(name, path, e))
    }

    /// Writes a file of the caller's volume whole (replacing it), making missing directories.
    pub async fn write_volume_file(
        &self,
        caller: &Caller,
        name: &str,
        path: Option<String>,
        declared_length: Option<u64>,
        mut source: impl AsyncRead + Unpin + Send,
    ) -> Result<FileWritten, Error> {
        let path = checked_path(path)?;
        let tenant = caller.principal.tenant();
        let volume = self.volume_for(caller, tenant, name, "write_volume_file")?;
        let limit = self.config().policy.max_upload_bytes;
        let too_large = || {
            Error::PayloadTooLarge(format!(
                "the upload is over the service's limit of {} (policy.max_upload_bytes); send a smaller file",
                format_bytes(limit)
            ))
        };
        if declared_length.is_some_and(|length| length > limit) {
            return Err(too_large());
        }
        let file = self.open_volume_file(name, &volume.id, &path, true)?;
        let mut file = tokio::fs::File::from_std(file);
        let written_error = |e: io::Error| {
            match e.kind() {
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => {
                Error::InsufficientStorage(format!(
                    "volume \"{name}\" is full (its size is its cap); {path} was written in part: delete files in it, or make a larger volume"
                ))
            }
            _ => volume_host_error(e),
        }
        };
        let mut bytes = 0u64;
        let mut buffer = vec![0; CHUNK];
        loop {
            let read = source.read(&mut buffer).await.map_err(|e| {
                Error::bad_request(
                    "upload_interrupted",
                    format!("the upload broke off after {bytes} bytes: {e}"),
                )
            })?;
            if read == 0 {
                break;
            }
            bytes += read as u64;
            if bytes > limit {
                return Err(too_large());
            }
            file.write_all(&buffer[..read])
                .await
                .map_err(written_error)?;
        }
        file.sync_all().await.map_err(written_error)?;
        Ok(FileWritten { path, bytes })
    }
}
