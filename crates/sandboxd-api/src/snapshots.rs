//! Snapshots of sessions and forks, as the API shows them.

use crate::sessions::SessionInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What to call a new snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SnapshotRequest {
    /// 1 to 128 characters without control characters; need not be unique.
    pub name: String,
}

/// A saved state of a session: the files of its writable places with their modes and
/// symlinks, its runtime, and the labels and environment it was opened with (the environment
/// is not shown: it may hold secrets). Processes are not kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SnapshotInfo {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    pub runtime: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The session it was taken from.
    pub session_id: String,
    /// RFC 3339.
    pub created_at: String,
    /// The size of what it keeps, as counted against the quota.
    pub bytes: u64,
    /// The directories it holds, e.g. `/workspace` and `/tmp`.
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SnapshotList {
    pub snapshots: Vec<SnapshotInfo>,
}

/// How many sessions to fork from one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ForkRequest {
    /// 1 to 16.
    pub count: u32,
    /// Whether the forks carry the session's running processes and memory, which gVisor
    /// runtimes without a network can: `true` requires it, `false` copies the files only;
    /// left out, the processes where the runtime can, the files otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<bool>,
}

/// The sessions a fork opened, each independent of the others and of the one forked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ForkResult {
    pub sessions: Vec<SessionInfo>,
    /// Whether they carry the session's running processes and memory (else its files only).
    #[serde(default)]
    pub memory: bool,
}
