//! What the file metadata operations carry: a path described ([`FileStat`]) and the changes a
//! watch reports ([`FileChange`]).

use crate::DirEntry;
use serde::{Deserialize, Serialize};

/// [`crate::Event::Stat`]: the entry at a path, a symlink described and not followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStat {
    #[serde(flatten)]
    pub entry: DirEntry,
    /// What a symlink points to, as stored in it (not resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
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
