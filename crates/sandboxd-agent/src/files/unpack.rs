//! Extracting an uploaded tar, confined to its target directory: the entries land in a hidden
//! directory inside the target, checked one by one by the shared extractor
//! ([`sandboxd_agent_proto::tar_extract`]: names stay inside, never through a symlink; no hard
//! links or special files; plain modes; contents capped), and move into place only once the
//! whole archive was taken. A refusal or a broken upload leaves nothing.

use super::refusal::{refuse, Refusal};
use super::write::create_missing_dirs;
use sandboxd_agent_proto::tar_extract::{
    extract, remove_extracted, ExtractError, Symlinks, WORK_DIR_MODE,
};
use sandboxd_agent_proto::tar_read::TarReader;
use sandboxd_agent_proto::{
    read_frame, write_json, ArchiveSummary, ErrorCode, Event, FilesEvent, FrameKind, ProtoError,
    Request,
};
use std::fs::{self, DirBuilder};
use std::io::{self, ErrorKind, Read};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// As for a file upload: a service that stalls must not keep a half-extracted tree forever.
const UPLOAD_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

pub fn write_archive(
    connection: &mut UnixStream,
    path: &str,
    max_bytes: u64,
) -> Result<(), ProtoError> {
    connection.set_read_timeout(Some(UPLOAD_IDLE_TIMEOUT))?;
    let answered = receive_archive(connection, path, max_bytes);
    if answered.is_ok() {
        connection.set_read_timeout(None)?;
    }
    answered
}

/// Answers only once what a refused upload made is gone (and, once accepted, the work
/// directory), so whoever reads the answer never sees a half-removed tree.
fn receive_archive(
    connection: &mut UnixStream,
    path: &str,
    max_bytes: u64,
) -> Result<(), ProtoError> {
    match unpack(connection, path, max_bytes)? {
        Ok(summary) => write_json(connection, &FilesEvent::ArchiveWritten(summary)),
        Err(refusal) => refuse(connection, refusal),
    }
}

