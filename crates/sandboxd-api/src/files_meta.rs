//! The file metadata operations' types: describe, make a directory, move, watch.

use crate::files::FileKind;
use serde::{Deserialize, Serialize};

/// `GET /v1/sessions/{id}/files/stat?path=P`, and what a move answers: the entry at a path,
/// a symlink described and not followed (as a listing's entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileInfo {
    /// The path, absolute (a relative one joined to the working directory).
    pub path: String,
    /// Its last component.
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FileKind,
    pub size: u64,
    /// The permission bits in octal, e.g. `"0644"`.
    pub mode: String,
    /// RFC 3339; `None` for a time that cannot be shown.
    pub modified: Option<String>,
    /// What a symlink points to, as stored in it (not resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
    /// For a symlink, the type of what it leads to (followed to the end); absent when it
    /// leads nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<FileKind>,
    /// For a symlink, the absolute path it leads to, every symlink on the way resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_path: Option<String>,
}

/// `POST /v1/sessions/{id}/files/mkdir`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MakeDir {
    pub path: String,
    /// Create missing parent directories too (the default).
    #[serde(default = "yes")]
    pub parents: bool,
}

fn yes() -> bool {
    true
}

/// The answer to a mkdir: `created` is false when a directory was there already.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct DirMade {
    pub path: String,
    pub created: bool,
}

/// `POST /v1/sessions/{id}/files/move`: a rename inside the sandbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MovePath {
    pub from: String,
    pub to: String,
    /// Replace what is at `to`; without it an existing destination is `409 exists`.
    #[serde(default)]
    pub overwrite: bool,
}

/// One change a watch reports (`GET /v1/sessions/{id}/files/watch`, event `change`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileChange {
    #[serde(rename = "type")]
    pub kind: FileChangeKind,
    /// The watched path joined with the name below it; for `overflow`, the watched path (or
    /// the directory that could not be watched).
    pub path: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FileChangeKind {
    Create,
    Write,
    Remove,
    /// The old path of a rename; the new one is reported as `create`.
    Rename,
    Chmod,
    /// Changes were lost (too many too fast, or the watch limit reached): list again.
    Overflow,
}
