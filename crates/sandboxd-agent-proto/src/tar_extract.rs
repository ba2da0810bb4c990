//! Extracting a tar that cannot be trusted into a fresh directory, for both ends that do it:
//! the agent an upload, the command line a download. Every entry is checked on its own: names
//! stay under the root (the [`TarReader`] refuses `..`, absolute names, hard links and special
//! files), never pass through a symlink or a file, files are created anew without following a
//! symlink, modes lose setuid/setgid/sticky, the entries are at most [`MAX_ARCHIVE_ENTRIES`]
//! and the files' contents at most the caller's limit. The root should be a fresh directory
//! that the caller moves into place once the whole archive was taken, and removes with
//! [`remove_extracted`] otherwise.

use crate::limits::MAX_ARCHIVE_ENTRIES;
use crate::message::ArchiveSummary;
use crate::tar_read::{Entry, Kind, ReadError, TarReader};
use std::ffi::OsStr;
use std::fs::{self, DirBuilder, File, FileTimes, OpenOptions, Permissions};
use std::io::{self, ErrorKind, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Modes while extracting: the owner can always write into what it made. The entries' own
/// modes are set at the end.
pub const WORK_DIR_MODE: u32 = 0o700;
const WORK_FILE_MODE: u32 = 0o600;

/// Which symlinks are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symlinks {
    /// Every symlink, as stored: where the extraction's own filesystem confines what they
    /// reach (the agent, inside its sandbox).
    AsStored,
    /// Only those that resolve inside the extracted tree (see [`stays_inside`]); the others
    /// are left out, counted as skipped and passed to the caller's `skipped` function.
    InsideOnly,
}

/// Why an extraction stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// More entries than [`MAX_ARCHIVE_ENTRIES`], or more bytes of contents than the limit.
    #[error("{0}")]
    TooLarge(String),
    /// The archive is malformed, or an entry is refused (its name climbs out, passes through
    /// a symlink or a file, or would replace a directory).
    #[error("{0}")]
    Invalid(String),
    /// Reading the archive or making `what` failed.
    #[error("{what}: {error}")]
    Io { what: String, error: io::Error },
}

impl From<ReadError> for ExtractError {
    fn from(error: ReadError) -> Self {
        match error {
            ReadError::Invalid(message) => ExtractError::Invalid(message),
            ReadError::Io(error) => io_error("the archive", error),
        }
    }
}

fn io_error(what: &str, error: io::Error) -> ExtractError {
    ExtractError::Io {
        what: what.to_string(),
        error,
    }
}

