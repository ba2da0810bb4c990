//! The service's view of itself: its configuration in force, its tenants and its counters.

use crate::policy::Policy;
use crate::runtimes::{Limits, RuntimeInfo};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A tenant: an agent or team with its own token, runtimes and session quota.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TenantInfo {
    pub name: String,
    /// The runtimes it may open.
    pub runtimes: Vec<String>,
    pub max_sessions: u32,
}

/// The configuration in force, as `GET /v1/config` shows it (the token is never included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConfigView {
    /// Always `"<redacted>"`: the token is a root credential.
    pub token: String,
    pub default_runtime: String,
    pub max_sessions: u32,
    /// Service-wide defaults that a runtime naming none of its own inherits.
    pub defaults: Limits,
    pub runtimes: BTreeMap<String, RuntimeInfo>,
    pub policy: Policy,
    /// Tenants with their own tokens (shown without them).
    #[serde(default)]
    pub tenants: Vec<TenantInfo>,
    /// Browser origins allowed beyond the service's own (e.g. the MCP Inspector's).
    #[serde(default)]
    pub extra_allowed_origins: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Stats {
    pub sessions: u32,
    /// Ready sandboxes waiting in warm pools; they count against `max_sessions` too.
    pub pooled: u32,
    pub max_sessions: u32,
    pub memory_bytes: u64,
    pub processes: u64,
    pub runtimes_allowed: u32,
}
