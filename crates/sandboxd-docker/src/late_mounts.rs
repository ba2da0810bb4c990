//! Volumes mounted into a runc sandbox that is already running: one from a warm pool, started
//! before anyone asked for them and handed out before anything of its client ran in it.
//!
//! The volume's mount on the host is cloned as a detached mount (`open_tree`), made nosuid,
//! nodev and, when asked, read-only while still detached, and a thread of ours that entered
//! the container's mount namespace attaches it at the path (`move_mount`), making the path's
//! missing directories there without following any symlink. The engine never learns of the
//! mount; it ends with the container's mount namespace, as a bind of the engine's would.
//! gVisor sandboxes see no mount made after their start: their volumes are declared at create.

use rustix::fd::{AsFd, AsRawFd, OwnedFd};
use rustix::fs::{Mode, OFlags, CWD};
use rustix::io::Errno;
use rustix::mount::{MoveMountFlags, OpenTreeFlags};
use rustix::thread::{ThreadNameSpaceType, UnshareFlags};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// `struct mount_attr` of `mount_setattr(2)`, which rustix does not wrap.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

/// One volume to attach: its mount on the host, and where in the sandbox.
pub(crate) struct LateMount<'a> {
    pub host_source: &'a Path,
    pub target: &'a str,
    pub read_only: bool,
}

/// Attaches `mounts` in the mount namespace of the process `pidfd` refers to (the
/// container's first process). Blocking: the work runs on a thread of its own, which ends
/// with it, because a thread that entered another mount namespace cannot come back.
pub(crate) fn attach(pidfd: OwnedFd, mounts: &[LateMount<'_>]) -> io::Result<()> {
    // Cloned here, in the host's namespace, where the sources are.
    let trees = mounts
        .iter()
        .map(|mount| detached_copy(mount.host_source, mount.read_only))
        .collect::<io::Result<Vec<_>>>()?;
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                enter_mount_namespace(&pidfd)?;
                for (tree, LateMount { target, .. }) in trees.iter().zip(mounts) {
                    let at = make_dirs(target)?;
                    rustix::mount::move_mount(
                        tree.as_fd(),
                        "",
                        at.as_fd(),
                        "",
                        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH
                            | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH,
                    )
                    .map_err(|e| context(e, format!("cannot attach the volume at {target}")))?;
                }
                Ok(())
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the mounting thread panicked")))
    })
}

fn context(e: Errno, what: String) -> io::Error {
    io::Error::new(io::Error::from(e).kind(), format!("{what}: {e}"))
}

/// A detached copy of the mount at `source` (that mount alone, not what is below it).
fn detached_copy(source: &Path, read_only: bool) -> io::Result<OwnedFd> {
    let tree = rustix::mount::open_tree(
        CWD,
        source,
        OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC,
    )
    .map_err(|e| context(e, format!("cannot copy the mount {}", source.display())))?;
    // Copied from the volume's own filesystem, never from the directory under it (unmounted
    // since it was checked): its files would land on the host's disk, uncapped.
    let copied = rustix::fs::fstat(&tree).map_err(|e| context(e, "cannot stat the copy".into()))?;
    let under = source
        .parent()
        .map(std::fs::metadata)
        .transpose()?
        .map(|parent| parent.dev());
    if under == Some(copied.st_dev) {
        return Err(io::Error::other(format!(
            "{} is not mounted any more",
            source.display()
        )));
    }
    let attributes = MountAttr {
        attr_set: MOUNT_ATTR_NOSUID
            | MOUNT_ATTR_NODEV
            | if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a descriptor we own, an empty C string with AT_EMPTY_PATH, and a mount_attr of
    // the size passed, which the kernel only reads.
    let done = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            &attributes as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if done != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("cannot set the volume's mount options: {e}"),
        ));
    }
    Ok(tree)
}

/// Moves this thread into the mount namespace of `pidfd`'s process; its root and working
/// directory become that namespace's root.
fn enter_mount_namespace(pidfd: &OwnedFd) -> io::Result<()> {
    // SAFETY: only the filesystem attributes (root, cwd, umask) are unshared, which a thread
    // must own alone to change mount namespace; no descriptor table is unshared.
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::FS) }.map_err(|e| {
        context(
            e,
            "cannot unshare the thread's filesystem attributes".into(),
        )
    })?;
    rustix::thread::move_into_thread_name_spaces(pidfd.as_fd(), ThreadNameSpaceType::MOUNT)
        .map_err(|e| context(e, "cannot enter the sandbox's mount namespace".into()))
}

/// Opens the directory `target` (absolute, checked by the core: no `.`, `..` or empty
/// component), making what is missing (0755, root's, as the engine makes a bind's target).
/// Each component is opened on its own and never through a symlink.
fn make_dirs(target: &str) -> io::Result<OwnedFd> {
    let mut dir = rustix::fs::open(
        "/",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| context(e, "cannot open the sandbox's root".into()))?;
    for name in target.split('/').filter(|name| !name.is_empty()) {
        match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(context(e, format!("cannot make {name} of {target}"))),
        }
        dir = rustix::fs::openat(
            &dir,
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            context(
                e,
                format!("cannot open {name} of {target} (never through a symlink)"),
            )
        })?;
    }
    Ok(dir)
}
