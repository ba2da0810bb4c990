//! Describing, creating and moving paths. Each is one system call or a few, made by the
//! agent on the sandbox's filesystem: a symlink that points elsewhere leads wherever the
//! sandbox's kernel says, which is always inside the sandbox.

use super::read::describe;
use super::refusal::{refuse, Refusal};
use sandboxd_agent_proto::{write_json, ErrorCode, FileStat, FilesEvent, ProtoError};
use std::fs::{self, DirBuilder};
use std::io::ErrorKind;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::path::Path;

/// Directories made get exactly this mode, whatever the umask (as uploads' do).
const DIR_MODE: u32 = 0o755;

/// Answers with what is at `path`, a final symlink described and not followed.
pub fn stat(connection: &mut UnixStream, path: &str) -> Result<(), ProtoError> {
    match lstat(path) {
        Ok(stat) => write_json(connection, &FilesEvent::Stat(stat)),
        Err(refusal) => refuse(connection, refusal),
    }
}

fn lstat(path: &str) -> Result<FileStat, Refusal> {
    let meta = fs::symlink_metadata(path).map_err(|e| Refusal::io(path, e))?;
    let (symlink_target, resolved_target) = match meta.file_type().is_symlink() {
        true => (
            Some(
                fs::read_link(path)
                    .map_err(|e| Refusal::io(path, e))?
                    .to_string_lossy()
                    .into_owned(),
            ),
            fs::canonicalize(path)
                .ok()
                .map(|target| target.to_string_lossy().into_owned()),
        ),
        false => (None, None),
    };
    let name = Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
    Ok(FileStat {
        entry: describe(name, &meta, Path::new(path)),
        symlink_target,
        resolved_target,
    })
}

/// Creates the directory at `path`; with `parents`, its missing ancestors too. A directory
/// already there is no error (`created` is false); anything else there is.
pub fn make_dir(connection: &mut UnixStream, path: &str, parents: bool) -> Result<(), ProtoError> {
    match create_dir(path, parents) {
        Ok(created) => write_json(connection, &FilesEvent::DirMade { created }),
        Err(refusal) => refuse(connection, refusal),
    }
}

fn create_dir(path: &str, parents: bool) -> Result<bool, Refusal> {
    let single = DirBuilder::new().mode(DIR_MODE).create(path);
    let made = match single {
        Err(e) if e.kind() == ErrorKind::NotFound && parents => {
            let parent = Path::new(path).parent().unwrap_or(Path::new("/"));
            DirBuilder::new()
                .mode(DIR_MODE)
                .recursive(true)
                .create(parent)
                .map_err(|e| Refusal::io(path, e))?;
            DirBuilder::new().mode(DIR_MODE).create(path)
        }
        other => other,
    };
    match made {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => Ok(false),
            _ => Err(Refusal::new(
                ErrorCode::NotADirectory,
                format!("{path} exists and is not a directory"),
            )),
        },
        Err(e) => Err(Refusal::io(path, e)),
    }
}

/// Renames `from` to `to` and answers with what is at `to` now. Without `overwrite` the
/// kernel refuses an existing destination atomically (`RENAME_NOREPLACE`).
pub fn move_path(
    connection: &mut UnixStream,
    from: &str,
    to: &str,
    overwrite: bool,
) -> Result<(), ProtoError> {
    let moved = rename(from, to, overwrite).and_then(|()| lstat(to));
    match moved {
        Ok(stat) => write_json(connection, &FilesEvent::Stat(stat)),
        Err(refusal) => refuse(connection, refusal),
    }
}

