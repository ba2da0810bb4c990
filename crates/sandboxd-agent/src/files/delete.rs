//! Deleting files, symlinks and directory trees.

use super::refusal::{refuse, Refusal};
use sandboxd_agent_proto::{write_json, ErrorCode, FilesEvent, ProtoError};
use std::fs;
use std::io::ErrorKind;
use std::os::unix::net::UnixStream;

/// Removes a file or a symlink itself, or a directory tree when `recursive`. The tree walk
/// (std's `remove_dir_all`) never follows symlinks, even ones swapped in while it runs.
/// Nothing at `path` (or nothing left by the time it is removed) is no error: what was asked
/// for is so, as envd's remove and `rm -f` answer.
pub fn delete(connection: &mut UnixStream, path: &str, recursive: bool) -> Result<(), ProtoError> {
    // As rm(1) does: removing what `.`, `..` or `/` name would empty a tree and then fail.
    let last = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    if matches!(last, "" | "." | "..") {
        let message = format!("{path} does not name an entry to delete");
        return refuse(connection, Refusal::new(ErrorCode::InvalidPath, message));
    }
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return write_json(connection, &FilesEvent::Deleted)
        }
        Err(e) => return refuse(connection, Refusal::io(path, e)),
    };
    let removed = if meta.is_dir() {
        if !recursive {
            let message = format!("{path} is a directory");
            return refuse(connection, Refusal::new(ErrorCode::IsDirectory, message));
        }
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match removed {
        Ok(()) => write_json(connection, &FilesEvent::Deleted),
        Err(e) if e.kind() == ErrorKind::NotFound => write_json(connection, &FilesEvent::Deleted),
        Err(e) => refuse(connection, Refusal::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::test_support::{error_code, event, names_in, start};
    use sandboxd_agent_proto::Event;
    use std::path::Path;

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
        assert_eq!(
            error_code(delete_path(&tree, false)),
            ErrorCode::IsDirectory
        );
        assert_eq!(
            delete_path(&tree.join("sub/link"), false),
            Event::Files(FilesEvent::Deleted)
        );
        std::os::unix::fs::symlink(outside.path(), tree.join("sub/link")).unwrap();
        assert_eq!(delete_path(&tree, true), Event::Files(FilesEvent::Deleted));
        assert!(names_in(dir.path()).is_empty());
        assert_eq!(names_in(outside.path()), ["keep"]);
        assert_eq!(
            error_code(delete_path(&dir.path().join("."), true)),
            ErrorCode::InvalidPath
        );
        assert_eq!(
            delete_path(&tree, true),
            Event::Files(FilesEvent::Deleted),
            "gone already"
        );
        let missing_parent = dir.path().join("no/such/file");
        assert_eq!(
            delete_path(&missing_parent, false),
            Event::Files(FilesEvent::Deleted)
        );
        fs::write(dir.path().join("file"), b"x").unwrap();
        assert_eq!(
            error_code(delete_path(&dir.path().join("file/below"), false)),
            sandboxd_agent_proto::ErrorCode::NotADirectory,
            "a path through a file is still refused"
        );
    }
}
