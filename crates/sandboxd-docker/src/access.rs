//! Who may reach a sandbox's agent socket, and the secret its agent proves itself with.
//!
//! On the host the socket root and everything above it in the state directory are 0700 and
//! owned by the service's user, so no other user of the host can even reach a socket. The
//! per-sandbox directory is bind-mounted into the sandbox, where the agent (uid
//! [`SANDBOX_UID`]) must open it: the directory, the socket and the secret file belong to that
//! uid and to nobody else. The host's parent directories are not on the path inside the
//! container, so the agent can connect while host users cannot.
//!
//! Each sandbox's secret is derived, not stored ([`sandboxd_agent_proto::host::AgentKey`]), so
//! there is no per-sandbox secret file to keep, clean up or leak beyond the one the agent reads
//! at start (removed once it said hello, see [`remove_secret`]).

use crate::layout::SANDBOX_UID;
use sandboxd_agent_proto::host::make_wake_fifo;
use sandboxd_agent_proto::{AgentSecret, AGENT_SECRET_FILE};
use std::fs::{self, DirBuilder, Metadata, OpenOptions, Permissions};
use std::io::{self, ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// A sandbox's directory's mode when its agent's uid owns it, and when it stays the service's.
const DIR_OWNER_MODE: u32 = 0o700;
const DIR_OPEN_MODE: u32 = 0o711;

/// Creates `dir` (and missing parents) as 0700, or tightens it to 0700 if it exists.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    fs::set_permissions(dir, Permissions::from_mode(0o700))
}

/// How the per-sandbox directory, socket and secret file are handed to the agent's uid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxAccess {
    /// Owned by the sandbox uid, closed to everyone else: the service runs as root and the
    /// sandbox uid is the same on the host (no user namespace remapping).
    Owner(u32),
    /// The service cannot give files to the sandbox's uid (it is not root, or the engine
    /// remaps uids): the files stay the service's, open to others inside the socket root,
    /// which the host's other users still cannot traverse.
    Others,
}

impl SandboxAccess {
    pub fn choose(service_is_root: bool, user_namespaces: bool) -> SandboxAccess {
        if service_is_root && !user_namespaces {
            SandboxAccess::Owner(SANDBOX_UID)
        } else {
            SandboxAccess::Others
        }
    }

    /// The access a directory of an earlier run was handed over with, `found` as it is: given
    /// to the sandbox's uid, or open to others (the sandbox can change neither: the directory
    /// is mounted read-only inside). Asks nothing of the engine, so a restarted service binds
    /// the sockets of the last run before the engine has answered; one in neither state (left
    /// loose by an earlier version) is handed over as by a service whose engine does not remap
    /// uids.
    pub fn of_last_run(found: &Metadata, service_is_root: bool) -> SandboxAccess {
        if found.uid() == SANDBOX_UID {
            SandboxAccess::Owner(SANDBOX_UID)
        } else if found.mode() & 0o7777 == DIR_OPEN_MODE {
            SandboxAccess::Others
        } else {
            SandboxAccess::choose(service_is_root, false)
        }
    }

    /// Gives `path` to the agent: `owner_mode` when it becomes the owner, `open_mode`
    /// (the same access for group and others) otherwise.
    fn hand_over(self, path: &Path, owner_mode: u32, open_mode: u32) -> io::Result<()> {
        let mode = match self {
            SandboxAccess::Owner(uid) => {
                std::os::unix::fs::chown(path, Some(uid), Some(uid))?;
                owner_mode
            }
            SandboxAccess::Others => open_mode,
        };
        fs::set_permissions(path, Permissions::from_mode(mode))
    }

    /// Hands the sandbox's directory to the agent (a new one, or one adopted from an earlier
    /// run, which may have been left with looser modes).
    pub fn hand_over_dir(self, dir: &Path) -> io::Result<()> {
        self.hand_over(dir, DIR_OWNER_MODE, DIR_OPEN_MODE)
    }

    /// Hands an adopted directory, `found` as it is, to the agent again unless it is already
    /// as handed over: a restart with thousands of sessions is spared two calls for each.
    pub fn hand_back_dir(self, dir: &Path, found: &Metadata) -> io::Result<()> {
        let mode = found.mode() & 0o7777;
        let handed_over = match self {
            SandboxAccess::Owner(uid) => {
                found.uid() == uid && found.gid() == uid && mode == DIR_OWNER_MODE
            }
            SandboxAccess::Others => mode == DIR_OPEN_MODE,
        };
        if handed_over {
            return Ok(());
        }
        self.hand_over_dir(dir)
    }

    /// Hands the listening socket to the agent: it needs write permission to connect.
    pub fn hand_over_socket(self, socket: &Path) -> io::Result<()> {
        self.hand_over(socket, 0o600, 0o666)
    }

    /// Makes the FIFO beside `socket` on which the agent waits while the service is away, for
    /// the agent alone, like its socket.
    pub fn make_wake(self, socket: &Path) -> io::Result<()> {
        let fifo = make_wake_fifo(socket)?;
        self.hand_over(&fifo, 0o600, 0o666)
    }

    /// Writes `secret` where the agent reads it at start, readable by the agent only.
    pub fn write_secret(self, dir: &Path, secret: &AgentSecret) -> io::Result<()> {
        let path = dir.join(AGENT_SECRET_FILE);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o400)
            .open(&path)?;
        file.write_all(secret.expose().as_bytes())?;
        drop(file);
        self.hand_over(&path, 0o400, 0o444)
    }
}

