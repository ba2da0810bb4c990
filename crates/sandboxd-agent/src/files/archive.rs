//! Downloading a directory tree as a tar. The tree is walked first (never following a
//! symlink), so an archive over its limits is refused before a byte is sent; then its entries
//! are streamed in data frames of at most [`FILE_CHUNK_LEN`] bytes.

use super::refusal::{refuse, Refusal};
use sandboxd_agent_proto::{
    write_frame, write_json, ArchiveSummary, ErrorCode, FilesEvent, FrameKind, ProtoError,
    FILE_CHUNK_LEN, MAX_ARCHIVE_ENTRIES,
};
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// One entry found by the walk, named relative to the archived directory.
struct Found {
    name: PathBuf,
    kind: Kind,
    mode: u32,
    mtime: u64,
}

enum Kind {
    Dir,
    File { size: u64 },
    Symlink,
}

/// What the walk found: the entries in archive order, and the special files left out.
#[derive(Default)]
struct Tree {
    entries: Vec<Found>,
    bytes: u64,
    skipped: u64,
}

pub fn read_archive(
    connection: &mut UnixStream,
    path: &str,
    max_bytes: u64,
) -> Result<(), ProtoError> {
    let tree = match walk(path, max_bytes) {
        Ok(tree) => tree,
        Err(refusal) => return refuse(connection, refusal),
    };
    write_json(
        connection,
        &FilesEvent::ArchiveOpened {
            entries: tree.entries.len() as u64,
            bytes: tree.bytes,
        },
    )?;
    let root = Path::new(path);
    let mut builder = tar::Builder::new(FrameWriter::new(connection));
    let mut summary = ArchiveSummary {
        skipped: tree.skipped,
        ..ArchiveSummary::default()
    };
    for found in &tree.entries {
        match append(&mut builder, root, found, &mut summary) {
            Ok(()) => {}
            // The frame writer failed: the connection is unusable.
            Err(Failure::Connection(e)) => return Err(e),
            Err(Failure::Refused(refusal)) => {
                let connection = builder.into_inner().map_err(ProtoError::Io)?.connection;
                return refuse(connection, refusal);
            }
        }
    }
    let mut writer = builder.into_inner().map_err(ProtoError::Io)?;
    writer.flush_frame()?;
    write_json(writer.connection, &FilesEvent::ArchiveEnd(summary))
}

/// Walks the tree under `path`, each directory's entries in name order, without following
/// symlinks, and on its filesystem only: a filesystem mounted below (a volume, shared between
/// sessions) is left out, mount point and all, so a snapshot never copies it.
fn walk(path: &str, max_bytes: u64) -> Result<Tree, Refusal> {
    // The directory asked for may be reached through a symlink; nothing under it is.
    let meta = fs::metadata(path).map_err(|e| Refusal::io(path, e))?;
    if !meta.is_dir() {
        let message = format!("{path} is not a directory; read a file with its own download");
        return Err(Refusal::new(ErrorCode::NotADirectory, message));
    }
    let root_device = meta.dev();
    let mut tree = Tree::default();
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        let full = Path::new(path).join(&dir);
        let shown = full.display().to_string();
        let mut names: Vec<_> = fs::read_dir(&full)
            .map_err(|e| Refusal::io(&shown, e))?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(|e| Refusal::io(&shown, e))?;
        names.sort();
        let mut subdirs = Vec::new();
        for name in names {
            let name = dir.join(name);
            // Removed meanwhile: not part of the tree.
            let Ok(meta) = fs::symlink_metadata(Path::new(path).join(&name)) else {
                continue;
            };
            let file_type = meta.file_type();
            if meta.dev() != root_device {
                tree.skipped += 1;
                continue;
            }
            let kind = if file_type.is_dir() {
                subdirs.push(name.clone());
                Kind::Dir
            } else if file_type.is_file() {
                tree.bytes += meta.len();
                Kind::File { size: meta.len() }
            } else if file_type.is_symlink() {
                Kind::Symlink
            } else {
                tree.skipped += 1;
                continue;
            };
            tree.entries.push(Found {
                name,
                kind,
                mode: meta.mode() & 0o7777,
                mtime: u64::try_from(meta.mtime()).unwrap_or(0),
            });
            if tree.entries.len() as u64 > MAX_ARCHIVE_ENTRIES {
                let message = format!(
                    "{path} holds more than {MAX_ARCHIVE_ENTRIES} entries, more than an archive may"
                );
                return Err(Refusal::new(ErrorCode::TooLarge, message));
            }
            if tree.bytes > max_bytes {
                let message = format!(
                    "the files under {path} hold more than the archive limit of {max_bytes} bytes"
                );
                return Err(Refusal::new(ErrorCode::TooLarge, message));
            }
        }
        // A directory's entries come after its own, its subdirectories' in name order.
        pending.extend(subdirs.into_iter().rev());
    }
    Ok(tree)
}

