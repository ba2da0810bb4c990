//! Opening a file of a volume from the host, confined to it. The files are the sandbox's
//! (hostile): every component is opened with `openat2` beneath the one before, refusing
//! symlinks, magic links and other filesystems, so nothing the sandbox made can lead the
//! service elsewhere; a file opened for reading must be a regular file (a FIFO would hang
//! the reader, a device is not data).

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

const RESOLVE: u64 = libc::RESOLVE_BENEATH
    | libc::RESOLVE_NO_SYMLINKS
    | libc::RESOLVE_NO_MAGICLINKS
    | libc::RESOLVE_NO_XDEV;

pub(crate) fn open_at(dir: &OwnedFd, name: &str, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: open_how is plain integers; all-zero is its documented empty value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC | libc::O_NOFOLLOW) as u64;
    how.mode = if flags & libc::O_CREAT != 0 {
        u64::from(mode)
    } else {
        0
    };
    how.resolve = RESOLVE;
    // SAFETY: openat2 reads the path and the struct it is given, of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            name.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether `name` in `dir` is a symlink (not followed): what ENOTDIR from a directory
/// component opened with `O_NOFOLLOW` may mean.
pub(crate) fn is_symlink_at(dir: &OwnedFd, name: &str) -> bool {
    let Ok(name) = CString::new(name) else {
        return false;
    };
    // SAFETY: stat is plain integers; all-zero is a valid value to be overwritten.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstatat writes into the struct it is given; the name is a C string.
    let found = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    found == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFLNK
}

/// The refusal of a symlink on the way.
pub(crate) fn symlink_refused() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "a symlink is on the way")
}

/// Gives what the service made to the sandboxes' uid, so they own the files they see.
pub(crate) fn give(fd: &OwnedFd, uid: u32) -> io::Result<()> {
    // SAFETY: fchown on a descriptor this function's caller owns.
    if unsafe { libc::fchown(fd.as_raw_fd(), uid, uid) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The components of `path` (relative to the volume's root; a leading `/` is the root);
/// `..` is refused.
pub(crate) fn components(path: &str) -> io::Result<Vec<&str>> {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "`..` leaves the volume",
        ));
    }
    Ok(parts)
}

/// The volume's root directory (the service's own path, not the sandbox's).
pub(crate) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let root = CString::new(root.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: open of a C string; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            root.as_ptr(),
            libc::O_DIRECTORY | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_RDONLY,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The directory `dirs` beneath `dir`, each opened beneath the one before; missing ones
/// made (owned by `uid`) when `make`.
pub(crate) fn descend(
    mut dir: OwnedFd,
    dirs: &[&str],
    make: bool,
    uid: u32,
) -> io::Result<OwnedFd> {
    for part in dirs {
        dir = match open_dir_at(&dir, part) {
            Err(e) if make && e.kind() == io::ErrorKind::NotFound => {
                make_dir_at(&dir, part, uid)?;
                open_dir_at(&dir, part)?
            }
            other => other?,
        };
    }
    Ok(dir)
}

/// The directory `name` in `dir`; a symlink there is refused as such.
pub(crate) fn open_dir_at(dir: &OwnedFd, name: &str) -> io::Result<OwnedFd> {
    match open_at(dir, name, libc::O_DIRECTORY | libc::O_RDONLY, 0) {
        Err(_) if is_symlink_at(dir, name) => Err(symlink_refused()),
        other => other,
    }
}

/// Makes the directory `name` in `dir`, owned by `uid`; one that is there already is fine.
pub(crate) fn make_dir_at(dir: &OwnedFd, name: &str, uid: u32) -> io::Result<()> {
    let c_name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: mkdirat on an owned directory descriptor and a C string.
    if unsafe { libc::mkdirat(dir.as_raw_fd(), c_name.as_ptr(), 0o755) } != 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Err(e);
        }
        return Ok(());
    }
    give(&open_dir_at(dir, name)?, uid)
}

/// Opens `path` (relative to the volume's root; a leading `/` is the root) under `root`:
/// for reading, a regular file; for writing, created or truncated, missing directories made,
/// what is made owned by `uid`.
pub fn open(root: &Path, path: &str, write: bool, uid: u32) -> io::Result<File> {
    let parts = components(path)?;
    let Some((name, dirs)) = parts.split_last() else {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "the volume's root is a directory",
        ));
    };
    let dir = descend(open_root(root)?, dirs, write, uid)?;
    let file = if write {
        let fd = open_at(
            &dir,
            name,
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NONBLOCK,
            0o644,
        )?;
        give(&fd, uid)?;
        File::from(fd)
    } else {
        File::from(open_at(&dir, name, libc::O_RDONLY | libc::O_NONBLOCK, 0)?)
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            if meta.is_dir() {
                io::ErrorKind::IsADirectory
            } else {
                io::ErrorKind::PermissionDenied
            },
            "not a regular file",
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn files_open_beneath_the_root_and_no_symlink_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        open(root, "a/b/c.txt", true, uid)
            .unwrap()
            .write_all(b"hi")
            .unwrap();
        let mut text = String::new();
        open(root, "/a/b/c.txt", false, uid)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "hi");
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("a/host")).unwrap();
        assert!(open(root, "out/passwd", false, uid).is_err());
        assert!(open(root, "out/x", true, uid).is_err());
        assert!(open(root, "a/host", false, uid).is_err());
        assert!(open(root, "a/host", true, uid).is_err());
        assert!(open(root, "../x", true, uid).is_err());
        assert!(open(root, "a", false, uid).is_err());
        let fifo = CString::new(root.join("pipe").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo of a C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert!(open(root, "pipe", false, uid).is_err(), "a FIFO is no file");
    }
}