fn rename(from: &str, to: &str, overwrite: bool) -> Result<(), Refusal> {
    if from.contains('\0') || to.contains('\0') {
        return Err(Refusal::new(
            ErrorCode::InvalidPath,
            format!("{from:?} -> {to:?} contains a NUL byte"),
        ));
    }
    let (from_path, to_path) = (Path::new(from), Path::new(to));
    let renamed = if overwrite {
        std::fs::rename(from_path, to_path)
    } else {
        crate::sys::rename_no_replace(from_path, to_path)
    };
    let Err(error) = renamed else {
        return Ok(());
    };
    match error.raw_os_error() {
        Some(libc::EEXIST) => Err(Refusal::new(
            ErrorCode::Exists,
            format!("{to} exists; pass overwrite to replace it"),
        )),
        Some(libc::EXDEV) => Err(Refusal::new(
            ErrorCode::CrossDevice,
            format!("{from} and {to} are on different filesystems, which a move cannot cross"),
        )),
        // ENOTEMPTY also means a directory is in the way, with overwrite.
        _ => Err(Refusal::io(&format!("{from} -> {to}"), error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::test_support::{error_code, event, names_in, path_in, start};
    use sandboxd_agent_proto::EntryKind;
    use sandboxd_agent_proto::Event;

    fn answer(
        op: impl FnOnce(&mut UnixStream) -> Result<(), ProtoError> + Send + 'static,
    ) -> Event {
        let (mut service, agent) = start(op);
        let answer = event(&mut service);
        agent.join().unwrap().unwrap();
        answer
    }

    fn stat_of(path: &str) -> Event {
        let path = path.to_string();
        answer(move |c| stat(c, &path))
    }

    #[test]
    fn stat_describes_a_symlink_and_does_not_follow_it() {
        let dir = tempfile::tempdir().unwrap();
        let link = path_in(&dir, "root");
        std::os::unix::fs::symlink("/", &link).unwrap();
        let Event::Files(FilesEvent::Stat(stat)) = stat_of(&link) else {
            panic!("not a stat")
        };
        assert_eq!(stat.entry.name, "root");
        assert_eq!(stat.entry.kind, EntryKind::Symlink);
        assert_eq!(stat.symlink_target.as_deref(), Some("/"));
        assert_eq!(stat.entry.target_kind, Some(EntryKind::Dir));
        assert_eq!(stat.resolved_target.as_deref(), Some("/"));
        // A relative chain is resolved to the end, absolute; a dangling link leads nowhere.
        fs::write(path_in(&dir, "real.txt"), b"abc").unwrap();
        std::os::unix::fs::symlink("real.txt", path_in(&dir, "hop")).unwrap();
        std::os::unix::fs::symlink("hop", path_in(&dir, "link")).unwrap();
        let Event::Files(FilesEvent::Stat(stat)) = stat_of(&path_in(&dir, "link")) else {
            panic!("not a stat")
        };
        assert_eq!(stat.symlink_target.as_deref(), Some("hop"));
        assert_eq!(stat.entry.target_kind, Some(EntryKind::File));
        let real = fs::canonicalize(path_in(&dir, "real.txt")).unwrap();
        assert_eq!(stat.resolved_target.as_deref(), real.to_str());
        std::os::unix::fs::symlink("gone", path_in(&dir, "dangling")).unwrap();
        let Event::Files(FilesEvent::Stat(stat)) = stat_of(&path_in(&dir, "dangling")) else {
            panic!("not a stat")
        };
        assert_eq!(stat.entry.kind, EntryKind::Symlink);
        assert_eq!((stat.entry.target_kind, stat.resolved_target), (None, None));
        fs::write(path_in(&dir, "f"), b"abc").unwrap();
        let Event::Files(FilesEvent::Stat(stat)) = stat_of(&path_in(&dir, "f")) else {
            panic!("not a stat")
        };
        assert_eq!((stat.entry.kind, stat.entry.size), (EntryKind::File, 3));
        assert_eq!(stat.symlink_target, None);
        assert_eq!(
            error_code(stat_of(&path_in(&dir, "missing"))),
            ErrorCode::NotFound
        );
    }

    #[test]
    fn make_dir_with_and_without_parents() {
        let dir = tempfile::tempdir().unwrap();
        let make = |path: String, parents| answer(move |c| make_dir(c, &path, parents));
        let deep = path_in(&dir, "a/b/c");
        assert_eq!(error_code(make(deep.clone(), false)), ErrorCode::NotFound);
        assert!(names_in(dir.path()).is_empty());
        assert_eq!(
            make(deep.clone(), true),
            Event::Files(FilesEvent::DirMade { created: true })
        );
        assert_eq!(
            make(deep.clone(), true),
            Event::Files(FilesEvent::DirMade { created: false })
        );
        assert_eq!(
            make(deep, false),
            Event::Files(FilesEvent::DirMade { created: false })
        );
        let mode = fs::metadata(path_in(&dir, "a/b")).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o755
        );
        fs::write(path_in(&dir, "file"), b"x").unwrap();
        assert_eq!(
            error_code(make(path_in(&dir, "file"), true)),
            ErrorCode::NotADirectory
        );
    }

    #[test]
    fn move_refuses_an_existing_destination_unless_told_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let shift = |from: String, to: String, overwrite| {
            answer(move |c| move_path(c, &from, &to, overwrite))
        };
        fs::write(path_in(&dir, "a"), b"aaa").unwrap();
        fs::write(path_in(&dir, "b"), b"b").unwrap();
        let refused = shift(path_in(&dir, "a"), path_in(&dir, "b"), false);
        assert_eq!(error_code(refused), ErrorCode::Exists);
        assert_eq!(fs::read(path_in(&dir, "b")).unwrap(), b"b");
        let Event::Files(FilesEvent::Stat(moved)) =
            shift(path_in(&dir, "a"), path_in(&dir, "b"), true)
        else {
            panic!("not moved")
        };
        assert_eq!((moved.entry.name.as_str(), moved.entry.size), ("b", 3));
        assert_eq!(names_in(dir.path()), ["b"]);
        let Event::Files(FilesEvent::Stat(_)) =
            shift(path_in(&dir, "b"), path_in(&dir, "c"), false)
        else {
            panic!("not moved")
        };
        assert_eq!(names_in(dir.path()), ["c"]);
        let missing = shift(path_in(&dir, "gone"), path_in(&dir, "d"), false);
        assert_eq!(error_code(missing), ErrorCode::NotFound);
    }
}
