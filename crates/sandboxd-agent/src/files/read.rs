//! Listing directories and reading files.

use super::refusal::{refuse, Refusal};
use sandboxd_agent_proto::{
    write_frame, write_json, DirEntry, EntryKind, ErrorCode, FilesEvent, FrameKind, ProtoError,
    FILE_CHUNK_LEN,
};
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, ErrorKind, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// Entries per [`FilesEvent::DirEntries`] frame: even with the longest names, escaped, a batch
/// stays far below the frame limit.
const LIST_BATCH: usize = 256;

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
            &entry.path(),
        ));
        listed += 1;
        if batch.len() == LIST_BATCH {
            write_json(
                connection,
                &FilesEvent::DirEntries {
                    entries: std::mem::take(&mut batch),
                },
            )?;
        }
    }
    if !batch.is_empty() {
        write_json(connection, &FilesEvent::DirEntries { entries: batch })?;
    }
    write_json(connection, &FilesEvent::DirEnd { truncated })
}

/// Describes the entry at `path` from its `meta` (lstat's); a symlink's target is looked at
/// for its kind.
pub(super) fn describe(name: String, meta: &Metadata, path: &Path) -> DirEntry {
    let kind = kind_of(meta.file_type());
    DirEntry {
        name,
        kind,
        size: meta.len(),
        mode: meta.mode() & 0o7777,
        modified_secs: meta.mtime(),
        modified_nanos: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
        target_kind: match kind {
            EntryKind::Symlink => fs::metadata(path).ok().map(|m| kind_of(m.file_type())),
            _ => None,
        },
    }
}

fn kind_of(file_type: fs::FileType) -> EntryKind {
    if file_type.is_file() {
        EntryKind::File
    } else if file_type.is_dir() {
        EntryKind::Dir
    } else if file_type.is_symlink() {
        EntryKind::Symlink
    } else {
        EntryKind::Other
    }
}

/// What a read may send; see
/// [`FilesRequest::ReadFile`](sandboxd_agent_proto::FilesRequest::ReadFile).
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    pub unsized_limit: u64,
    pub max_size: Option<u64>,
    pub max_unallocated: Option<u64>,
}

