//! Files in a session: listings, and what a write, a delete or an archive did.

use serde::{Deserialize, Serialize};

/// `GET /v1/sessions/{id}/files?path=DIR`: a directory's entries, sorted by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileList {
    /// The path as requested.
    pub path: String,
    pub entries: Vec<FileEntry>,
    /// The directory holds more entries than a listing returns.
    pub truncated: bool,
}

/// One entry of a directory; a symlink is described, not followed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileEntry {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FileKind,
    pub size: u64,
    /// The permission bits in octal, e.g. `"0644"`.
    pub mode: String,
    /// RFC 3339; `None` for a time that cannot be shown.
    pub modified: Option<String>,
    /// For a symlink, the type of what it leads to (followed to the end); absent when it
    /// leads nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<FileKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    /// A device, FIFO or socket.
    Other,
}

/// `PUT /v1/sessions/{id}/files/content?path=FILE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileWritten {
    pub path: String,
    pub bytes: u64,
}

/// `DELETE /v1/sessions/{id}/files?path=PATH`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileDeleted {
    pub path: String,
}

/// `PUT /v1/sessions/{id}/archive?path=DIR`: what the tar held, now under `path`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ArchiveWritten {
    pub path: String,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file contents.
    pub bytes: u64,
}