/// Extracts every entry under `root`, which exists, with files holding at most `max_bytes`
/// in all; `skipped` is told of each symlink left out (its path in the tree, its target).
pub fn extract<R: Read>(
    reader: &mut TarReader<R>,
    root: &Path,
    max_bytes: u64,
    symlinks: Symlinks,
    mut skipped: impl FnMut(&Path, &Path),
) -> Result<ArchiveSummary, ExtractError> {
    let mut summary = ArchiveSummary::default();
    let mut dir_modes = Vec::new();
    let mut entries = 0u64;
    while let Some(entry) = reader.next_entry()? {
        entries += 1;
        if entries > MAX_ARCHIVE_ENTRIES {
            let message = format!("the archive holds more than {MAX_ARCHIVE_ENTRIES} entries");
            return Err(ExtractError::TooLarge(message));
        }
        let shown = String::from_utf8_lossy(&entry.name).into_owned();
        let Some(relative) = entry.relative_path()? else {
            // `.` or `./`: the root itself, which exists already.
            continue;
        };
        let destination = make_parents(root, &relative, &shown)?;
        let mode = entry.mode & 0o777;
        match entry.kind {
            Kind::Dir => {
                match DirBuilder::new().mode(WORK_DIR_MODE).create(&destination) {
                    Ok(()) => summary.dirs += 1,
                    Err(e) if e.kind() == ErrorKind::AlreadyExists && is_dir(&destination) => {}
                    Err(e) => return Err(io_error(&shown, e)),
                }
                dir_modes.push((destination, mode));
            }
            Kind::Symlink => {
                let target = Path::new(OsStr::from_bytes(&entry.link));
                if symlinks == Symlinks::InsideOnly && !stays_inside(&relative, target) {
                    skipped(&relative, target);
                    summary.skipped += 1;
                    continue;
                }
                replace_non_dir(&destination, &shown)?;
                std::os::unix::fs::symlink(target, &destination)
                    .map_err(|e| io_error(&shown, e))?;
                summary.symlinks += 1;
            }
            Kind::File => {
                summary.bytes += entry.size;
                if summary.bytes > max_bytes {
                    let message = format!(
                        "the archive's files hold more than the limit of {max_bytes} bytes"
                    );
                    return Err(ExtractError::TooLarge(message));
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
            .map_err(|e| io_error(&dir.display().to_string(), e))?;
    }
    Ok(summary)
}

/// Makes the directories on the way to `relative` under `root` (as tar does when the archive
/// does not list them), refusing a way through a symlink or a file; returns the full path.
fn make_parents(root: &Path, relative: &Path, shown: &str) -> Result<PathBuf, ExtractError> {
    let mut current = root.to_path_buf();
    let parents: Vec<_> = relative.components().collect();
    for part in &parents[..parents.len() - 1] {
        current.push(part);
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let message = format!("{shown:?} in the archive passes through a symlink");
                return Err(ExtractError::Invalid(message));
            }
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                let message = format!("{shown:?} in the archive passes through a file");
                return Err(ExtractError::Invalid(message));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => DirBuilder::new()
                .mode(WORK_DIR_MODE)
                .create(&current)
                .map_err(|e| io_error(shown, e))?,
            Err(e) => return Err(io_error(shown, e)),
        }
    }
    current.push(parents[parents.len() - 1]);
    Ok(current)
}

fn is_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// A later entry of the same name replaces a file or symlink (as tar does), not a directory.
fn replace_non_dir(path: &Path, shown: &str) -> Result<(), ExtractError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let message = format!("{shown:?} in the archive would replace a directory");
            Err(ExtractError::Invalid(message))
        }
        Ok(_) => fs::remove_file(path).map_err(|e| io_error(shown, e)),
        Err(_) => Ok(()),
    }
}

fn write_contents<R: Read>(
    reader: &mut TarReader<R>,
    entry: &Entry,
    destination: &Path,
    mode: u32,
    shown: &str,
) -> Result<(), ExtractError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(WORK_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(destination)
        .map_err(|e| io_error(shown, e))?;
    match io::copy(&mut reader.contents(), &mut file) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
            let message = "the archive ends in the middle of an entry".to_string();
            return Err(ExtractError::Invalid(message));
        }
        // A failure of the stream itself is the reader's to report; this names the entry.
        Err(e) => return Err(io_error(shown, e)),
    }
    file.set_permissions(Permissions::from_mode(mode))
        .map_err(|e| io_error(shown, e))?;
    set_mtime(&file, entry.mtime);
    Ok(())
}

/// Keeps the file's modification time; a time out of range or refused is left as now.
fn set_mtime(file: &File, mtime: u64) {
    if let Some(modified) = SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(mtime)) {
        let _ = file.set_times(FileTimes::new().set_modified(modified));
    }
}

/// Whether a symlink at `link` (relative to the tree's top) with this target resolves inside
/// the tree, whatever the other symlinks in it: the target is relative, its `..` come first
/// and climb no higher than the top (they climb through real directories, made here), and
/// the rest descends. A symlink it descends through obeys the same rule.
pub fn stays_inside(link: &Path, target: &Path) -> bool {
    let depth = link.components().count() - 1;
    let mut climbed = 0;
    let mut descending = false;
    for component in target.components() {
        match component {
            Component::ParentDir if !descending => climbed += 1,
            Component::CurDir => {}
            Component::Normal(_) => descending = true,
            _ => return false,
        }
    }
    climbed <= depth
}