enum Failure {
    Connection(ProtoError),
    Refused(Refusal),
}

fn append(
    builder: &mut tar::Builder<FrameWriter<'_>>,
    root: &Path,
    found: &Found,
    summary: &mut ArchiveSummary,
) -> Result<(), Failure> {
    let full = root.join(&found.name);
    let shown = full.display().to_string();
    let mut header = tar::Header::new_gnu();
    header.set_mode(found.mode);
    header.set_mtime(found.mtime);
    let written = match found.kind {
        Kind::Dir => {
            header.set_entry_type(tar::EntryType::Directory);
            header.set_size(0);
            summary.dirs += 1;
            builder.append_data(&mut header, &found.name, io::empty())
        }
        Kind::Symlink => {
            let target = fs::read_link(&full).map_err(|e| changed(&shown, e))?;
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            summary.symlinks += 1;
            builder.append_link(&mut header, &found.name, target)
        }
        Kind::File { size } => {
            let file = open_file(&full).map_err(|e| changed(&shown, e))?;
            header.set_entry_type(tar::EntryType::Regular);
            header.set_size(size);
            summary.files += 1;
            summary.bytes += size;
            let contents = Exactly {
                file: file.take(size),
                left: size,
            };
            builder.append_data(&mut header, &found.name, contents)
        }
    };
    written.map_err(|e| {
        if builder.get_ref().broken {
            return Failure::Connection(ProtoError::Io(e));
        }
        match e.kind() {
            // Only the file's reader says this: the file shrank while it was sent.
            ErrorKind::UnexpectedEof => Failure::Refused(Refusal::new(
                ErrorCode::Busy,
                format!("{shown} shrank while it was archived"),
            )),
            _ => Failure::Refused(Refusal::io(&shown, e)),
        }
    })
}

fn changed(path: &str, e: io::Error) -> Failure {
    Failure::Refused(Refusal::io(path, e))
}

/// Opens a file found by the walk, refusing one that became a symlink or a special file.
fn open_file(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("it is no longer a regular file"));
    }
    Ok(file)
}

/// A file's contents, exactly as long as its header says: a file that grew is cut, one that
/// shrank is an [`ErrorKind::UnexpectedEof`].
struct Exactly {
    file: io::Take<File>,
    left: u64,
}

impl Read for Exactly {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let read = self.file.read(buffer)?;
        if read == 0 && self.left > 0 && !buffer.is_empty() {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        self.left -= read as u64;
        Ok(read)
    }
}

/// Buffers the tar's bytes into stdout frames of [`FILE_CHUNK_LEN`].
struct FrameWriter<'a> {
    connection: &'a mut UnixStream,
    buffer: Vec<u8>,
    /// A frame could not be sent: the connection is unusable.
    broken: bool,
}

impl<'a> FrameWriter<'a> {
    fn new(connection: &'a mut UnixStream) -> Self {
        Self {
            connection,
            buffer: Vec::with_capacity(FILE_CHUNK_LEN),
            broken: false,
        }
    }

