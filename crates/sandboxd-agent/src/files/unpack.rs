//! Extracting an uploaded tar, confined to its target directory: the entries land in a hidden
//! directory inside the target, checked one by one (names stay inside, never through a
//! symlink; no hard links or special files; plain modes; contents capped), and move into
//! place only once the whole archive was taken. A refusal or a broken upload leaves nothing.

use super::refusal::{refuse, Refusal};
use super::write::create_missing_dirs;
use sandboxd_agent_proto::tar_read::{Entry, Kind, ReadError, TarReader};
use sandboxd_agent_proto::{
    read_frame, write_json, ArchiveSummary, Event, FrameKind, ProtoError, Request,
    ERROR_BAD_REQUEST, ERROR_BUSY, ERROR_CANCELLED, ERROR_INVALID_PATH, ERROR_TOO_LARGE,
    MAX_ARCHIVE_ENTRIES,
};
use std::ffi::{CString, OsStr};
use std::fs::{self, DirBuilder, File, OpenOptions, Permissions};
use std::io::{self, ErrorKind, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// As for a file upload: a service that stalls must not keep a half-extracted tree forever.
const UPLOAD_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Modes while extracting: the owner can always write into what it made.
const WORK_DIR_MODE: u32 = 0o700;
const WORK_FILE_MODE: u32 = 0o600;

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
        Ok(summary) => write_json(connection, &Event::ArchiveWritten(summary)),
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
    let extracted = extract(&mut TarReader::new(&mut upload), &work.path, max_bytes);
    let summary = match (upload.failure, extracted) {
        (Some(Interruption::Broken(e)), _) => return Err(e),
        (Some(Interruption::Cancelled), _) => {
            return Ok(Err(Refusal::new(
                ERROR_CANCELLED,
                "upload cancelled".into(),
            )));
        }
        (Some(Interruption::Request), _) => {
            let refusal = Refusal::new(ERROR_BAD_REQUEST, "a request during an upload".into());
            return Ok(Err(refusal));
        }
        (None, Err(refusal)) => return Ok(Err(refusal)),
        (None, Ok(summary)) => summary,
    };
    if !upload.ended {
        let message = "data follows the archive's end marker".into();
        return Ok(Err(Refusal::new(ERROR_BAD_REQUEST, message)));
    }
    let moved = work.move_into(&target, path);
    if moved.is_ok() {
        new_dirs.keep();
    }
    Ok(moved.map(|()| summary))
}

/// Extracts every entry under `root`, the hidden work directory.
fn extract<R: Read>(
    reader: &mut TarReader<R>,
    root: &Path,
    max_bytes: u64,
) -> Result<ArchiveSummary, Refusal> {
    let mut summary = ArchiveSummary::default();
    let mut dir_modes = Vec::new();
    let mut entries = 0u64;
    while let Some(entry) = reader.next_entry().map_err(read_refusal)? {
        entries += 1;
        if entries > MAX_ARCHIVE_ENTRIES {
            let message = format!("the archive holds more than {MAX_ARCHIVE_ENTRIES} entries");
            return Err(Refusal::new(ERROR_TOO_LARGE, message));
        }
        let shown = String::from_utf8_lossy(&entry.name).into_owned();
        let Some(relative) = entry.relative_path().map_err(read_refusal)? else {
            // `.` or `./`: the target itself, which exists already.
            continue;
        };
        let destination = make_parents(root, &relative, &shown)?;
        let mode = entry.mode & 0o777;
        match entry.kind {
            Kind::Dir => {
                match DirBuilder::new().mode(WORK_DIR_MODE).create(&destination) {
                    Ok(()) => summary.dirs += 1,
                    Err(e) if e.kind() == ErrorKind::AlreadyExists && is_dir(&destination) => {}
                    Err(e) => return Err(Refusal::io(&shown, e)),
                }
                dir_modes.push((destination, mode));
            }
            Kind::Symlink => {
                replace_non_dir(&destination, &shown)?;
                let target = OsStr::from_bytes(&entry.link);
                std::os::unix::fs::symlink(target, &destination)
                    .map_err(|e| Refusal::io(&shown, e))?;
                summary.symlinks += 1;
            }
            Kind::File => {
                summary.bytes += entry.size;
                if summary.bytes > max_bytes {
                    let message = format!(
                        "the archive's files hold more than the limit of {max_bytes} bytes"
                    );
                    return Err(Refusal::new(ERROR_TOO_LARGE, message));
                }
                replace_non_dir(&destination, &shown)?;
                write_contents(reader, &entry, &destination, mode, &shown)?;
                summary.files += 1;
            }
        }
    }
    // Deepest first, so a directory made read-only does not stop its children's.
    dir_modes.sort_by_key(|(dir, _)| std::cmp::Reverse(dir.components().count()));
    for (dir, mode) in dir_modes {
        fs::set_permissions(&dir, Permissions::from_mode(mode))
            .map_err(|e| Refusal::io(&dir.display().to_string(), e))?;
    }
    Ok(summary)
}

