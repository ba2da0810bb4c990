//! Directory trees for `sandboxd cp`: a local tree packed as a tar (symlinks as symlinks,
//! never followed) to upload, and a downloaded tar extracted here. What comes out of a sandbox
//! is hostile: it is extracted by the agent's own extractor ([`tar_extract`]) into a fresh
//! hidden directory beside the destination and renamed into place once complete; no name
//! leaves it, no path passes through a symlink, and a symlink that would point outside it is
//! not made.

use anyhow::{bail, Context, Result};
use sandboxd_agent_proto::tar_extract::{self, remove_extracted, Symlinks, WORK_DIR_MODE};
use sandboxd_agent_proto::tar_read::TarReader;
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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
    // What a download holds is not capped here: the service bounds the stream.
    let summary = tar_extract::extract(
        &mut TarReader::new(tar),
        &work.0,
        u64::MAX,
        Symlinks::InsideOnly,
        |link, target| {
            eprintln!(
                "sandboxd: skipped the symlink {} -> {}: it points outside the copy",
                link.display(),
                target.display()
            )
        },
    )?;
    fs::rename(&work.0, target).with_context(|| format!("cannot create {}", target.display()))?;
    Ok(TreeCopied {
        path: target.display().to_string(),
        files: summary.files,
        dirs: summary.dirs,
        symlinks: summary.symlinks,
        bytes: summary.bytes,
        skipped: summary.skipped,
    })
}

/// The hidden directory a download is extracted into; removed unless renamed into place.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        remove_extracted(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::Permissions;
    use std::os::unix::fs::PermissionsExt;

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
