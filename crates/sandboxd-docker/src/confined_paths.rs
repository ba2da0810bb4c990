//! A volume's entries from the host, besides a file's bytes (`confined`): the entry at a
//! path, a directory's listing, a directory made, a path removed. Every directory is opened
//! beneath the one before without following a symlink, and every entry is looked at without
//! following it (`AT_SYMLINK_NOFOLLOW`), so the sandbox's files lead nowhere else; a
//! removal unlinks a symlink itself, never what it names. Listings and removals are bounded
//! in depth, a listing in entries too.

use crate::confined::{components, descend, give, open_dir_at, open_root};
use sandboxd_backend::{VolumeEntry, VolumeEntryKind, VolumePathOp};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// How deep a removal goes: a tree deeper than this (only a sandbox would make one) is
/// refused rather than recursed into without end.
const MAX_DEPTH: u32 = 64;

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// What `fstatat` says of `name` in `dir` (the directory itself for `""`), not followed.
fn stat_at(dir: &OwnedFd, name: &str) -> io::Result<libc::stat> {
    let c_name = c_name(name)?;
    let flags = if name.is_empty() {
        libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW
    } else {
        libc::AT_SYMLINK_NOFOLLOW
    };
    // SAFETY: stat is plain integers; all-zero is a valid value to be overwritten.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstatat writes into the struct it is given; the name is a C string.
    if unsafe { libc::fstatat(dir.as_raw_fd(), c_name.as_ptr(), &mut stat, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stat)
}

/// Where the symlink `name` in `dir` points, as written (bounded: a link holds at most a page).
fn link_target(dir: &OwnedFd, name: &str) -> Option<String> {
    let c_name = c_name(name).ok()?;
    let mut buffer = vec![0u8; 4096];
    // SAFETY: readlinkat writes at most the buffer's length into it.
    let read = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    let read = usize::try_from(read).ok()?;
    buffer.truncate(read);
    Some(String::from_utf8_lossy(&buffer).into_owned())
}

fn kind_of(stat: &libc::stat) -> VolumeEntryKind {
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG => VolumeEntryKind::File,
        libc::S_IFDIR => VolumeEntryKind::Directory,
        libc::S_IFLNK => VolumeEntryKind::Symlink,
        _ => VolumeEntryKind::Other,
    }
}

/// The entry `name` in `dir`, whose path is `path`.
fn entry_at(dir: &OwnedFd, name: &str, path: String) -> io::Result<VolumeEntry> {
    let stat = stat_at(dir, name)?;
    let kind = kind_of(&stat);
    Ok(VolumeEntry {
        path,
        kind,
        size: u64::try_from(stat.st_size).unwrap_or(0),
        mode: stat.st_mode & 0o7777,
        uid: stat.st_uid,
        gid: stat.st_gid,
        accessed: stat.st_atime,
        modified: stat.st_mtime,
        changed: stat.st_ctime,
        target: if kind == VolumeEntryKind::Symlink {
            link_target(dir, name)
        } else {
            None
        },
    })
}

/// The names in the directory `dir` (not `.` or `..`).
fn names_in(dir: &OwnedFd) -> io::Result<Vec<String>> {
    // The descriptor's own link: the very directory opened, not a path walked again.
    let listing = std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))?;
    listing
        .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect()
}

fn joined(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// The entries below `dir` (at `path`), `depth` levels down, appended to `out` up to `max`.
fn list_into(
    dir: &OwnedFd,
    path: &str,
    depth: u32,
    max: usize,
    out: &mut Vec<VolumeEntry>,
) -> io::Result<()> {
    let mut names = names_in(dir)?;
    names.sort_unstable();
    for name in names {
        if out.len() >= max {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("the listing has more than {max} entries; list a directory further down, or fewer levels"),
            ));
        }
        let entry = entry_at(dir, &name, joined(path, &name))?;
        let below = entry.kind == VolumeEntryKind::Directory && depth > 1;
        let entry_path = entry.path.clone();
        out.push(entry);
        if below {
            list_into(&open_dir_at(dir, &name)?, &entry_path, depth - 1, max, out)?;
        }
    }
    Ok(())
}

/// Removes `name` in `dir`: a directory with everything in it, anything else itself.
fn remove_at(dir: &OwnedFd, name: &str, depth: u32) -> io::Result<()> {
    let c_name = c_name(name)?;
    let flags = if kind_of(&stat_at(dir, name)?) == VolumeEntryKind::Directory {
        if depth >= MAX_DEPTH {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("the tree is more than {MAX_DEPTH} directories deep"),
            ));
        }
        let inner = open_dir_at(dir, name)?;
        for child in names_in(&inner)? {
            remove_at(&inner, &child, depth + 1)?;
        }
        libc::AT_REMOVEDIR
    } else {
        0
    };
    // SAFETY: unlinkat on an owned directory descriptor and a C string.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), c_name.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Does `op` at `path` of the volume whose root is `root`; what is made is owned by `uid`.