    fn flush_frame(&mut self) -> Result<(), ProtoError> {
        if !self.buffer.is_empty() {
            let sent = write_frame(self.connection, FrameKind::Stdout, &self.buffer);
            self.broken = sent.is_err();
            sent?;
            self.buffer.clear();
        }
        Ok(())
    }
}

impl Write for FrameWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let take = (FILE_CHUNK_LEN - self.buffer.len()).min(data.len());
        self.buffer.extend_from_slice(&data[..take]);
        if self.buffer.len() == FILE_CHUNK_LEN {
            self.flush_frame().map_err(io::Error::other)?;
        }
        Ok(take)
    }

    /// Frames are sent as they fill and at the end: tar's flushes would only make them small.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::test_support::{error_code, event, start};
    use sandboxd_agent_proto::read_frame;
    use sandboxd_agent_proto::Event;
    use std::os::unix::fs::PermissionsExt;

    /// The tar the agent sends for `path` and its closing summary, or the code it refused with.
    fn download(path: &Path, max_bytes: u64) -> Result<(Vec<u8>, ArchiveSummary), ErrorCode> {
        let path = path.to_str().unwrap().to_string();
        let (mut service, agent) = start(move |c| read_archive(c, &path, max_bytes));
        let opened = event(&mut service);
        let Event::Files(FilesEvent::ArchiveOpened { bytes, .. }) = opened else {
            agent.join().unwrap().unwrap();
            return Err(error_code(opened));
        };
        let mut tar = Vec::new();
        loop {
            let frame = read_frame(&mut service).unwrap();
            if frame.kind != FrameKind::Stdout {
                agent.join().unwrap().unwrap();
                match frame.parse_json().unwrap() {
                    Event::Files(FilesEvent::ArchiveEnd(summary)) => {
                        assert_eq!(summary.bytes, bytes);
                        return Ok((tar, summary));
                    }
                    other => return Err(error_code(other)),
                }
            }
            assert!(frame.payload.len() <= FILE_CHUNK_LEN);
            tar.extend(frame.payload);
        }
    }

    #[test]
    fn a_tree_is_archived_with_modes_and_symlinks_never_followed() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), b"outside").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("sub/deeper")).unwrap();
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        fs::write(root.join("sub/big.bin"), &big).unwrap();
        fs::write(root.join("run.sh"), b"#!/bin/sh\n").unwrap();
        fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o750)).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("sub/out")).unwrap();
        let long = "n".repeat(150);
        fs::write(root.join("sub/deeper").join(&long), b"long").unwrap();
        let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

        let (tar, summary) = download(root, 1 << 20).unwrap();
        assert_eq!(
            (
                summary.files,
                summary.dirs,
                summary.symlinks,
                summary.skipped
            ),
            (3, 2, 1, 1)
        );
        let mut archive = tar::Archive::new(tar.as_slice());
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().display().to_string();
            let header = entry.header().clone();
            let mut contents = Vec::new();
            entry.read_to_end(&mut contents).unwrap();
            match name.as_str() {
                "run.sh" => assert_eq!(header.mode().unwrap(), 0o750),
                "sub/big.bin" => assert_eq!(contents, big),
                "sub/out" => {
                    assert_eq!(header.entry_type(), tar::EntryType::Symlink);
                    assert_eq!(entry.link_name().unwrap().unwrap(), outside.path());
                }
                _ => {}
            }
            seen.push(name);
        }
        let expected_long = format!("sub/deeper/{long}");
        assert_eq!(
            seen,
            [
                "run.sh",
                "sub",
                "sub/big.bin",
                "sub/deeper",
                "sub/out",
                &expected_long
            ]
        );
    }

    #[test]
    fn a_tree_over_the_limit_or_not_a_directory_is_refused_before_any_byte() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), vec![1u8; 1000]).unwrap();
        assert_eq!(download(dir.path(), 999).unwrap_err(), ErrorCode::TooLarge);
        assert_eq!(
            download(&dir.path().join("f"), 1 << 20).unwrap_err(),
            ErrorCode::NotADirectory
        );
    }
}
