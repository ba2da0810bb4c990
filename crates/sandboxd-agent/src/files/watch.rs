//! Watching a directory with inotify. Everything is bounded: the watches (a recursive watch
//! stops adding them at the limit the service sets, and says so), the changes per frame, and
//! the queue, which is the kernel's own: the agent reads it only as fast as the service takes
//! the changes, and what the kernel could not keep arrives as one `overflow` change.

use super::refusal::{refuse, Refusal};
use super::write::UPLOAD_PREFIX;
use sandboxd_agent_proto::{
    read_frame, write_json, ChangeKind, ErrorCode, FileChange, FilesEvent, FrameKind, ProtoError,
    Request,
};
use std::collections::HashMap;
use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

/// Changes per [`FilesEvent::FileChanges`] frame: with paths of PATH_MAX, still under the frame
/// limit.
const CHANGES_PER_FRAME: usize = 128;
/// Bytes read from the inotify descriptor at once: many events, each at most 16 + 256 bytes.
const READ_BUFFER_LEN: usize = 64 * 1024;
/// Changes held between two sends: a read of the kernel's queue yields at most
/// `READ_BUFFER_LEN / 16`, a new directory's walk as many as it holds.
const MAX_PENDING: usize = 8192;
/// What each directory is watched for.
const MASK: u32 = libc::IN_CREATE
    | libc::IN_MODIFY
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_ATTRIB
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR;

/// Watches the directory at `path` until the service closes the connection or cancels, or
/// the directory goes away.
pub fn watch(
    connection: &mut UnixStream,
    path: &str,
    recursive: bool,
    max_watches: u32,
) -> Result<(), ProtoError> {
    let mut watcher = match Watcher::new(path, recursive, max_watches as usize) {
        Ok(watcher) => watcher,
        Err(refusal) => return refuse(connection, refusal),
    };
    write_json(connection, &FilesEvent::Watching)?;
    let mut buffer = vec![0u8; READ_BUFFER_LEN];
    loop {
        watcher.send_pending(connection)?;
        if watcher.root_gone {
            return write_json(connection, &FilesEvent::WatchEnd);
        }
        let mut fds = [
            libc::pollfd {
                fd: watcher.inotify.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: connection.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfd entries that outlive the call.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error.into());
        }
        if fds[1].revents != 0 {
            // The service speaks only to stop the watch; a closed connection stops it too.
            let frame = read_frame(connection)?;
            return match frame.kind {
                FrameKind::Json if frame.parse_json::<Request>()? == Request::Cancel => {
                    write_json(connection, &FilesEvent::WatchEnd)
                }
                _ => Err(ProtoError::Unexpected("a frame during a watch".into())),
            };
        }
        if fds[0].revents != 0 {
            watcher.read_events(&mut buffer)?;
        }
    }
}

struct Watcher {
    inotify: OwnedFd,
    /// The directory each watch descriptor watches, as the change paths name it.
    dirs: HashMap<i32, String>,
    root: i32,
    root_path: String,
    recursive: bool,
    max_watches: usize,
    /// The limit was reported already: once is enough.
    limit_reported: bool,
    pending: Vec<FileChange>,
    root_gone: bool,
    /// The cookie of an upload's temporary file just renamed away: its rename into place
    /// comes next, with the same cookie.
    upload_moved: Option<u32>,
}

