//! File operations: listing, reading, writing and deleting, done by the agent on its own view
//! of the filesystem. Relative paths resolve against the agent's working directory (the
//! sandbox's) and symlinks resolve inside the sandbox, because that is where the agent runs:
//! the sandbox confines these operations, no path check here does. What the service asks for
//! is bounded all the same: entries listed, bytes read from files of unknown size, and bytes
//! written.

use sandboxd_agent_proto::{
    read_frame, write_frame, write_json, DirEntry, EntryKind, Event, FrameKind, ProtoError,
    Request, ERROR_BAD_REQUEST, ERROR_BUSY, ERROR_CANCELLED, ERROR_INVALID_PATH, ERROR_IO,
    ERROR_IS_DIRECTORY, ERROR_NOT_A_DIRECTORY, ERROR_NOT_A_FILE, ERROR_NOT_FOUND, ERROR_NO_SPACE,
    ERROR_PERMISSION_DENIED, ERROR_READ_ONLY, ERROR_TOO_LARGE, FILE_CHUNK_LEN,
};
use std::fs::{self, DirBuilder, File, Metadata, OpenOptions, Permissions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Entries per [`Event::DirEntries`] frame: even with the longest names, escaped, a batch
/// stays far below the frame limit.
const LIST_BATCH: usize = 256;
/// An upload waits this long at most for the service's next frame; a service that stalls
/// without closing the connection must not keep a temporary file forever.
const UPLOAD_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Written files get exactly this mode, whatever the umask.
const FILE_MODE: u32 = 0o644;
const DIR_MODE: u32 = 0o755;
/// Names tried for an upload's temporary file before giving up: something in the sandbox may
/// have taken the next one.
const TEMP_NAME_ATTEMPTS: u32 = 16;

/// Each function answers one request on `connection`. An `Err` means the connection is
/// unusable; a refused operation is answered with an [`Event::Error`] and is `Ok`.
pub fn list_dir(
    connection: &mut UnixStream,
    path: &str,
    max_entries: u32,
) -> Result<(), ProtoError> {
    let dir = match fs::read_dir(path) {
        Ok(dir) => dir,
        Err(e) => return refuse(connection, Refusal::io(path, e)),
    };
    let mut batch = Vec::new();
    let mut listed = 0u32;
    let mut truncated = false;
    for entry in dir {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => return refuse(connection, Refusal::io(path, e)),
        };
        if listed == max_entries {
            truncated = true;
            break;
        }
        // lstat: a symlink is described, not followed. An entry removed meanwhile is skipped.
        let Ok(meta) = entry.metadata() else { continue };
        batch.push(describe(
            entry.file_name().to_string_lossy().into_owned(),
            &meta,
        ));
        listed += 1;
        if batch.len() == LIST_BATCH {
            write_json(
                connection,
                &Event::DirEntries {
                    entries: std::mem::take(&mut batch),
                },
            )?;
        }
    }
    if !batch.is_empty() {
        write_json(connection, &Event::DirEntries { entries: batch })?;
    }
    write_json(connection, &Event::DirEnd { truncated })
}

fn describe(name: String, meta: &Metadata) -> DirEntry {
    let file_type = meta.file_type();
    let kind = if file_type.is_file() {
        EntryKind::File
    } else if file_type.is_dir() {
        EntryKind::Dir
    } else if file_type.is_symlink() {
        EntryKind::Symlink
    } else {
        EntryKind::Other
    };
    DirEntry {
        name,
        kind,
        size: meta.len(),
        mode: meta.mode() & 0o7777,
        modified_secs: meta.mtime(),
        modified_nanos: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
    }
}