/// Sends a regular file. Its size is announced when known: when the whole file fits the
/// first chunk, or from its metadata. Pseudo-files (procfs, sysfs) report no size or a wrong
/// one; those larger than a chunk are sent without a size, up to `unsized_limit` bytes.
/// A file over the limits is refused before a byte is read.
pub fn read_file(
    connection: &mut UnixStream,
    path: &str,
    limits: ReadLimits,
) -> Result<(), ProtoError> {
    let (mut file, reported_size) = match open_regular_file(path)
        .and_then(|(file, meta)| within_limits(path, &meta, limits).map(|()| (file, meta.len())))
    {
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
    write_json(connection, &FilesEvent::FileOpened { size })?;
    let limit = size.unwrap_or(limits.unsized_limit);
    let mut sent = 0u64;
    loop {
        let room = usize::try_from(limit - sent).unwrap_or(usize::MAX);
        if filled > room && size.is_none() {
            let message = format!("{path} reports no size and is longer than {limit} bytes");
            return refuse(connection, Refusal::new(ErrorCode::TooLarge, message));
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
        return refuse(connection, Refusal::new(ErrorCode::Busy, message));
    }
    write_json(connection, &FilesEvent::FileEnd { bytes: sent })
}

/// Refuses a file over `max_size`, or one whose holes (its size beyond the bytes it has
/// allocated) are over `max_unallocated`: a sparse file costs the sandbox almost nothing and
/// would otherwise be served at its full size.
fn within_limits(path: &str, meta: &Metadata, limits: ReadLimits) -> Result<(), Refusal> {
    let size = meta.len();
    let allocated = meta.blocks().saturating_mul(512);
    let unallocated = size.saturating_sub(allocated);
    if let Some(max) = limits.max_size.filter(|&max| size > max) {
        let sparse = match unallocated {
            0 => String::new(),
            _ => format!(" (it is sparse: only {allocated} bytes of it are stored)"),
        };
        return Err(Refusal::new(
            ErrorCode::TooLarge,
            format!("{path} is {size} bytes{sparse}, over the download limit of {max} bytes"),
        ));
    }
    if let Some(max) = limits.max_unallocated.filter(|&max| unallocated > max) {
        return Err(Refusal::new(
            ErrorCode::TooLarge,
            format!(
                "{path} is sparse: {size} bytes of which only {allocated} are stored; a file with more than {max} bytes of holes (the sandbox's writable size) is not served"
            ),
        ));
    }
    Ok(())
}

/// Opens `path` for reading and checks on the open descriptor that it is a regular file.
/// The open does not block on a FIFO and does not make a terminal ours.
fn open_regular_file(path: &str) -> Result<(File, Metadata), Refusal> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Refusal::io(path, e))?;
    let meta = file.metadata().map_err(|e| Refusal::io(path, e))?;
    let file_type = meta.file_type();
    if file_type.is_dir() {
        return Err(Refusal::new(
            ErrorCode::IsDirectory,
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
            ErrorCode::NotAFile,
            format!("{path} is {what}, not a regular file"),
        ));
    }
    clear_nonblocking(&file).map_err(|e| Refusal::io(path, e))?;
    Ok((file, meta))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::test_support::{error_code, event, path_in, start};
    use sandboxd_agent_proto::read_frame;
    use sandboxd_agent_proto::Event;
    use std::time::Duration;

    /// The file's frames up to its end: the announced size, the bytes, and the end event.
    fn download(path: &str, unsized_limit: u64) -> (Option<u64>, Vec<u8>, Event) {
        let limits = ReadLimits {
            unsized_limit,
            max_size: None,
            max_unallocated: None,
        };
        download_within(path, limits)
    }

    fn download_within(path: &str, limits: ReadLimits) -> (Option<u64>, Vec<u8>, Event) {
        let path = path.to_string();
        let (mut service, agent) = start(move |c| read_file(c, &path, limits));
        let size = match event(&mut service) {
            Event::Files(FilesEvent::FileOpened { size }) => size,
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
            Event::Files(FilesEvent::FileEnd {
                bytes: data.len() as u64
            })
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
            (fifo.as_str(), ErrorCode::NotAFile),
            ("/dev/null", ErrorCode::NotAFile),
            (dir.path().to_str().unwrap(), ErrorCode::IsDirectory),
            (&path_in(&dir, "missing"), ErrorCode::NotFound),
        ] {
            let (_, _, end) = download(path, 10);
            assert_eq!(error_code(end), code, "{path}");
        }
        assert!(started.elapsed() < Duration::from_secs(5), "a FIFO blocked");
    }

    #[test]
    fn files_over_the_size_or_holes_limit_are_refused_before_a_byte() {
        let dir = tempfile::tempdir().unwrap();
        let sparse = path_in(&dir, "sparse");
        File::create(&sparse).unwrap().set_len(1 << 30).unwrap();
        let dense = path_in(&dir, "dense");
        fs::write(&dense, vec![1u8; 100_000]).unwrap();
        let limits = |max_size, max_unallocated| ReadLimits {
            unsized_limit: 10,
            max_size: Some(max_size),
            max_unallocated: Some(max_unallocated),
        };
        let refused = |path: &str, limits| match download_within(path, limits) {
            (None, bytes, Event::Error { code, message }) if bytes.is_empty() => {
                assert_eq!(code, ErrorCode::TooLarge);
                message
            }
            other => panic!("{other:?}"),
        };
        let message = refused(&sparse, limits(1 << 20, 1 << 40));
        assert!(
            message.contains("1073741824 bytes (it is sparse"),
            "{message}"
        );
        assert!(message.contains("limit of 1048576 bytes"), "{message}");
        let message = refused(&sparse, limits(1 << 40, 1 << 20));
        assert!(message.contains("is sparse"), "{message}");
        assert!(
            message.contains("more than 1048576 bytes of holes"),
            "{message}"
        );
        let message = refused(&dense, limits(99_999, 1 << 20));
        assert!(!message.contains("sparse"), "{message}");

        // Within both limits, a dense file is served whole, and a small sparse one too.
        let (size, bytes, _) = download_within(&dense, limits(100_000, 0));
        assert_eq!((size, bytes.len()), (Some(100_000), 100_000));
        let small = path_in(&dir, "small");
        File::create(&small).unwrap().set_len(200_000).unwrap();
        let (size, bytes, _) = download_within(&small, limits(1 << 20, 1 << 20));
        assert_eq!(size, Some(200_000));
        assert!(bytes.len() == 200_000 && bytes.iter().all(|&b| b == 0));
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
                    Event::Files(FilesEvent::DirEntries { entries }) => batches.push(entries),
                    Event::Files(FilesEvent::DirEnd { truncated }) => {
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
}