impl Watcher {
    fn new(path: &str, recursive: bool, max_watches: usize) -> Result<Watcher, Refusal> {
        let meta = fs::metadata(path).map_err(|e| Refusal::io(path, e))?;
        if !meta.is_dir() {
            let message = format!("{path} is not a directory; watch the directory holding it");
            return Err(Refusal::new(ErrorCode::NotADirectory, message));
        }
        // SAFETY: no pointers; the descriptor returned is ours alone.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(Refusal::io(path, io::Error::last_os_error()));
        }
        // SAFETY: a descriptor just returned, owned by nothing else.
        let inotify = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut watcher = Watcher {
            inotify,
            dirs: HashMap::new(),
            root: -1,
            root_path: path.to_string(),
            recursive,
            max_watches: max_watches.max(1),
            limit_reported: false,
            pending: Vec::new(),
            root_gone: false,
            upload_moved: None,
        };
        // The root may be a symlink to a directory; below it, nothing is followed.
        watcher.root = watcher
            .add_watch(path, 0)
            .map_err(|e| Refusal::io(path, e))?;
        if recursive {
            watcher.watch_below(path, false);
        }
        Ok(watcher)
    }

    fn add_watch(&mut self, dir: &str, extra: u32) -> io::Result<i32> {
        let c_dir = CString::new(dir).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a valid NUL-terminated path and our own descriptor.
        let wd = unsafe {
            libc::inotify_add_watch(self.inotify.as_raw_fd(), c_dir.as_ptr(), MASK | extra)
        };
        if wd < 0 {
            return Err(io::Error::last_os_error());
        }
        self.dirs.insert(wd, dir.to_string());
        Ok(wd)
    }

    /// Watches the directories below `dir`, breadth first, up to the limit, and with
    /// `report` reports what is in them as created (they are new: it was made before their
    /// watch existed). A directory that vanishes meanwhile is skipped; symlinks are never
    /// followed.
    fn watch_below(&mut self, dir: &str, report: bool) {
        let mut queue = std::collections::VecDeque::from([dir.to_string()]);
        while let Some(dir) = queue.pop_front() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let sub = join(&dir, &entry.file_name().to_string_lossy());
                if report {
                    self.push(ChangeKind::Create, sub.clone());
                }
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if self.dirs.len() >= self.max_watches {
                    self.report_limit(&sub);
                    return;
                }
                if self.add_watch(&sub, libc::IN_DONT_FOLLOW).is_ok() {
                    queue.push_back(sub);
                }
            }
        }
    }

    fn report_limit(&mut self, unwatched: &str) {
        if !std::mem::replace(&mut self.limit_reported, true) {
            self.push(ChangeKind::Overflow, unwatched.to_string());
        }
    }

    /// Reads what the kernel has queued and turns it into changes.
    fn read_events(&mut self, buffer: &mut [u8]) -> Result<(), ProtoError> {
        // SAFETY: reads at most `buffer.len()` bytes into the buffer we own.
        let read = unsafe {
            libc::read(
                self.inotify.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
            )
        };
        if read < 0 {
            let error = io::Error::last_os_error();
            return match error.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(()),
                _ => Err(error.into()),
            };
        }
        let mut events = &buffer[..read as usize];
        // Each event: wd (i32), mask, cookie, len (u32 each), then `len` bytes of name.
        while events.len() >= 16 {
            let field = |at: usize| u32::from_ne_bytes(events[at..at + 4].try_into().unwrap());
            let (wd, mask, cookie, len) = (field(0) as i32, field(4), field(8), field(12) as usize);
            let Some(name) = events.get(16..16 + len) else {
                break;
            };
            let name = String::from_utf8_lossy(name.split(|&b| b == 0).next().unwrap_or(&[]));
            self.event(wd, mask, cookie, &name);
            events = &events[16 + len..];
        }
        Ok(())
    }

    fn event(&mut self, wd: i32, mask: u32, cookie: u32, name: &str) {
        if mask & libc::IN_Q_OVERFLOW != 0 {
            self.push(ChangeKind::Overflow, self.root_path.clone());
            return;
        }
        let Some(dir) = self.dirs.get(&wd).cloned() else {
            return;
        };
        if mask & libc::IN_IGNORED != 0 {
            self.dirs.remove(&wd);
            self.root_gone |= wd == self.root;
            return;
        }
        if name.is_empty() {
            // The watched directory itself: its parent's watch reports a subdirectory's.
            if wd == self.root && mask & libc::IN_DELETE_SELF != 0 {
                self.push(ChangeKind::Remove, dir);
            } else if wd == self.root && mask & libc::IN_MOVE_SELF != 0 {
                self.push(ChangeKind::Rename, dir);
            } else if wd == self.root && mask & libc::IN_ATTRIB != 0 {
                self.push(ChangeKind::Chmod, dir);
            }
            return;
        }
        let path = join(&dir, name);
        // An upload writes a temporary file and renames it into place: the watcher hears of
        // the file written, never of the service's temporary name. What the temporary file
        // went through (created, its mode set, written) is told of the file at the rename,
        // in envd's order for a written file.
        if name.starts_with(UPLOAD_PREFIX) {
            if mask & libc::IN_MOVED_FROM != 0 {
                self.upload_moved = Some(cookie);
            }
            return;
        }
        if mask & libc::IN_MOVED_TO != 0 && self.upload_moved.take() == Some(cookie) {
            for kind in [ChangeKind::Create, ChangeKind::Chmod, ChangeKind::Write] {
                self.push(kind, path.clone());
            }
            return;
        }
        let kind = if mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0 {
            ChangeKind::Create
        } else if mask & libc::IN_MODIFY != 0 {
            ChangeKind::Write
        } else if mask & libc::IN_DELETE != 0 {
            ChangeKind::Remove
        } else if mask & libc::IN_MOVED_FROM != 0 {
            ChangeKind::Rename
        } else if mask & libc::IN_ATTRIB != 0 {
            ChangeKind::Chmod
        } else {
            return;
        };
        let new_dir = kind == ChangeKind::Create && mask & libc::IN_ISDIR != 0;
        self.push(kind, path.clone());
        if new_dir && self.recursive {
            if self.dirs.len() >= self.max_watches {
                self.report_limit(&path);
            } else if self.add_watch(&path, libc::IN_DONT_FOLLOW).is_ok() {
                self.watch_below(&path, true);
            }
        }
    }

    /// Queues a change; a repeat of the change just queued (a file written in many calls)
    /// is one. Past [`MAX_PENDING`] changes are dropped and one overflow says so.
    fn push(&mut self, kind: ChangeKind, path: String) {
        let change = FileChange { kind, path };
        if self.pending.last() == Some(&change) {
            return;
        }
        if self.pending.len() + 1 < MAX_PENDING {
            self.pending.push(change);
        } else if self.pending.len() + 1 == MAX_PENDING {
            let root = self.root_path.clone();
            self.pending.push(FileChange {
                kind: ChangeKind::Overflow,
                path: root,
            });
        }
    }

    fn send_pending(&mut self, connection: &mut UnixStream) -> Result<(), ProtoError> {
        while !self.pending.is_empty() {
            let rest = self
                .pending
                .split_off(self.pending.len().min(CHANGES_PER_FRAME));
            let changes = std::mem::replace(&mut self.pending, rest);
            write_json(connection, &FilesEvent::FileChanges { changes })?;
        }
        Ok(())
    }
}

