//! Directory trees for `sandboxd cp`: a local tree packed as a tar (symlinks as symlinks,
//! never followed) to upload, and a downloaded tar extracted here. What comes out of a sandbox
//! is hostile: it is read with the bounded tar reader, extracted into a fresh hidden directory
//! beside the destination and renamed into place once complete; no name leaves it, no path
//! passes through a symlink, and a symlink that would point outside it is not made.

use anyhow::{bail, Context, Result};
use sandboxd_agent_proto::tar_read::{Kind, TarReader};
use sandboxd_agent_proto::MAX_ARCHIVE_ENTRIES;
use std::ffi::OsStr;
use std::fs::{self, DirBuilder, OpenOptions, Permissions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Modes while extracting: the owner can always write into what it made.
const WORK_DIR_MODE: u32 = 0o700;
const WORK_FILE_MODE: u32 = 0o600;

/// What a pack or an extraction did.
#[derive(Debug, Default, serde::Serialize)]
pub struct TreeCopied {
    pub path: String,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    pub bytes: u64,
    /// Entries left out: special files, or symlinks that would point outside the copy.
    pub skipped: u64,
}

/// Writes the tree under `root` as a tar to `out`: its entries named relative to it, regular
/// files, directories and symlinks (as symlinks); special files are left out and counted.
pub fn pack(root: &Path, out: impl Write) -> Result<TreeCopied> {
    let mut builder = tar::Builder::new(out);
    let mut copied = TreeCopied::default();
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        let full = root.join(&dir);
        let mut names: Vec<_> = fs::read_dir(&full)
            .with_context(|| format!("cannot read {}", full.display()))?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect::<io::Result<_>>()
            .with_context(|| format!("cannot read {}", full.display()))?;
        names.sort();
        let mut subdirs = Vec::new();
        for name in names {
            let name = dir.join(name);
            let path = root.join(&name);
            let meta = fs::symlink_metadata(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let mut header = tar::Header::new_gnu();
            header.set_mode(meta.mode() & 0o7777);
            header.set_mtime(u64::try_from(meta.mtime()).unwrap_or(0));
            let file_type = meta.file_type();
            let appended = if file_type.is_dir() {
                subdirs.push(name.clone());
                copied.dirs += 1;
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
                builder.append_data(&mut header, &name, io::empty())
            } else if file_type.is_symlink() {
                copied.symlinks += 1;
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_size(0);
                let target = fs::read_link(&path)?;
                builder.append_link(&mut header, &name, target)
            } else if file_type.is_file() {
                let file = OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let size = file.metadata()?.len();
                copied.files += 1;
                copied.bytes += size;
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(size);
                builder.append_data(&mut header, &name, file.take(size))
            } else {
                eprintln!(
                    "sandboxd: skipped {}: not a file, directory or symlink",
                    path.display()
                );
                copied.skipped += 1;
                continue;
            };
            appended.with_context(|| format!("cannot archive {}", path.display()))?;
        }
        pending.extend(subdirs.into_iter().rev());
    }
    builder.into_inner()?.flush()?;
    Ok(copied)
}

/// Extracts the tar read from `tar` as the new directory `target`, which must not exist:
/// into a hidden directory beside it first, renamed to it once every entry is in.
pub fn extract(tar: impl Read, target: &Path) -> Result<TreeCopied> {
    if fs::symlink_metadata(target).is_ok() {
        bail!("{} exists already; name a new directory", target.display());
    }
    let name = target
        .file_name()
        .with_context(|| format!("{} names no directory", target.display()))?;
    let parent = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let work = WorkDir(parent.join(format!(
        ".{}.sandboxd-{}.part",
        name.to_string_lossy(),
        std::process::id()
    )));
    DirBuilder::new()
        .mode(WORK_DIR_MODE)
        .create(&work.0)
        .with_context(|| format!("cannot create {}", work.0.display()))?;
    let mut copied = extract_into(TarReader::new(tar), &work.0)?;
    fs::rename(&work.0, target).with_context(|| format!("cannot create {}", target.display()))?;
    copied.path = target.display().to_string();
    Ok(copied)
}

fn extract_into(mut reader: TarReader<impl Read>, root: &Path) -> Result<TreeCopied> {
    let mut copied = TreeCopied::default();
    let mut dir_modes = Vec::new();
    let mut entries = 0u64;
    while let Some(entry) = reader.next_entry()? {
        entries += 1;
        if entries > MAX_ARCHIVE_ENTRIES {
            bail!("the archive holds more than {MAX_ARCHIVE_ENTRIES} entries");
        }
        let Some(relative) = entry.relative_path()? else {
            continue;
        };
        let destination = make_parents(root, &relative)?;
        let shown = relative.display();
        let mode = entry.mode & 0o777;
        match entry.kind {
            Kind::Dir => {
                match DirBuilder::new().mode(WORK_DIR_MODE).create(&destination) {
                    Ok(()) => copied.dirs += 1,
                    Err(e) if e.kind() == ErrorKind::AlreadyExists && is_dir(&destination) => {}
                    Err(e) => return Err(e).with_context(|| format!("cannot create {shown}")),
                }
                dir_modes.push((destination, mode));
            }
            Kind::Symlink => {
                let target = Path::new(OsStr::from_bytes(&entry.link));
                if !stays_inside(&relative, target) {
                    eprintln!(
                        "sandboxd: skipped the symlink {shown} -> {}: it points outside the copy",
                        target.display()
                    );
                    copied.skipped += 1;
                    continue;
                }
                remove_non_dir(&destination)?;
                std::os::unix::fs::symlink(target, &destination)
                    .with_context(|| format!("cannot create {shown}"))?;
                copied.symlinks += 1;
            }
            Kind::File => {
                remove_non_dir(&destination)?;
                let mut file = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(WORK_FILE_MODE)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&destination)
                    .with_context(|| format!("cannot create {shown}"))?;
                copied.bytes += io::copy(&mut reader.contents(), &mut file)
                    .with_context(|| format!("cannot write {shown}"))?;
                file.set_permissions(Permissions::from_mode(mode))?;
                copied.files += 1;
            }
        }
    }
    // Deepest first, so a directory made read-only does not stop its children's.
    dir_modes.sort_by_key(|(dir, _)| std::cmp::Reverse(dir.components().count()));
    for (dir, mode) in dir_modes {
        fs::set_permissions(&dir, Permissions::from_mode(mode))?;
    }
    Ok(copied)
}