pub fn at(root: &Path, path: &str, op: VolumePathOp, uid: u32) -> io::Result<Vec<VolumeEntry>> {
    let parts = components(path)?;
    let shown = format!("/{}", parts.join("/"));
    let root = open_root(root)?;
    let Some((name, dirs)) = parts.split_last() else {
        // The volume's root itself.
        return match op {
            VolumePathOp::Stat => Ok(vec![entry_at(&root, "", shown)?]),
            VolumePathOp::List { depth, max } => {
                let mut out = Vec::new();
                list_into(&root, &shown, depth, max, &mut out)?;
                Ok(out)
            }
            VolumePathOp::MakeDir { .. } => Err(io::ErrorKind::AlreadyExists.into()),
            VolumePathOp::Remove => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the volume's root cannot be removed (delete the volume)",
            )),
        };
    };
    let make_parents = matches!(op, VolumePathOp::MakeDir { parents: true });
    let dir = descend(root, dirs, make_parents, uid)?;
    match op {
        VolumePathOp::Stat => Ok(vec![entry_at(&dir, name, shown)?]),
        VolumePathOp::List { depth, max } => {
            let inner = open_dir_at(&dir, name)?;
            let mut out = Vec::new();
            list_into(&inner, &shown, depth, max, &mut out)?;
            Ok(out)
        }
        VolumePathOp::MakeDir { .. } => {
            let c_name = c_name(name)?;
            // SAFETY: mkdirat on an owned directory descriptor and a C string.
            if unsafe { libc::mkdirat(dir.as_raw_fd(), c_name.as_ptr(), 0o755) } != 0 {
                return Err(io::Error::last_os_error());
            }
            give(&open_dir_at(&dir, name)?, uid)?;
            Ok(vec![entry_at(&dir, name, shown)?])
        }
        VolumePathOp::Remove => {
            remove_at(&dir, name, 0)?;
            Ok(Vec::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confined::open;
    use std::io::Write;

    #[test]
    fn entries_are_listed_made_and_removed_beneath_the_root_without_following_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        open(root, "a/b/c.txt", true, uid)
            .unwrap()
            .write_all(b"hi")
            .unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("a/out")).unwrap();
        let stat = at(root, "/a/b/c.txt", VolumePathOp::Stat, uid).unwrap();
        assert_eq!(stat[0].kind, VolumeEntryKind::File);
        assert_eq!(stat[0].size, 2);
        assert_eq!(stat[0].path, "/a/b/c.txt");
        let list = |depth| at(root, "a", VolumePathOp::List { depth, max: 100 }, uid).unwrap();
        let paths: Vec<String> = list(1).into_iter().map(|e| e.path).collect();
        assert_eq!(paths, ["/a/b", "/a/out"]);
        let deep = list(2);
        assert_eq!(deep.len(), 3);
        let link = deep.iter().find(|e| e.path == "/a/out").unwrap();
        assert_eq!(link.kind, VolumeEntryKind::Symlink);
        assert_eq!(link.target.as_deref(), outside.path().to_str());
        let too_many = at(root, "/", VolumePathOp::List { depth: 3, max: 2 }, uid);
        assert!(too_many.is_err());
        // Nothing is reached through the symlink.
        assert!(at(root, "a/out/keep", VolumePathOp::Stat, uid).is_err());
        assert!(at(root, "a/out", VolumePathOp::List { depth: 1, max: 9 }, uid).is_err());
        assert!(at(
            root,
            "a/out/x",
            VolumePathOp::MakeDir { parents: true },
            uid
        )
        .is_err());
        assert!(at(root, "../x", VolumePathOp::Stat, uid).is_err());
        let made = at(root, "d/e", VolumePathOp::MakeDir { parents: true }, uid).unwrap();
        assert_eq!(made[0].kind, VolumeEntryKind::Directory);
        let again = at(root, "d/e", VolumePathOp::MakeDir { parents: false }, uid);
        assert_eq!(again.unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        let orphan = at(root, "x/y", VolumePathOp::MakeDir { parents: false }, uid);
        assert_eq!(orphan.unwrap_err().kind(), io::ErrorKind::NotFound);
        // The symlink goes, never what it names.
        at(root, "a", VolumePathOp::Remove, uid).unwrap();
        assert!(!root.join("a").exists());
        assert!(outside.path().join("keep").exists());
        assert!(at(root, "/", VolumePathOp::Remove, uid).is_err());
    }
}
