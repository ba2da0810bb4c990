//! What the file metadata operations carry: a path described ([`FileStat`]) and the changes a
//! watch reports ([`FileChange`]); and a listening port ([`ListeningPort`]).

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

/// A TCP port listening in the sandbox, from its /proc/net/tcp{,6}.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListeningPort {
    pub port: u16,
    /// The address it is bound to, e.g. `127.0.0.1`, `0.0.0.0`, `::`.
    pub address: String,
    /// The process holding the socket, when the agent could find it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// That process's name (its `comm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}
