//! What the file operations carry: a directory's entries, a path described ([`FileStat`]),
//! the changes a watch reports ([`FileChange`]) and what an archive held.

use serde::{Deserialize, Serialize};

/// One entry of [`FilesEvent::DirEntries`]; a symlink is described, not followed.
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

/// [`FilesEvent::Stat`]: the entry at a path, a symlink described and not followed.
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

/// The files requests, a part of [`Request`](super::Request).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum FilesRequest {
    /// Lists a directory, describing symlinks rather than what they point to:
    /// [`FilesEvent::DirEntries`] batches with at most `max_entries` entries in all, then
    /// [`FilesEvent::DirEnd`].
    ListDir { path: String, max_entries: u32 },
    /// Streams a regular file: [`FilesEvent::FileOpened`], its bytes in stdout frames, then
    /// [`FilesEvent::FileEnd`]. A file whose size is unknown (e.g. in /proc) is sent up to
    /// `unsized_limit` bytes and refused with
    /// [`ERROR_TOO_LARGE`](crate::error_code::ERROR_TOO_LARGE) beyond. A file larger than
    /// `max_size`, or sparse with more than `max_unallocated` bytes beyond what it has allocated
    /// (`st_blocks` × 512), is refused with [`ERROR_TOO_LARGE`](crate::error_code::ERROR_TOO_LARGE)
    /// before a byte is sent.
    ReadFile {
        path: String,
        unsized_limit: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_size: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_unallocated: Option<u64>,
    },
    /// Replaces a file atomically, creating missing parent directories:
    /// [`Event::WriteReady`](super::Event::WriteReady), then the service sends at most `max_bytes`
    /// in stdin frames and an empty one to commit, answered with [`FilesEvent::FileWritten`].
    /// Nothing appears at the path before the commit, and an error, a
    /// [`Request::Cancel`](super::Request::Cancel) or a broken connection leaves nothing behind.
    /// The file gets `mode`'s permission bits (`0o777` at most; 0644 without one).
    WriteFile {
        path: String,
        max_bytes: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// Removes a file or a symlink (never what it points to), or with `recursive` a directory
    /// and everything in it: [`FilesEvent::Deleted`].
    Delete {
        path: String,
        #[serde(default)]
        recursive: bool,
    },
    /// Describes what is at `path` without following a final symlink: [`FilesEvent::Stat`].
    Stat { path: String },
    /// Creates a directory, and with `parents` its missing ancestors: [`FilesEvent::DirMade`]
    /// (`created` false when a directory was there already).
    MakeDir {
        path: String,
        #[serde(default)]
        parents: bool,
    },
    /// Renames `from` to `to` (rename(2)); an existing `to` is refused with
    /// [`ERROR_EXISTS`](crate::error_code::ERROR_EXISTS) unless `overwrite`: [`FilesEvent::Stat`]
    /// of the destination.
    Move {
        from: String,
        to: String,
        #[serde(default)]
        overwrite: bool,
    },
    /// Watches a directory (and with `recursive` those below it, at most `max_watches` in all):
    /// [`FilesEvent::Watching`], then [`FilesEvent::FileChanges`] batches until the service closes
    /// the connection or sends [`Request::Cancel`](super::Request::Cancel), or the directory goes
    /// away ([`FilesEvent::WatchEnd`]). Changes the kernel could not queue arrive as one
    /// [`ChangeKind::Overflow`].
    Watch {
        path: String,
        #[serde(default)]
        recursive: bool,
        max_watches: u32,
    },
    /// Streams the directory tree at `path` as a tar: [`FilesEvent::ArchiveOpened`] once it was
    /// walked (or [`ERROR_TOO_LARGE`](crate::error_code::ERROR_TOO_LARGE) before a byte is sent
    /// when its files hold more than `max_bytes` or it has more than
    /// [`MAX_ARCHIVE_ENTRIES`](crate::limits::MAX_ARCHIVE_ENTRIES) entries), the tar's bytes in
    /// stdout frames, then [`FilesEvent::ArchiveEnd`]. Symlinks are archived as symlinks, never
    /// followed; other special files are skipped and counted.
    ReadArchive { path: String, max_bytes: u64 },
    /// Extracts a tar under the directory `path` (created with its parents):
    /// [`Event::WriteReady`](super::Event::WriteReady), then the service sends the tar in stdin
    /// frames and an empty one to end it, answered with [`FilesEvent::ArchiveWritten`]. Confined to
    /// `path`: names with `..` or a leading `/`, names through a symlink, hard links and special
    /// files are refused, modes lose setuid/setgid/sticky, file contents are capped at `max_bytes`
    /// in all. The tree appears only once the whole tar was taken; a refusal, a
    /// [`Request::Cancel`](super::Request::Cancel) or a broken connection leaves nothing behind. A
    /// top-level name that already exists under `path` is refused.
    WriteArchive { path: String, max_bytes: u64 },
}

