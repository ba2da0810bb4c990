//! What the file operations carry: a directory's entries, a path described ([`FileStat`]),
//! the changes a watch reports ([`FileChange`]) and what an archive held.

use serde::{Deserialize, Serialize};

/// One entry of [`Event::DirEntries`](super::Event::DirEntries); a symlink is described, not followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirEntry {
    /// Bytes of the name that are not UTF-8 are replaced with U+FFFD.
    pub name: String,
    pub kind: EntryKind,
    pub size: u64,
    /// The permission bits, with setuid, setgid and sticky.
    pub mode: u32,
    /// The last modification, since the Unix epoch.
    pub modified_secs: i64,
    pub modified_nanos: u32,
    /// For a symlink, what it leads to, followed to the end; `None` when it leads nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kind: Option<EntryKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// A device, FIFO or socket.
    Other,
}

/// [`Event::Stat`](super::Event::Stat): the entry at a path, a symlink described and not followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStat {
    #[serde(flatten)]
    pub entry: DirEntry,
    /// What a symlink points to, as stored in it (not resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
    /// Where a symlink leads, absolute with every symlink on the way resolved; `None` when
    /// it leads nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_target: Option<String>,
}

/// One change a watch saw, at `path`: the watched path joined with the name below it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    #[serde(rename = "type")]
    pub kind: ChangeKind,
    pub path: String,
}

/// The kinds of change, as inotify-based watchers (fsnotify) name them: a rename is reported
/// as `rename` of the old path and `create` of the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Create,
    Write,
    Remove,
    Rename,
    Chmod,
    /// Changes were lost: the kernel's queue overflowed, or a directory could not be watched
    /// because the watch limit was reached (`path` names it).
    Overflow,
}

/// What an archive held, by kind of entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveSummary {
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file contents.
    pub bytes: u64,
    /// Special files (devices, FIFOs, sockets) left out of a download.
    #[serde(default)]
    pub skipped: u64,
}
