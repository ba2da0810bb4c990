//! Sessions: the request that opens one, and what the service tells of it.

use crate::egress::EgressRule;
use crate::volumes::VolumeMountRequest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `POST /v1/sessions`. A request may name a runtime alias and nothing else about the container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// A snapshot's id: the session starts with its files, runtime and labels (the
    /// request's own labels are added over them); processes are not in a snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// For an `egress` runtime: a narrower allow-list than the runtime's (never a wider one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<String>>))]
    pub egress: Option<Vec<EgressRule>>,
    /// Volumes to mount, each at its own path (at most 8); the session never comes from a
    /// warm pool then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<VolumeMountRequest>,
}

impl CreateSession {
    /// The fields a create request may carry; anything else is refused.
    pub const FIELDS: &'static [&'static str] = &[
        "runtime", "tenant", "labels", "snapshot", "egress", "volumes",
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SessionState {
    Running,
    Ended,
    /// Frozen: no CPU, memory, processes and files kept; any operation resumes it.
    Paused,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SessionInfo {
    pub id: String,
    pub runtime: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub state: SessionState,
    /// RFC 3339.
    pub created_at: String,
    pub last_activity_at: String,
    pub idle_secs: u64,
    pub memory_bytes: u64,
    /// What `memory_bytes` counts against on the host, when the platform says: the runtime's
    /// `mem_limit`, and on gVisor also the sandbox's kernel and its memory-backed places
    /// (`/tmp`, `/workspace`, `/dev/shm`), which live in that kernel's memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    pub process_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Why the session ended, in words (e.g. "closed by the client").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    /// Set when the session has an idle expiry of its own (an E2B sandbox's timeout), shorter
    /// than the policy's `idle_timeout_secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
    /// When it was paused, while it is (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<String>,
    /// Where a paused session's memory is, while it is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_memory: Option<PausedMemory>,
}

/// Where a paused session's memory and processes are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum PausedMemory {
    /// Frozen in place (runc runtimes): the sandbox holds its RAM while paused.
    Ram,
    /// Written to the service's state directory and the RAM released (gVisor runtimes on
    /// Docker): resuming restores the processes where they were.
    Disk,
}

impl PausedMemory {
    /// How a paused state reads with it: "paused (on disk)" or "paused (in memory)".
    pub fn describe(self) -> &'static str {
        match self {
            PausedMemory::Ram => "paused (in memory)",
            PausedMemory::Disk => "paused (on disk)",
        }
    }
}

/// `GET /v1/events`, event `session`: a session opened or ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionChange {
    pub id: String,
    pub state: SessionState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Why it ended, in words, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SessionList {
    pub sessions: Vec<SessionInfo>,
}