/// Sends a regular file. Its size is announced when known: when the whole file fits the
/// first chunk, or from its metadata. Pseudo-files (procfs, sysfs) report no size or a wrong
/// one; those larger than a chunk are sent without a size, up to `unsized_limit` bytes.
pub fn read_file(
    connection: &mut UnixStream,
    path: &str,
    unsized_limit: u64,
) -> Result<(), ProtoError> {
    let (mut file, reported_size) = match open_regular_file(path) {
        Ok(opened) => opened,
        Err(refusal) => return refuse(connection, refusal),
    };
    let mut buffer = vec![0; FILE_CHUNK_LEN];
    let mut filled = match fill(&mut file, &mut buffer) {
        Ok(filled) => filled,
        Err(e) => return refuse(connection, Refusal::io(path, e)),
    };
    let size = if filled < buffer.len() {
        Some(filled as u64)
    } else {
        (reported_size >= filled as u64).then_some(reported_size)
    };
    write_json(connection, &Event::FileOpened { size })?;
    let limit = size.unwrap_or(unsized_limit);
    let mut sent = 0u64;
    loop {
        let room = usize::try_from(limit - sent).unwrap_or(usize::MAX);
        if filled > room && size.is_none() {
            let message = format!("{path} reports no size and is longer than {limit} bytes");
            return refuse(connection, Refusal::new(ERROR_TOO_LARGE, message));
        }
        // A file that grew while it was read is cut at its announced size.
        let chunk = &buffer[..filled.min(room)];
        if !chunk.is_empty() {
            write_frame(connection, FrameKind::Stdout, chunk)?;
            sent += chunk.len() as u64;
        }
        if filled < buffer.len() || (size.is_some() && sent == limit) {
            break;
        }
        filled = match fill(&mut file, &mut buffer) {
            Ok(filled) => filled,
            Err(e) => return refuse(connection, Refusal::io(path, e)),
        };
    }
    if size.is_some_and(|size| sent < size) {
        let message = format!("{path} shrank while it was read");
        return refuse(connection, Refusal::new(ERROR_BUSY, message));
    }
    write_json(connection, &Event::FileEnd { bytes: sent })
}

/// Opens `path` for reading and checks on the open descriptor that it is a regular file.
/// The open does not block on a FIFO and does not make a terminal ours.
fn open_regular_file(path: &str) -> Result<(File, u64), Refusal> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Refusal::io(path, e))?;
    let meta = file.metadata().map_err(|e| Refusal::io(path, e))?;
    let file_type = meta.file_type();
    if file_type.is_dir() {
        return Err(Refusal::new(
            ERROR_IS_DIRECTORY,
            format!("{path} is a directory"),
        ));
    }
    if !file_type.is_file() {
        let what = if file_type.is_fifo() {
            "a FIFO"
        } else if file_type.is_socket() {
            "a socket"
        } else {
            "a device"
        };
        return Err(Refusal::new(
            ERROR_NOT_A_FILE,
            format!("{path} is {what}, not a regular file"),
        ));
    }
    clear_nonblocking(&file).map_err(|e| Refusal::io(path, e))?;
    Ok((file, meta.len()))
}