/// Removes an extraction's directory and everything in it, also what the archive made
/// read-only; a directory that is not there is no error.
pub fn remove_extracted(dir: &Path) {
    if fs::remove_dir_all(dir).is_err() {
        make_writable(dir);
        let _ = fs::remove_dir_all(dir);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_that_could_leave_the_tree_are_told_apart() {
        let inside = |link: &str, target: &str| stays_inside(Path::new(link), Path::new(target));
        assert!(inside("a/link", "../b/file"));
        assert!(inside("a/b/link", "../../x"));
        assert!(inside("link", "sub/file"));
        assert!(inside("link", "."));
        assert!(!inside("link", "../x"));
        assert!(!inside("a/link", "../../x"));
        assert!(!inside("a/link", "/etc/passwd"));
        // `..` after a name could climb out of what a symlink names.
        assert!(!inside("a/link", "b/../../x"));
        assert!(!inside("a/link", "r/.."));
    }

    fn archive(entries: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, link, contents) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_mode(0o644);
            match link {
                Some(target) => {
                    header.set_entry_type(tar::EntryType::Symlink);
                    header.set_size(0);
                    builder.append_link(&mut header, name, target).unwrap();
                }
                None => {
                    header.set_size(contents.len() as u64);
                    builder.append_data(&mut header, name, *contents).unwrap();
                }
            }
        }
        builder.into_inner().unwrap()
    }

    fn run(
        tar: &[u8],
        root: &Path,
        max_bytes: u64,
        symlinks: Symlinks,
    ) -> Result<u64, ExtractError> {
        let mut skipped = 0;
        let summary = extract(
            &mut TarReader::new(tar),
            root,
            max_bytes,
            symlinks,
            |_, _| skipped += 1,
        )?;
        assert_eq!(summary.skipped, skipped);
        Ok(summary.files)
    }

    #[test]
    fn no_entry_is_written_through_a_symlink_under_either_policy() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        let escape = archive(&[
            ("esc", Some(outside.to_str().unwrap()), b""),
            ("esc/planted", None, b"x"),
        ]);
        let inward = archive(&[("here", Some("."), b""), ("here/planted", None, b"x")]);
        for (tar, symlinks) in [
            (&escape, Symlinks::AsStored),
            (&inward, Symlinks::AsStored),
            (&inward, Symlinks::InsideOnly),
        ] {
            let root = tempfile::tempdir_in(dir.path()).unwrap();
            let refused = run(tar, root.path(), u64::MAX, symlinks);
            assert!(
                matches!(&refused, Err(ExtractError::Invalid(m)) if m.contains("symlink")),
                "{refused:?}"
            );
        }
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn outside_symlinks_are_skipped_only_when_asked_and_contents_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        let tar = archive(&[("out", Some("/etc"), b""), ("f", None, b"12345")]);
        let inside_only = dir.path().join("inside-only");
        fs::create_dir(&inside_only).unwrap();
        assert_eq!(run(&tar, &inside_only, 5, Symlinks::InsideOnly).unwrap(), 1);
        assert!(fs::symlink_metadata(inside_only.join("out")).is_err());
        let as_stored = dir.path().join("as-stored");
        fs::create_dir(&as_stored).unwrap();
        run(&tar, &as_stored, 5, Symlinks::AsStored).unwrap();
        assert_eq!(
            fs::read_link(as_stored.join("out")).unwrap(),
            Path::new("/etc")
        );
        let capped = dir.path().join("capped");
        fs::create_dir(&capped).unwrap();
        let refused = run(&tar, &capped, 4, Symlinks::AsStored);
        assert!(
            matches!(refused, Err(ExtractError::TooLarge(_))),
            "{refused:?}"
        );
    }
}