fn read_refusal(error: ReadError) -> Refusal {
    match error {
        ReadError::Invalid(message) => Refusal::new(ERROR_INVALID_PATH, message),
        ReadError::Io(e) => Refusal::io("the archive", e),
    }
}

/// Makes the directories on the way to `relative` under `root` (as tar does when the archive
/// does not list them), refusing a way through a symlink or a file; returns the full path.
fn make_parents(root: &Path, relative: &Path, shown: &str) -> Result<PathBuf, Refusal> {
    let mut current = root.to_path_buf();
    let parents: Vec<_> = relative.components().collect();
    for part in &parents[..parents.len() - 1] {
        current.push(part);
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let message = format!("{shown:?} in the archive passes through a symlink");
                return Err(Refusal::new(ERROR_INVALID_PATH, message));
            }
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                let message = format!("{shown:?} in the archive passes through a file");
                return Err(Refusal::new(ERROR_INVALID_PATH, message));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => DirBuilder::new()
                .mode(WORK_DIR_MODE)
                .create(&current)
                .map_err(|e| Refusal::io(shown, e))?,
            Err(e) => return Err(Refusal::io(shown, e)),
        }
    }
    current.push(parents[parents.len() - 1]);
    Ok(current)
}

fn is_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// A later entry of the same name replaces a file or symlink (as tar does), not a directory.
fn replace_non_dir(path: &Path, shown: &str) -> Result<(), Refusal> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let message = format!("{shown:?} in the archive would replace a directory");
            Err(Refusal::new(ERROR_INVALID_PATH, message))
        }
        Ok(_) => fs::remove_file(path).map_err(|e| Refusal::io(shown, e)),
        Err(_) => Ok(()),
    }
}

fn write_contents<R: Read>(
    reader: &mut TarReader<R>,
    entry: &Entry,
    destination: &Path,
    mode: u32,
    shown: &str,
) -> Result<(), Refusal> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(WORK_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(destination)
        .map_err(|e| Refusal::io(shown, e))?;
    match io::copy(&mut reader.contents(), &mut file) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
            let message = "the archive ends in the middle of an entry".to_string();
            return Err(Refusal::new(ERROR_INVALID_PATH, message));
        }
        // The stream's own failure is in the upload's record; this names the entry.
        Err(e) => return Err(Refusal::io(shown, e)),
    }
    file.set_permissions(Permissions::from_mode(mode))
        .map_err(|e| Refusal::io(shown, e))?;
    set_mtime(&file, entry.mtime);
    Ok(())
}

/// Keeps the file's modification time; a time the filesystem refuses is left as now.
fn set_mtime(file: &File, mtime: u64) {
    let times = [
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        libc::timespec {
            tv_sec: libc::time_t::try_from(mtime).unwrap_or(libc::time_t::MAX),
            tv_nsec: 0,
        },
    ];
    // SAFETY: a descriptor we own and a valid two-element array.
    unsafe { libc::futimens(std::os::fd::AsRawFd::as_raw_fd(file), times.as_ptr()) };
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
            if let Err(e) = rename_no_replace(&from, &to) {
                for name in moved.iter().rev() {
                    let _ = rename_no_replace(&target.join(name), &self.path.join(name));
                }
                let shown_name = format!("{shown}/{}", name.to_string_lossy());
                return Err(if e.kind() == ErrorKind::AlreadyExists {
                    let message = format!(
                        "{shown_name} already exists; remove it first or extract elsewhere"
                    );
                    Refusal::new(ERROR_BUSY, message)
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
        if fs::remove_dir_all(&self.path).is_err() {
            // A directory the archive made read-only keeps its entries: open them up first.
            make_writable(&self.path);
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

fn make_writable(dir: &Path) {
    let _ = fs::set_permissions(dir, Permissions::from_mode(WORK_DIR_MODE));
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                make_writable(&entry.path());
            }
        }
    }
}

fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: valid NUL-terminated paths; AT_FDCWD resolves them as rename(2) would.
    let renamed = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if renamed == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
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