/// What the agent answers to [`FilesRequest`]s, a part of [`Event`](super::Event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FilesEvent {
    DirEntries {
        entries: Vec<DirEntry>,
    },
    /// The listing is complete; `truncated` when the directory held more than `max_entries`.
    DirEnd {
        truncated: bool,
    },
    /// The path is a regular file, open for reading; `size` is exact when known.
    FileOpened {
        size: Option<u64>,
    },
    /// Every byte of the file was sent.
    FileEnd {
        bytes: u64,
    },
    FileWritten {
        bytes: u64,
    },
    Deleted,
    /// The tree was walked: `entries` will be sent, holding `bytes` bytes of file contents.
    ArchiveOpened {
        entries: u64,
        bytes: u64,
    },
    /// Every entry was sent; `skipped` counts the special files left out.
    ArchiveEnd(ArchiveSummary),
    /// The tar was extracted and is in place.
    ArchiveWritten(ArchiveSummary),
    Stat(FileStat),
    DirMade {
        created: bool,
    },
    Watching,
    FileChanges {
        changes: Vec<FileChange>,
    },
    /// The watched directory is gone: no change follows.
    WatchEnd,
}

#[cfg(test)]
mod wire {
    //! This topic's messages pinned to their bytes (see `pins.rs`).

    use super::*;
    use crate::message::pins;

    fn entry(name: &str, kind: EntryKind, target_kind: Option<EntryKind>) -> DirEntry {
        DirEntry {
            name: name.into(),
            kind,
            size: 12,
            mode: 0o4755,
            modified_secs: -1,
            modified_nanos: 500,
            target_kind,
        }
    }

    fn summary() -> ArchiveSummary {
        ArchiveSummary {
            files: 1,
            dirs: 2,
            symlinks: 3,
            bytes: 4,
            skipped: 5,
        }
    }

    /// Every request, each with the bytes it travels as.
    fn requests() -> Vec<(FilesRequest, &'static str)> {
        vec![
            (
                FilesRequest::ListDir {
                    path: "/d".into(),
                    max_entries: 10,
                },
                r#"{"op":"list_dir","path":"/d","max_entries":10}"#,
            ),
            (
                FilesRequest::ReadFile {
                    path: "/f".into(),
                    unsized_limit: 1,
                    max_size: None,
                    max_unallocated: None,
                },
                r#"{"op":"read_file","path":"/f","unsized_limit":1}"#,
            ),
            (
                FilesRequest::ReadFile {
                    path: "/f".into(),
                    unsized_limit: 1,
                    max_size: Some(2),
                    max_unallocated: Some(3),
                },
                r#"{"op":"read_file","path":"/f","unsized_limit":1,"max_size":2,"max_unallocated":3}"#,
            ),
            (
                FilesRequest::WriteFile {
                    path: "/f".into(),
                    max_bytes: 4,
                    mode: None,
                },
                r#"{"op":"write_file","path":"/f","max_bytes":4}"#,
            ),
            (
                FilesRequest::WriteFile {
                    path: "/f".into(),
                    max_bytes: 4,
                    mode: Some(0o755),
                },
                r#"{"op":"write_file","path":"/f","max_bytes":4,"mode":493}"#,
            ),
            (
                FilesRequest::Delete {
                    path: "/f".into(),
                    recursive: true,
                },
                r#"{"op":"delete","path":"/f","recursive":true}"#,
            ),
            (
                FilesRequest::Stat { path: "/s".into() },
                r#"{"op":"stat","path":"/s"}"#,
            ),
            (
                FilesRequest::MakeDir {
                    path: "/m".into(),
                    parents: true,
                },
                r#"{"op":"make_dir","path":"/m","parents":true}"#,
            ),
            (
                FilesRequest::Move {
                    from: "/a".into(),
                    to: "/b".into(),
                    overwrite: true,
                },
                r#"{"op":"move","from":"/a","to":"/b","overwrite":true}"#,
            ),
            (
                FilesRequest::Watch {
                    path: "/w".into(),
                    recursive: true,
                    max_watches: 7,
                },
                r#"{"op":"watch","path":"/w","recursive":true,"max_watches":7}"#,
            ),
            (
                FilesRequest::ReadArchive {
                    path: "/t".into(),
                    max_bytes: 100,
                },
                r#"{"op":"read_archive","path":"/t","max_bytes":100}"#,
            ),
            (
                FilesRequest::WriteArchive {
                    path: "/t".into(),
                    max_bytes: 100,
                },
                r#"{"op":"write_archive","path":"/t","max_bytes":100}"#,
            ),
        ]
    }