/// `name` below `dir`, as a change's path names it.
fn join(dir: &str, name: &str) -> String {
    match dir.trim_end_matches('/') {
        "" => format!("/{name}"),
        dir => format!("{dir}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::test_support::{error_code, event, path_in, start};
    use sandboxd_agent_proto::write_frame;
    use sandboxd_agent_proto::Event;
    use std::thread::JoinHandle;
    use std::time::Duration;

    fn start_watch(
        path: &str,
        recursive: bool,
        max_watches: u32,
    ) -> (UnixStream, JoinHandle<Result<(), ProtoError>>) {
        let path = path.to_string();
        let (mut service, agent) = start(move |c| watch(c, &path, recursive, max_watches));
        assert_eq!(event(&mut service), Event::Files(FilesEvent::Watching));
        (service, agent)
    }

    /// Changes until one satisfies `done`, within a few seconds.
    fn changes_until(
        service: &mut UnixStream,
        done: impl Fn(&FileChange) -> bool,
    ) -> Vec<FileChange> {
        service
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut seen = Vec::new();
        loop {
            match event(service) {
                Event::Files(FilesEvent::FileChanges { changes }) => {
                    let finished = changes.iter().any(&done);
                    seen.extend(changes);
                    if finished {
                        return seen;
                    }
                }
                other => panic!("{other:?} after {seen:?}"),
            }
        }
    }

    fn has(changes: &[FileChange], kind: ChangeKind, path: &str) -> bool {
        changes.iter().any(|c| c.kind == kind && c.path == path)
    }

    #[test]
    fn a_watch_reports_create_write_rename_remove_and_ends_on_cancel() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        let (mut service, agent) = start_watch(root, false, 10);
        let file = path_in(&dir, "f");
        fs::write(&file, b"x").unwrap();
        fs::rename(&file, path_in(&dir, "g")).unwrap();
        fs::remove_file(path_in(&dir, "g")).unwrap();
        let seen = changes_until(&mut service, |c| c.kind == ChangeKind::Remove);
        assert!(has(&seen, ChangeKind::Create, &file), "{seen:?}");
        assert!(has(&seen, ChangeKind::Write, &file), "{seen:?}");
        assert!(has(&seen, ChangeKind::Rename, &file), "{seen:?}");
        assert!(
            has(&seen, ChangeKind::Create, &path_in(&dir, "g")),
            "{seen:?}"
        );
        // Not recursive: a subdirectory's files are not reported, the subdirectory is.
        fs::create_dir(path_in(&dir, "sub")).unwrap();
        fs::write(path_in(&dir, "sub/inner"), b"x").unwrap();
        fs::write(path_in(&dir, "marker"), b"x").unwrap();
        let seen = changes_until(&mut service, |c| c.path.ends_with("marker"));
        assert!(
            has(&seen, ChangeKind::Create, &path_in(&dir, "sub")),
            "{seen:?}"
        );
        assert!(!seen.iter().any(|c| c.path.contains("inner")), "{seen:?}");
        write_json(&mut service, &Request::Cancel).unwrap();
        loop {
            match event(&mut service) {
                Event::Files(FilesEvent::WatchEnd) => break,
                Event::Files(FilesEvent::FileChanges { .. }) => {}
                other => panic!("{other:?}"),
            }
        }
        agent.join().unwrap().unwrap();
    }

    /// Uploads `data` to `path` as the service does.
    fn upload(path: &str, data: &[u8]) {
        let path = path.to_string();
        let (mut service, agent) =
            start(move |c| super::super::write::write_file(c, &path, None, 100));
        assert_eq!(event(&mut service), Event::WriteReady);
        for payload in [data, b""] {
            write_frame(&mut service, FrameKind::Stdin, payload).unwrap();
        }
        assert!(matches!(
            event(&mut service),
            Event::Files(FilesEvent::FileWritten { .. })
        ));
        agent.join().unwrap().unwrap();
    }

    #[test]
    fn an_upload_is_reported_as_its_file_never_by_its_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        let (mut service, agent) = start_watch(dir.path().to_str().unwrap(), false, 10);
        let target = path_in(&dir, "written.txt");
        // A new file, then the same file replaced.
        for round in ["new", "replaced"] {
            upload(&target, round.as_bytes());
            let marker = path_in(&dir, &format!("marker-{round}"));
            fs::write(&marker, b"x").unwrap();
            let seen = changes_until(&mut service, |c| c.path == marker);
            assert!(
                !seen.iter().any(|c| c.path.contains(UPLOAD_PREFIX)),
                "{round}: {seen:?}"
            );
            let of_target: Vec<_> = seen
                .iter()
                .filter(|c| c.path == target)
                .map(|c| c.kind)
                .collect();
            assert_eq!(
                of_target,
                [ChangeKind::Create, ChangeKind::Chmod, ChangeKind::Write],
                "{round}: {seen:?}"
            );
        }
        drop(service);
        let _ = agent.join();
    }

    #[test]
    fn a_recursive_watch_follows_new_directories_within_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(path_in(&dir, "old/deeper")).unwrap();
        let root = dir.path().to_str().unwrap();
        let (mut service, agent) = start_watch(root, true, 4);
        fs::write(path_in(&dir, "old/deeper/a"), b"x").unwrap();
        let seen = changes_until(&mut service, |c| c.path.ends_with("deeper/a"));
        assert!(has(
            &seen,
            ChangeKind::Create,
            &path_in(&dir, "old/deeper/a")
        ));
        // A tree made at once: what was in it before its watch is reported as created.
        fs::create_dir_all(path_in(&dir, "new/x/y")).unwrap();
        fs::write(path_in(&dir, "new/x/y/b"), b"x").unwrap();
        let seen = changes_until(&mut service, |c| c.kind == ChangeKind::Overflow);
        // root, old, old/deeper and new are 4 watches: new/x is over the limit.
        assert!(
            has(&seen, ChangeKind::Create, &path_in(&dir, "new/x")),
            "{seen:?}"
        );
        assert!(
            has(&seen, ChangeKind::Overflow, &path_in(&dir, "new/x")),
            "{seen:?}"
        );
        drop(service);
        assert!(
            agent.join().unwrap().is_err(),
            "a closed connection ends the watch"
        );
    }

    #[test]
    fn a_watch_ends_when_its_directory_goes_and_refuses_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let sub = path_in(&dir, "sub");
        fs::create_dir(&sub).unwrap();
        let (mut service, agent) = start_watch(&sub, false, 10);
        fs::remove_dir(&sub).unwrap();
        loop {
            match event(&mut service) {
                Event::Files(FilesEvent::WatchEnd) => break,
                Event::Files(FilesEvent::FileChanges { changes }) => {
                    assert!(has(&changes, ChangeKind::Remove, &sub), "{changes:?}")
                }
                other => panic!("{other:?}"),
            }
        }
        agent.join().unwrap().unwrap();
        fs::write(&sub, b"file").unwrap();
        let path = sub.clone();
        let (mut service, agent) = start(move |c| watch(c, &path, false, 10));
        assert_eq!(error_code(event(&mut service)), ErrorCode::NotADirectory);
        agent.join().unwrap().unwrap();
    }
}
