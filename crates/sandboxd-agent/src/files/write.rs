//! Writing files: an upload lands in a temporary file, renamed into place once complete.

use super::refusal::{refuse, Refusal};
use sandboxd_agent_proto::{
    read_frame, write_json, ErrorCode, Event, FilesEvent, FrameKind, ProtoError, Request,
};
use std::fs::{self, DirBuilder, File, OpenOptions, Permissions};
use std::io::{self, ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// An upload waits this long at most for the service's next frame; a service that stalls
/// without closing the connection must not keep a temporary file forever.
const UPLOAD_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Written files get exactly this mode, whatever the umask, unless the upload names one.
const FILE_MODE: u32 = 0o644;
/// What of an upload's mode is kept: the permission bits, never setuid, setgid or sticky
/// (the service is not to hand a sandbox a setuid program).
const PERMISSION_BITS: u32 = 0o777;
const DIR_MODE: u32 = 0o755;
/// How an upload's temporary file is named: hidden, beside its destination. Watches leave
/// these out (see `watch.rs`).
pub(super) const UPLOAD_PREFIX: &str = ".sandboxd-upload-";
/// Names tried for an upload's temporary file before giving up: something in the sandbox may
/// have taken the next one.
const TEMP_NAME_ATTEMPTS: u32 = 16;

/// Receives a file in stdin frames into a temporary file beside its destination and renames
/// it into place once the empty frame arrives, with `mode`'s permission bits (0644 without).
pub fn write_file(
    connection: &mut UnixStream,
    path: &str,
    mode: Option<u32>,
    max_bytes: u64,
) -> Result<(), ProtoError> {
    connection.set_read_timeout(Some(UPLOAD_IDLE_TIMEOUT))?;
    let mode = mode.map_or(FILE_MODE, |mode| mode & PERMISSION_BITS);
    let answered = receive_file(connection, path, mode, max_bytes);
    if answered.is_ok() {
        connection.set_read_timeout(None)?;
    }
    answered
}

fn receive_file(
    connection: &mut UnixStream,
    path: &str,
    mode: u32,
    max_bytes: u64,
) -> Result<(), ProtoError> {
    let (mut temp, destination) = match prepare_write(path, mode) {
        Ok(prepared) => prepared,
        Err(refusal) => return refuse(connection, refusal),
    };
    write_json(connection, &Event::WriteReady)?;
    let mut received = 0u64;
    // Every early return drops `temp`, which removes the temporary file.
    loop {
        let frame = read_frame(connection)?;
        match frame.kind {
            FrameKind::Stdin if frame.payload.is_empty() => break,
            FrameKind::Stdin => {
                received += frame.payload.len() as u64;
                if received > max_bytes {
                    drop(temp);
                    let message = format!("the upload to {path} is over {max_bytes} bytes");
                    return refuse(connection, Refusal::new(ErrorCode::TooLarge, message));
                }
                if let Err(e) = temp.file.write_all(&frame.payload) {
                    drop(temp);
                    return refuse(connection, Refusal::io(path, e));
                }
            }
            FrameKind::Json => {
                drop(temp);
                let refusal = match frame.parse_json::<Request>() {
                    Ok(Request::Cancel) => {
                        Refusal::new(ErrorCode::Cancelled, "upload cancelled".into())
                    }
                    _ => Refusal::new(ErrorCode::BadRequest, "a request during an upload".into()),
                };
                return refuse(connection, refusal);
            }
            FrameKind::Stdout | FrameKind::Stderr => {
                return Err(ProtoError::Unexpected(format!(
                    "a {:?} frame during an upload",
                    frame.kind
                )))
            }
        }
    }
    match temp.commit(&destination) {
        Ok(()) => write_json(connection, &FilesEvent::FileWritten { bytes: received }),
        Err(e) => refuse(connection, Refusal::io(path, e)),
    }
}

/// Where an upload lands and its temporary file there. An existing symlink is followed, so
/// the upload replaces the file it names, as a shell's `>` would; a directory or a special
/// file is refused; missing parent directories are created (and removed again if the upload
/// does not complete).
fn prepare_write(path: &str, mode: u32) -> Result<(TempFile, PathBuf), Refusal> {
    let requested = std::path::absolute(path).map_err(|e| Refusal::io(path, e))?;
    let destination = match fs::canonicalize(&requested) {
        Ok(existing) => {
            let meta = fs::metadata(&existing).map_err(|e| Refusal::io(path, e))?;
            if meta.is_dir() {
                let message = format!("{path} is a directory; name a file inside it");
                return Err(Refusal::new(ErrorCode::IsDirectory, message));
            }
            if !meta.is_file() {
                let message = format!("{path} is not a regular file (a device, FIFO or socket)");
                return Err(Refusal::new(ErrorCode::NotAFile, message));
            }
            existing
        }
        Err(e) if e.kind() == ErrorKind::NotFound => requested,
        Err(e) => return Err(Refusal::io(path, e)),
    };
    let Some(dir) = destination
        .parent()
        .filter(|_| destination.file_name().is_some())
    else {
        let message = format!("{path} is a directory; name a file inside it");
        return Err(Refusal::new(ErrorCode::IsDirectory, message));
    };
    let new_dirs = create_missing_dirs(dir)?;
    let temp = TempFile::create(dir, new_dirs, mode).map_err(|e| Refusal::io(path, e))?;
    Ok((temp, destination))
}

/// Creates `dir` and whichever of its ancestors are missing.
pub(super) fn create_missing_dirs(dir: &Path) -> Result<NewDirs, Refusal> {
    let refusal = |dir: &Path, e| Refusal::io(&dir.display().to_string(), e);
    let mut missing = Vec::new();
    for ancestor in dir.ancestors() {
        match fs::metadata(ancestor) {
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::NotFound => missing.push(ancestor),
            Err(e) => return Err(refusal(ancestor, e)),
        }
    }
    let mut created = NewDirs(Vec::new());
    for dir in missing.into_iter().rev() {
        match DirBuilder::new().mode(DIR_MODE).create(dir) {
            Ok(()) => created.0.push(dir.to_path_buf()),
            // Made meanwhile by something else, so not ours to remove.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(refusal(dir, e)),
        }
    }
    Ok(created)
}

/// Directories an upload created, outermost first. Dropping removes them, innermost first
/// and only while empty.
pub(super) struct NewDirs(Vec<PathBuf>);

impl NewDirs {
    /// The directories stay: what they were made for is in place.
    pub(super) fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for NewDirs {
    fn drop(&mut self) {
        for dir in self.0.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// An upload's temporary file, hidden beside its destination. Dropping it uncommitted
/// removes it and the directories made for it.
struct TempFile {
    path: PathBuf,
    file: File,
    committed: bool,
    /// Dropped after the file: the field drops after `Drop::drop` has run.
    new_dirs: NewDirs,
}

impl TempFile {
    fn create(dir: &Path, new_dirs: NewDirs, mode: u32) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut attempts = 0;
        loop {
            let serial = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{UPLOAD_PREFIX}{}-{serial}", std::process::id()));
            let created = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path);
            match created {
                Ok(file) => {
                    let temp = Self {
                        path,
                        file,
                        committed: false,
                        new_dirs,
                    };
                    temp.file.set_permissions(Permissions::from_mode(mode))?;
                    return Ok(temp);
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists && attempts < TEMP_NAME_ATTEMPTS => {
                    attempts += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Flushes the bytes to disk and renames the file to `destination`.
    fn commit(mut self, destination: &Path) -> io::Result<()> {
        self.file.sync_all()?;
        fs::rename(&self.path, destination)?;
        self.committed = true;
        self.new_dirs.0.clear();
        // Makes the rename durable too. It has happened either way, so a failure here
        // changes nothing for the caller.
        if let Some(dir) = destination.parent() {
            let _ = File::open(dir).and_then(|dir| dir.sync_all());
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::test_support::{error_code, event, names_in, path_in, start};
    use sandboxd_agent_proto::{write_frame, FILE_CHUNK_LEN};

    fn send_data(service: &mut UnixStream, data: &[u8]) {
        write_frame(service, FrameKind::Stdin, data).unwrap();
    }

    #[test]
    fn upload_replaces_the_file_atomically_with_a_plain_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = path_in(&dir, "new/deeper/file.bin");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let path = target.clone();
        let (mut service, agent) = start(move |c| write_file(c, &path, None, 1 << 20));
        assert_eq!(event(&mut service), Event::WriteReady);
        for chunk in data.chunks(FILE_CHUNK_LEN) {
            send_data(&mut service, chunk);
        }
        assert!(
            fs::metadata(&target).is_err(),
            "nothing at the path before the commit"
        );
        send_data(&mut service, b"");
        assert_eq!(
            event(&mut service),
            Event::Files(FilesEvent::FileWritten {
                bytes: data.len() as u64
            })
        );
        agent.join().unwrap().unwrap();
        assert_eq!(fs::read(&target).unwrap(), data);
        let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o644);
        assert_eq!(names_in(&dir.path().join("new/deeper")), ["file.bin"]);
    }

    #[test]
    fn upload_keeps_the_permission_bits_it_is_given_and_no_others() {
        let dir = tempfile::tempdir().unwrap();
        for (asked, kept) in [(0o755, 0o755), (0o4755, 0o755), (0o2700, 0o700)] {
            let target = path_in(&dir, &format!("file-{asked:o}"));
            let path = target.clone();
            let (mut service, agent) = start(move |c| write_file(c, &path, Some(asked), 10));
            assert_eq!(event(&mut service), Event::WriteReady);
            send_data(&mut service, b"#!/bin/sh");
            send_data(&mut service, b"");
            assert_eq!(
                event(&mut service),
                Event::Files(FilesEvent::FileWritten { bytes: 9 })
            );
            agent.join().unwrap().unwrap();
            let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
            assert_eq!(mode, kept, "asked {asked:o}");
        }
    }

    #[test]
    fn an_upload_that_ends_early_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // Over the limit: refused, nothing written, not even the directories made for it.
        let path = path_in(&dir, "new/deeper/big");
        let (mut service, agent) = start(move |c| write_file(c, &path, None, 10));
        assert_eq!(event(&mut service), Event::WriteReady);
        send_data(&mut service, b"0123456789");
        send_data(&mut service, b"x");
        assert_eq!(error_code(event(&mut service)), ErrorCode::TooLarge);
        agent.join().unwrap().unwrap();
        assert!(names_in(dir.path()).is_empty());

        // Cancelled by the service: gone by the time the answer comes.
        let path = path_in(&dir, "cancelled");
        let (mut service, agent) = start(move |c| write_file(c, &path, None, 100));
        assert_eq!(event(&mut service), Event::WriteReady);
        send_data(&mut service, b"partial");
        write_json(&mut service, &Request::Cancel).unwrap();
        assert_eq!(error_code(event(&mut service)), ErrorCode::Cancelled);
        agent.join().unwrap().unwrap();
        assert!(names_in(dir.path()).is_empty());

        // The connection breaks mid-transfer.
        let path = path_in(&dir, "broken");
        let (mut service, agent) = start(move |c| write_file(c, &path, None, 100));
        assert_eq!(event(&mut service), Event::WriteReady);
        send_data(&mut service, b"partial");
        drop(service);
        assert!(agent.join().unwrap().is_err());
        assert!(names_in(dir.path()).is_empty());
    }

    #[test]
    fn upload_refuses_directories_and_special_files() {
        let dir = tempfile::tempdir().unwrap();
        for (path, code) in [
            (
                dir.path().to_str().unwrap().to_string(),
                ErrorCode::IsDirectory,
            ),
            ("/dev/null".to_string(), ErrorCode::NotAFile),
        ] {
            let (mut service, agent) = start(move |c| write_file(c, &path, None, 10));
            assert_eq!(error_code(event(&mut service)), code);
            agent.join().unwrap().unwrap();
        }
    }
}