/// Unpacks the upload and moves it into place; every return drops `work` and then
/// `new_dirs`, removing what was made unless it was kept.
fn unpack(
    connection: &mut UnixStream,
    path: &str,
    max_bytes: u64,
) -> Result<Result<ArchiveSummary, Refusal>, ProtoError> {
    let target = match std::path::absolute(path) {
        Ok(target) => target,
        Err(e) => return Ok(Err(Refusal::io(path, e))),
    };
    let new_dirs = match create_missing_dirs(&target) {
        Ok(new_dirs) => new_dirs,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let work = match WorkDir::create(&target) {
        Ok(work) => work,
        Err(e) => return Ok(Err(Refusal::io(path, e))),
    };
    write_json(connection, &Event::WriteReady)?;
    let mut upload = Upload {
        connection,
        buffer: Vec::new(),
        taken: 0,
        ended: false,
        failure: None,
    };
    // The sandbox confines what its symlinks reach; the names are checked all the same.
    let extracted = extract(
        &mut TarReader::new(&mut upload),
        &work.path,
        max_bytes,
        Symlinks::AsStored,
        |_, _| {},
    )
    .map_err(extract_refusal);
    let summary = match (upload.failure, extracted) {
        (Some(Interruption::Broken(e)), _) => return Err(e),
        (Some(Interruption::Cancelled), _) => {
            return Ok(Err(Refusal::new(
                ErrorCode::Cancelled,
                "upload cancelled".into(),
            )));
        }
        (Some(Interruption::Request), _) => {
            let refusal = Refusal::new(ErrorCode::BadRequest, "a request during an upload".into());
            return Ok(Err(refusal));
        }
        (None, Err(refusal)) => return Ok(Err(refusal)),
        (None, Ok(summary)) => summary,
    };
    if !upload.ended {
        let message = "data follows the archive's end marker".into();
        return Ok(Err(Refusal::new(ErrorCode::BadRequest, message)));
    }
    let moved = work.move_into(&target, path);
    if moved.is_ok() {
        new_dirs.keep();
    }
    Ok(moved.map(|()| summary))
}

/// An extraction's refusal, coded for the service.
fn extract_refusal(error: ExtractError) -> Refusal {
    match error {
        ExtractError::TooLarge(message) => Refusal::new(ErrorCode::TooLarge, message),
        ExtractError::Invalid(message) => Refusal::new(ErrorCode::InvalidPath, message),
        ExtractError::Io { what, error } => Refusal::io(&what, error),
    }
}

/// The hidden directory an archive is extracted into, inside its target so that moving the
/// result into place is a rename on the same filesystem. Dropping it removes it.
struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    fn create(target: &Path) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let serial = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = target.join(format!(".sandboxd-unpack-{}-{serial}", std::process::id()));
            match DirBuilder::new().mode(WORK_DIR_MODE).create(&path) {
                Ok(()) => return Ok(Self { path }),
                Err(e) if e.kind() == ErrorKind::AlreadyExists && serial < 1000 => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Renames each top-level entry into `target`, never over an existing name; on a
    /// failure the ones already moved go back, so nothing is left half done.
    fn move_into(&self, target: &Path, shown: &str) -> Result<(), Refusal> {
        let names: Vec<_> = fs::read_dir(&self.path)
            .and_then(|dir| dir.map(|e| e.map(|e| e.file_name())).collect())
            .map_err(|e| Refusal::io(shown, e))?;
        let mut moved = Vec::new();
        for name in names {
            let (from, to) = (self.path.join(&name), target.join(&name));
            if let Err(e) = crate::sys::rename_no_replace(&from, &to) {
                for name in moved.iter().rev() {
                    let _ =
                        crate::sys::rename_no_replace(&target.join(name), &self.path.join(name));
                }
                let shown_name = format!("{shown}/{}", name.to_string_lossy());
                return Err(if e.kind() == ErrorKind::AlreadyExists {
                    let message = format!(
                        "{shown_name} already exists; remove it first or extract elsewhere"
                    );
                    Refusal::new(ErrorCode::Busy, message)
                } else {
                    Refusal::io(&shown_name, e)
                });
            }
            moved.push(name);
        }
        Ok(())
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        remove_extracted(&self.path);
    }
}

/// Why the upload's stream stopped before its end.
enum Interruption {
    Cancelled,
    /// A request other than a cancel.
    Request,
    Broken(ProtoError),
}

/// The upload's stdin frames as a byte stream; the empty frame is its end.
struct Upload<'a> {
    connection: &'a mut UnixStream,
    buffer: Vec<u8>,
    taken: usize,
    ended: bool,
    failure: Option<Interruption>,
}

impl Read for Upload<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.taken == self.buffer.len() {
            if self.ended {
                return Ok(0);
            }
            let frame = match read_frame(self.connection) {
                Ok(frame) => frame,
                Err(e) => return Err(self.stop(Interruption::Broken(e))),
            };
            match frame.kind {
                FrameKind::Stdin if frame.payload.is_empty() => self.ended = true,
                FrameKind::Stdin => {
                    self.buffer = frame.payload;
                    self.taken = 0;
                }
                FrameKind::Json => {
                    let why = match frame.parse_json::<Request>() {
                        Ok(Request::Cancel) => Interruption::Cancelled,
                        _ => Interruption::Request,
                    };
                    return Err(self.stop(why));
                }
                kind => {
                    let broken =
                        ProtoError::Unexpected(format!("a {kind:?} frame during an upload"));
                    return Err(self.stop(Interruption::Broken(broken)));
                }
            }
        }
        let take = (self.buffer.len() - self.taken).min(out.len());
        out[..take].copy_from_slice(&self.buffer[self.taken..self.taken + take]);
        self.taken += take;
        Ok(take)
    }
}

impl Upload<'_> {
    fn stop(&mut self, why: Interruption) -> io::Error {
        self.failure = Some(why);
        io::Error::other("the upload stopped")
    }
}

#[cfg(test)]
#[path = "unpack_tests.rs"]
mod tests;
