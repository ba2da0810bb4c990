//! Volumes: storage owned by a tenant that outlives sessions and is shared between them.

use serde::{Deserialize, Serialize};

/// `POST /v1/volumes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct VolumeRequest {
    /// 1 to 64 characters of `a-z`, `A-Z`, `0-9`, `-`, `_` and `.` (not starting with `.`),
    /// unique among the tenant's volumes.
    pub name: String,
    /// Its hard cap: bytes, or a text such as `"512m"` or `"2GiB"` (16 MiB at least).
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "1g"))]
    #[cfg_attr(feature = "schemars", schemars(with = "String"))]
    pub size: VolumeSize,
}

/// A size as JSON gives it: a number of bytes or a text with a unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum VolumeSize {
    Bytes(u64),
    Text(String),
}

impl Default for VolumeSize {
    fn default() -> Self {
        VolumeSize::Bytes(0)
    }
}

/// A volume, as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct VolumeInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Its hard cap in bytes, as counted against the quota; a little of it goes to the
    /// filesystem's own bookkeeping.
    pub size_bytes: u64,
    /// Bytes its files take now, where the backend can tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    /// RFC 3339.
    pub created_at: String,
    /// The open sessions that mount it.
    #[serde(default)]
    pub sessions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct VolumeList {
    pub volumes: Vec<VolumeInfo>,
}

/// A volume to mount in a session being opened (`POST /v1/sessions` `volumes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct VolumeMountRequest {
    /// The volume's name (one of the caller's).
    pub name: String,
    /// Where in the sandbox: an absolute path below `/workspace`, `/home/user` or `/tmp`.
    pub path: String,
    /// Mounted read-only: the sandbox cannot change it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}