/// Removes the secret file once the agent has read it and said hello, before anything else
/// runs in the sandbox: every sandbox process has the agent's uid and could read it.
pub fn remove_secret(dir: &Path) -> io::Result<()> {
    match fs::remove_file(dir.join(AGENT_SECRET_FILE)) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The suites' "skip or fail": a skip outside CI, a failure in CI.
#[cfg(test)]
#[path = "../../sandboxd/tests/common/skip.rs"]
mod skip_in_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use sandboxd_agent_proto::AGENT_SECRET_LEN;
    use skip_in_tests as skip;
    use std::os::unix::fs::FileTypeExt;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().mode() & 0o7777
    }

    #[test]
    fn private_dirs_are_created_and_tightened() {
        let root = tempfile::tempdir().unwrap();
        let nested = root.path().join("a/b");
        private_dir(&nested).unwrap();
        assert_eq!(mode(&nested), 0o700);
        fs::set_permissions(&nested, Permissions::from_mode(0o755)).unwrap();
        private_dir(&nested).unwrap();
        assert_eq!(mode(&nested), 0o700);
    }

    #[test]
    fn an_adopted_directory_is_handed_back_only_when_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let access = SandboxAccess::Others;
        let changed = |path: &Path| {
            let meta = fs::metadata(path).unwrap();
            (meta.ctime(), meta.ctime_nsec())
        };
        fs::set_permissions(dir.path(), Permissions::from_mode(0o755)).unwrap();
        let found = fs::metadata(dir.path()).unwrap();
        access.hand_back_dir(dir.path(), &found).unwrap();
        assert_eq!(mode(dir.path()), 0o711, "loosened: handed over again");
        let before = changed(dir.path());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let found = fs::metadata(dir.path()).unwrap();
        access.hand_back_dir(dir.path(), &found).unwrap();
        assert_eq!(changed(dir.path()), before, "as handed over: left alone");
    }

    #[test]
    fn a_directory_of_the_last_run_says_how_it_was_handed_over() {
        let dir = tempfile::tempdir().unwrap();
        let found = |path: &Path| fs::metadata(path).unwrap();
        SandboxAccess::Others.hand_over_dir(dir.path()).unwrap();
        assert_eq!(
            SandboxAccess::of_last_run(&found(dir.path()), true),
            SandboxAccess::Others
        );
        fs::set_permissions(dir.path(), Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            SandboxAccess::of_last_run(&found(dir.path()), false),
            SandboxAccess::Others,
            "left loose, with a service that cannot give files away"
        );
        assert_eq!(
            SandboxAccess::of_last_run(&found(dir.path()), true),
            SandboxAccess::Owner(SANDBOX_UID),
            "left loose, with a root service"
        );
        // Giving a file away takes root, which the service has when it gives.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skip::skip_or_fail("root, to give a file away");
            return;
        }
        SandboxAccess::Owner(SANDBOX_UID)
            .hand_over_dir(dir.path())
            .unwrap();
        assert_eq!(
            SandboxAccess::of_last_run(&found(dir.path()), false),
            SandboxAccess::Owner(SANDBOX_UID)
        );
    }

    #[test]
    fn without_a_uid_to_give_them_to_the_files_open_to_others() {
        let dir = tempfile::tempdir().unwrap();
        let access = SandboxAccess::Others;
        access.hand_over_dir(dir.path()).unwrap();
        assert_eq!(mode(dir.path()), 0o711);
        let secret = AgentSecret::from_bytes(&[7; AGENT_SECRET_LEN]);
        access.write_secret(dir.path(), &secret).unwrap();
        let file = dir.path().join(AGENT_SECRET_FILE);
        assert_eq!(mode(&file), 0o444);
        assert_eq!(fs::read_to_string(&file).unwrap(), secret.expose());
        remove_secret(dir.path()).unwrap();
        assert!(!file.exists());
        remove_secret(dir.path()).unwrap();
        access.make_wake(&dir.path().join("agent.sock")).unwrap();
        assert_eq!(
            mode(&dir.path().join(sandboxd_agent_proto::AGENT_WAKE_FILE)),
            0o666
        );
    }

    #[test]
    fn the_sandbox_uid_owns_its_files_alone() {
        if !is_root() {
            skip::skip_or_fail("root, for chown (the service runs as root)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let access = SandboxAccess::Owner(SANDBOX_UID);
        access.hand_over_dir(dir.path()).unwrap();
        let meta = fs::metadata(dir.path()).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid(), mode(dir.path())),
            (SANDBOX_UID, SANDBOX_UID, 0o700)
        );
        access
            .write_secret(dir.path(), &AgentSecret::from_bytes(&[1; AGENT_SECRET_LEN]))
            .unwrap();
        let file = dir.path().join(AGENT_SECRET_FILE);
        let meta = fs::metadata(&file).unwrap();
        assert_eq!((meta.uid(), mode(&file)), (SANDBOX_UID, 0o400));
        access.make_wake(&dir.path().join("agent.sock")).unwrap();
        let fifo = dir.path().join(sandboxd_agent_proto::AGENT_WAKE_FILE);
        let meta = fs::metadata(&fifo).unwrap();
        assert!(meta.file_type().is_fifo());
        assert_eq!((meta.uid(), mode(&fifo)), (SANDBOX_UID, 0o600));
    }

    fn is_root() -> bool {
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() == 0 }
    }

    #[test]
    fn choice_of_access() {
        assert_eq!(
            SandboxAccess::choose(true, false),
            SandboxAccess::Owner(SANDBOX_UID)
        );
        assert_eq!(SandboxAccess::choose(true, true), SandboxAccess::Others);
        assert_eq!(SandboxAccess::choose(false, false), SandboxAccess::Others);
    }
}