    /// Every event, each with the bytes it travels as.
    fn events() -> Vec<(FilesEvent, &'static str)> {
        vec![
            (
                FilesEvent::DirEntries {
                    entries: vec![
                        entry("f", EntryKind::File, None),
                        entry("d", EntryKind::Dir, None),
                        entry("l", EntryKind::Symlink, Some(EntryKind::Other)),
                    ],
                },
                r#"{"type":"dir_entries","entries":[{"name":"f","kind":"file","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500},{"name":"d","kind":"dir","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500},{"name":"l","kind":"symlink","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500,"target_kind":"other"}]}"#,
            ),
            (
                FilesEvent::DirEnd { truncated: true },
                r#"{"type":"dir_end","truncated":true}"#,
            ),
            (
                FilesEvent::FileOpened { size: Some(5) },
                r#"{"type":"file_opened","size":5}"#,
            ),
            (
                FilesEvent::FileOpened { size: None },
                r#"{"type":"file_opened","size":null}"#,
            ),
            (
                FilesEvent::FileEnd { bytes: 5 },
                r#"{"type":"file_end","bytes":5}"#,
            ),
            (
                FilesEvent::FileWritten { bytes: 6 },
                r#"{"type":"file_written","bytes":6}"#,
            ),
            (FilesEvent::Deleted, r#"{"type":"deleted"}"#),
            (
                FilesEvent::ArchiveOpened {
                    entries: 3,
                    bytes: 4,
                },
                r#"{"type":"archive_opened","entries":3,"bytes":4}"#,
            ),
            (
                FilesEvent::ArchiveEnd(summary()),
                r#"{"type":"archive_end","files":1,"dirs":2,"symlinks":3,"bytes":4,"skipped":5}"#,
            ),
            (
                FilesEvent::ArchiveWritten(summary()),
                r#"{"type":"archive_written","files":1,"dirs":2,"symlinks":3,"bytes":4,"skipped":5}"#,
            ),
            (
                FilesEvent::Stat(FileStat {
                    entry: entry("l", EntryKind::Symlink, Some(EntryKind::Dir)),
                    symlink_target: Some("../x".into()),
                    resolved_target: Some("/x".into()),
                }),
                r#"{"type":"stat","name":"l","kind":"symlink","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500,"target_kind":"dir","symlink_target":"../x","resolved_target":"/x"}"#,
            ),
            (
                FilesEvent::Stat(FileStat {
                    entry: entry("f", EntryKind::File, None),
                    symlink_target: None,
                    resolved_target: None,
                }),
                r#"{"type":"stat","name":"f","kind":"file","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500}"#,
            ),
            (
                FilesEvent::DirMade { created: true },
                r#"{"type":"dir_made","created":true}"#,
            ),
            (FilesEvent::Watching, r#"{"type":"watching"}"#),
            (
                FilesEvent::FileChanges {
                    changes: [
                        ChangeKind::Create,
                        ChangeKind::Write,
                        ChangeKind::Remove,
                        ChangeKind::Rename,
                        ChangeKind::Chmod,
                        ChangeKind::Overflow,
                    ]
                    .into_iter()
                    .map(|kind| FileChange {
                        kind,
                        path: "/w/a".into(),
                    })
                    .collect(),
                },
                r#"{"type":"file_changes","changes":[{"type":"create","path":"/w/a"},{"type":"write","path":"/w/a"},{"type":"remove","path":"/w/a"},{"type":"rename","path":"/w/a"},{"type":"chmod","path":"/w/a"},{"type":"overflow","path":"/w/a"}]}"#,
            ),
            (FilesEvent::WatchEnd, r#"{"type":"watch_end"}"#),
        ]
    }

    /// Each request encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_request_is_the_same_bytes() {
        let tags = pins::requests(requests(), |message| match message {
            FilesRequest::ListDir { .. } => "list_dir",
            FilesRequest::ReadFile { .. } => "read_file",
            FilesRequest::WriteFile { .. } => "write_file",
            FilesRequest::Delete { .. } => "delete",
            FilesRequest::Stat { .. } => "stat",
            FilesRequest::MakeDir { .. } => "make_dir",
            FilesRequest::Move { .. } => "move",
            FilesRequest::Watch { .. } => "watch",
            FilesRequest::ReadArchive { .. } => "read_archive",
            FilesRequest::WriteArchive { .. } => "write_archive",
        });
        assert_eq!(tags.len(), 10, "{tags:?}");
    }

    /// Each event encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_event_is_the_same_bytes() {
        let tags = pins::events(events(), |message| match message {
            FilesEvent::DirEntries { .. } => "dir_entries",
            FilesEvent::DirEnd { .. } => "dir_end",
            FilesEvent::FileOpened { .. } => "file_opened",
            FilesEvent::FileEnd { .. } => "file_end",
            FilesEvent::FileWritten { .. } => "file_written",
            FilesEvent::Deleted => "deleted",
            FilesEvent::ArchiveOpened { .. } => "archive_opened",
            FilesEvent::ArchiveEnd(_) => "archive_end",
            FilesEvent::ArchiveWritten(_) => "archive_written",
            FilesEvent::Stat(_) => "stat",
            FilesEvent::DirMade { .. } => "dir_made",
            FilesEvent::Watching => "watching",
            FilesEvent::FileChanges { .. } => "file_changes",
            FilesEvent::WatchEnd => "watch_end",
        });
        assert_eq!(tags.len(), 14, "{tags:?}");
    }
}