/// The directories on the way to `relative` under `root`, made where missing; a way through
/// a symlink or a file is refused.
fn make_parents(root: &Path, relative: &Path) -> Result<PathBuf> {
    let mut current = root.to_path_buf();
    let parts: Vec<_> = relative.components().collect();
    for part in &parts[..parts.len() - 1] {
        current.push(part);
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => bail!(
                "{} in the archive passes through a symlink or a file",
                relative.display()
            ),
            Err(e) if e.kind() == ErrorKind::NotFound => DirBuilder::new()
                .mode(WORK_DIR_MODE)
                .create(&current)
                .with_context(|| format!("cannot create {}", current.display()))?,
            Err(e) => return Err(e.into()),
        }
    }
    current.push(parts[parts.len() - 1]);
    Ok(current)
}

fn is_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// A later entry of the same name replaces a file or a symlink, never a directory.
fn remove_non_dir(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => bail!("{} would replace a directory", path.display()),
        Ok(_) => Ok(fs::remove_file(path)?),
        Err(_) => Ok(()),
    }
}

/// Whether a symlink at `link` (relative to the copy's top) with this target resolves inside
/// the copy, whatever the other symlinks in it: the target is relative, its `..` come first
/// and climb no higher than the top (they climb through real directories, made here), and
/// the rest descends. A symlink it descends through obeys the same rule.
fn stays_inside(link: &Path, target: &Path) -> bool {
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

/// The hidden directory a download is extracted into; removed unless renamed into place.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        if fs::symlink_metadata(&self.0).is_err() {
            return;
        }
        make_writable(&self.0);
        let _ = fs::remove_dir_all(&self.0);
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
    fn symlinks_that_could_leave_the_copy_are_told_apart() {
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

    #[test]
    fn a_packed_tree_extracts_the_same_and_a_hostile_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("source");
        fs::create_dir_all(source.join("sub")).unwrap();
        fs::write(source.join("sub/f"), b"data").unwrap();
        fs::set_permissions(source.join("sub/f"), Permissions::from_mode(0o751)).unwrap();
        std::os::unix::fs::symlink("../sub/f", source.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", source.join("out")).unwrap();
        let mut tar = Vec::new();
        let packed = pack(&source, &mut tar).unwrap();
        assert_eq!((packed.files, packed.dirs, packed.symlinks), (1, 1, 2));

        let copy = dir.path().join("copy");
        let extracted = extract(tar.as_slice(), &copy).unwrap();
        assert_eq!(
            (extracted.files, extracted.symlinks, extracted.skipped),
            (1, 1, 1)
        );
        assert_eq!(fs::read(copy.join("sub/f")).unwrap(), b"data");
        let mode = fs::metadata(copy.join("sub/f")).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o751);
        assert_eq!(
            fs::read_link(copy.join("sub/up")).unwrap(),
            Path::new("../sub/f")
        );
        assert!(fs::symlink_metadata(copy.join("out")).is_err(), "not made");

        // A symlink, then a file through it: refused, and nothing is left.
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        let mut builder = tar::Builder::new(Vec::new());
        let mut link = tar::Header::new_gnu();
        link.set_entry_type(tar::EntryType::Symlink);
        link.set_size(0);
        builder.append_link(&mut link, "sub", "sub").unwrap();
        let mut header = tar::Header::new_gnu();
        header.set_size(1);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, "sub/planted", &b"x"[..])
            .unwrap();
        let hostile = builder.into_inner().unwrap();
        let refused = dir.path().join("refused");
        assert!(extract(hostile.as_slice(), &refused).is_err());
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["copy", "outside", "source"]);
    }
}