/// Pseudo-files may honour `O_NONBLOCK` on reads, and a read must wait for its data.
fn clear_nonblocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own have no memory effects.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads until `buffer` is full or the file ends; returns the bytes read.
fn fill(file: &mut File, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Receives a file in stdin frames into a temporary file beside its destination and renames
/// it into place once the empty frame arrives.
pub fn write_file(
    connection: &mut UnixStream,
    path: &str,
    max_bytes: u64,
) -> Result<(), ProtoError> {
    connection.set_read_timeout(Some(UPLOAD_IDLE_TIMEOUT))?;
    let answered = receive_file(connection, path, max_bytes);
    if answered.is_ok() {
        connection.set_read_timeout(None)?;
    }
    answered
}

fn receive_file(connection: &mut UnixStream, path: &str, max_bytes: u64) -> Result<(), ProtoError> {
    let (mut temp, destination) = match prepare_write(path) {
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
                    return refuse(connection, Refusal::new(ERROR_TOO_LARGE, message));
                }
                if let Err(e) = temp.file.write_all(&frame.payload) {
                    drop(temp);
                    return refuse(connection, Refusal::io(path, e));
                }
            }
            FrameKind::Json => {
                drop(temp);
                let refusal = match frame.parse_json::<Request>() {
                    Ok(Request::Cancel) => Refusal::new(ERROR_CANCELLED, "upload cancelled".into()),
                    _ => Refusal::new(ERROR_BAD_REQUEST, "a request during an upload".into()),
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
        Ok(()) => write_json(connection, &Event::FileWritten { bytes: received }),
        Err(e) => refuse(connection, Refusal::io(path, e)),
    }
}

/// Where an upload lands and its temporary file there. An existing symlink is followed, so
/// the upload replaces the file it names, as a shell's `>` would; a directory or a special
/// file is refused; missing parent directories are created (and removed again if the upload
/// does not complete).
fn prepare_write(path: &str) -> Result<(TempFile, PathBuf), Refusal> {
    let requested = std::path::absolute(path).map_err(|e| Refusal::io(path, e))?;
    let destination = match fs::canonicalize(&requested) {
        Ok(existing) => {
            let meta = fs::metadata(&existing).map_err(|e| Refusal::io(path, e))?;
            if meta.is_dir() {
                let message = format!("{path} is a directory; name a file inside it");
                return Err(Refusal::new(ERROR_IS_DIRECTORY, message));
            }
            if !meta.is_file() {
                let message = format!("{path} is not a regular file (a device, FIFO or socket)");
                return Err(Refusal::new(ERROR_NOT_A_FILE, message));
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
        return Err(Refusal::new(ERROR_IS_DIRECTORY, message));
    };
    let new_dirs = create_missing_dirs(dir)?;
    let temp = TempFile::create(dir, new_dirs).map_err(|e| Refusal::io(path, e))?;
    Ok((temp, destination))
}

/// Creates `dir` and whichever of its ancestors are missing.
fn create_missing_dirs(dir: &Path) -> Result<NewDirs, Refusal> {
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
struct NewDirs(Vec<PathBuf>);

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
    fn create(dir: &Path, new_dirs: NewDirs) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut attempts = 0;
        loop {
            let serial = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(".sandboxd-upload-{}-{serial}", std::process::id()));
            let created = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(FILE_MODE)
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
                    temp.file
                        .set_permissions(Permissions::from_mode(FILE_MODE))?;
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

/// Removes a file or a symlink itself, or a directory tree when `recursive`. The tree walk
/// (std's `remove_dir_all`) never follows symlinks, even ones swapped in while it runs.
pub fn delete(connection: &mut UnixStream, path: &str, recursive: bool) -> Result<(), ProtoError> {
    // As rm(1) does: removing what `.`, `..` or `/` name would empty a tree and then fail.
    let last = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    if matches!(last, "" | "." | "..") {
        let message = format!("{path} does not name an entry to delete");
        return refuse(connection, Refusal::new(ERROR_INVALID_PATH, message));
    }
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) => return refuse(connection, Refusal::io(path, e)),
    };
    let removed = if meta.is_dir() {
        if !recursive {
            let message = format!("{path} is a directory");
            return refuse(connection, Refusal::new(ERROR_IS_DIRECTORY, message));
        }
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match removed {
        Ok(()) => write_json(connection, &Event::Deleted),
        Err(e) => refuse(connection, Refusal::io(path, e)),
    }
}

/// Why an operation was refused: an [`Event::Error`]'s code and message.
struct Refusal {
    code: &'static str,
    message: String,
}

impl Refusal {
    fn new(code: &'static str, message: String) -> Self {
        Self { code, message }
    }

    /// Names `path` and the system's reason, coded by what it means for the caller.
    fn io(path: &str, error: io::Error) -> Self {
        let code = match error.raw_os_error().unwrap_or(0) {
            libc::ENOENT => ERROR_NOT_FOUND,
            libc::EISDIR => ERROR_IS_DIRECTORY,
            libc::ENOTDIR => ERROR_NOT_A_DIRECTORY,
            // What open(2) says for a socket, or a device with no driver behind it.
            libc::ENXIO | libc::ENODEV => ERROR_NOT_A_FILE,
            libc::EROFS => ERROR_READ_ONLY,
            libc::EACCES | libc::EPERM => ERROR_PERMISSION_DENIED,
            libc::ENOSPC | libc::EDQUOT | libc::EFBIG => ERROR_NO_SPACE,
            libc::ENAMETOOLONG | libc::ELOOP | libc::EINVAL => ERROR_INVALID_PATH,
            // Creating a directory where something else already is.
            libc::EEXIST => ERROR_NOT_A_DIRECTORY,
            libc::EBUSY | libc::ENOTEMPTY | libc::ETXTBSY => ERROR_BUSY,
            _ => ERROR_IO,
        };
        Self::new(code, format!("{path}: {error}"))
    }
}

fn refuse(connection: &mut UnixStream, refusal: Refusal) -> Result<(), ProtoError> {
    write_json(
        connection,
        &Event::Error {
            code: refusal.code.into(),
            message: refusal.message,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread::{self, JoinHandle};

    /// Runs `op` as the agent would on one end of a socket pair; the other end is the service.
    fn start<F>(op: F) -> (UnixStream, JoinHandle<Result<(), ProtoError>>)
    where
        F: FnOnce(&mut UnixStream) -> Result<(), ProtoError> + Send + 'static,
    {
        let (mut agent, service) = UnixStream::pair().unwrap();
        (service, thread::spawn(move || op(&mut agent)))
    }

    fn event(service: &mut UnixStream) -> Event {
        read_frame(service).unwrap().parse_json().unwrap()
    }

    fn error_code(event: Event) -> String {
        match event {
            Event::Error { code, .. } => code,
            other => panic!("not an error: {other:?}"),
        }
    }

    fn path_in(dir: &tempfile::TempDir, name: &str) -> String {
        dir.path().join(name).to_str().unwrap().to_string()
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn send_data(service: &mut UnixStream, data: &[u8]) {
        write_frame(service, FrameKind::Stdin, data).unwrap();
    }

    /// The file's frames up to its end: the announced size, the bytes, and the end event.
    fn download(path: &str, unsized_limit: u64) -> (Option<u64>, Vec<u8>, Event) {
        let path = path.to_string();
        let (mut service, agent) = start(move |c| read_file(c, &path, unsized_limit));
        let size = match event(&mut service) {
            Event::FileOpened { size } => size,
            other => return (None, Vec::new(), other),
        };
        let mut bytes = Vec::new();
        loop {
            let frame = read_frame(&mut service).unwrap();
            if frame.kind != FrameKind::Stdout {
                agent.join().unwrap().unwrap();
                return (size, bytes, frame.parse_json().unwrap());
            }
            bytes.extend(frame.payload);
        }
    }

    #[test]
    fn upload_replaces_the_file_atomically_with_a_plain_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = path_in(&dir, "new/deeper/file.bin");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let path = target.clone();
        let (mut service, agent) = start(move |c| write_file(c, &path, 1 << 20));
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
            Event::FileWritten {
                bytes: data.len() as u64
            }
        );
        agent.join().unwrap().unwrap();
        assert_eq!(fs::read(&target).unwrap(), data);
        let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o644);
        assert_eq!(names_in(&dir.path().join("new/deeper")), ["file.bin"]);
    }

    #[test]
    fn an_upload_that_ends_early_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // Over the limit: refused, nothing written, not even the directories made for it.
        let path = path_in(&dir, "new/deeper/big");
        let (mut service, agent) = start(move |c| write_file(c, &path, 10));
        assert_eq!(event(&mut service), Event::WriteReady);
        send_data(&mut service, b"0123456789");
        send_data(&mut service, b"x");
        assert_eq!(error_code(event(&mut service)), ERROR_TOO_LARGE);
        agent.join().unwrap().unwrap();
        assert!(names_in(dir.path()).is_empty());

        // Cancelled by the service: gone by the time the answer comes.
        let path = path_in(&dir, "cancelled");
        let (mut service, agent) = start(move |c| write_file(c, &path, 100));
        assert_eq!(event(&mut service), Event::WriteReady);
        send_data(&mut service, b"partial");
        write_json(&mut service, &Request::Cancel).unwrap();
        assert_eq!(error_code(event(&mut service)), ERROR_CANCELLED);
        agent.join().unwrap().unwrap();
        assert!(names_in(dir.path()).is_empty());

        // The connection breaks mid-transfer.
        let path = path_in(&dir, "broken");
        let (mut service, agent) = start(move |c| write_file(c, &path, 100));
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
            (dir.path().to_str().unwrap().to_string(), ERROR_IS_DIRECTORY),
            ("/dev/null".to_string(), ERROR_NOT_A_FILE),
        ] {
            let (mut service, agent) = start(move |c| write_file(c, &path, 10));
            assert_eq!(error_code(event(&mut service)), code);
            agent.join().unwrap().unwrap();
        }
    }

    #[test]
    fn read_sends_files_with_their_size_and_refuses_what_is_not_one() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
        let file = path_in(&dir, "data");
        fs::write(&file, &data).unwrap();
        let (size, bytes, end) = download(&file, 10);
        assert_eq!(size, Some(data.len() as u64));
        assert_eq!(bytes, data);
        assert_eq!(
            end,
            Event::FileEnd {
                bytes: data.len() as u64
            }
        );

        // A pseudo-file reports no size; a small one is measured.
        let (size, bytes, _) = download("/proc/self/status", 1 << 20);
        assert_eq!(size, Some(bytes.len() as u64));
        assert!(bytes.starts_with(b"Name:"));

        let fifo = path_in(&dir, "fifo");
        let fifo_c = std::ffi::CString::new(fifo.as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo_c.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        for (path, code) in [
            (fifo.as_str(), ERROR_NOT_A_FILE),
            ("/dev/null", ERROR_NOT_A_FILE),
            (dir.path().to_str().unwrap(), ERROR_IS_DIRECTORY),
            (&path_in(&dir, "missing"), ERROR_NOT_FOUND),
        ] {
            let (_, _, end) = download(path, 10);
            assert_eq!(error_code(end), code, "{path}");
        }
        assert!(started.elapsed() < Duration::from_secs(5), "a FIFO blocked");
    }

    #[test]
    fn listing_describes_symlinks_comes_in_batches_and_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..300 {
            fs::write(dir.path().join(format!("f{i:03}")), b"abc").unwrap();
        }
        std::os::unix::fs::symlink("/", dir.path().join("root")).unwrap();
        let list = |max_entries| {
            let path = dir.path().to_str().unwrap().to_string();
            let (mut service, agent) = start(move |c| list_dir(c, &path, max_entries));
            let mut batches = Vec::new();
            loop {
                match event(&mut service) {
                    Event::DirEntries { entries } => batches.push(entries),
                    Event::DirEnd { truncated } => {
                        agent.join().unwrap().unwrap();
                        return (batches, truncated);
                    }
                    other => panic!("{other:?}"),
                }
            }
        };
        let (batches, truncated) = list(1000);
        assert!(!truncated);
        assert_eq!(
            batches.iter().map(Vec::len).collect::<Vec<_>>(),
            [LIST_BATCH, 301 - LIST_BATCH]
        );
        let entries: Vec<DirEntry> = batches.into_iter().flatten().collect();
        let root = entries.iter().find(|e| e.name == "root").unwrap();
        assert_eq!(root.kind, EntryKind::Symlink);
        let file = entries.iter().find(|e| e.name == "f007").unwrap();
        assert_eq!((file.kind, file.size), (EntryKind::File, 3));

        let (batches, truncated) = list(10);
        assert!(truncated);
        assert_eq!(batches.concat().len(), 10);
    }

    #[test]
    fn delete_removes_links_not_their_targets() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep"), b"x").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        fs::create_dir_all(tree.join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), tree.join("sub/link")).unwrap();
        let delete_path = |path: &Path, recursive| {
            let path = path.to_str().unwrap().to_string();
            let (mut service, agent) = start(move |c| delete(c, &path, recursive));
            let answer = event(&mut service);
            agent.join().unwrap().unwrap();
            answer
        };
        assert_eq!(error_code(delete_path(&tree, false)), ERROR_IS_DIRECTORY);
        assert_eq!(delete_path(&tree.join("sub/link"), false), Event::Deleted);
        std::os::unix::fs::symlink(outside.path(), tree.join("sub/link")).unwrap();
        assert_eq!(delete_path(&tree, true), Event::Deleted);
        assert!(names_in(dir.path()).is_empty());
        assert_eq!(names_in(outside.path()), ["keep"]);
        assert_eq!(
            error_code(delete_path(&dir.path().join("."), true)),
            ERROR_INVALID_PATH
        );
        assert_eq!(error_code(delete_path(&tree, true)), ERROR_NOT_FOUND);
    }
}
