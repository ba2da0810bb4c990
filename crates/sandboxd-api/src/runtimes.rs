//! The runtimes the operator allows, as the service shows them: what each gives a sandbox, and
//! whether its image is ready.

use crate::egress::EgressRule;
use serde::{Deserialize, Serialize};

/// Whether a sandbox gets a network. Only the operator chooses, per runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    None,
    Bridge,
    /// Only the names of the runtime's `egress` list, through the service's proxy.
    Egress,
}

impl NetworkMode {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::None => "none",
            NetworkMode::Bridge => "bridge",
            NetworkMode::Egress => "egress",
        }
    }
}

/// The boundary between a sandbox and the host's kernel. Only the operator chooses, per
/// runtime (or recipe, or service-wide).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// A container (runc): the sandbox's processes run on the host's kernel.
    #[default]
    Runc,
    /// gVisor (runsc): the sandbox gets a kernel of its own, in user space; only that kernel
    /// talks to the host's.
    Gvisor,
}

impl Isolation {
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Runc => "runc",
            Isolation::Gvisor => "gvisor",
        }
    }
}

/// The ceilings of one runtime, after service-wide defaults were applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Limits {
    pub mem_limit_bytes: u64,
    pub cpus: f64,
    pub pids_limit: u32,
    pub network_mode: NetworkMode,
    /// Size of each writable tmpfs (`/tmp` and the working directory); counts against memory.
    pub tmpfs_size_bytes: u64,
    /// The isolation tier: `runc` or `gvisor`.
    #[serde(default)]
    pub isolation: Isolation,
}

/// One entry of the runtime allowlist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RuntimeInfo {
    pub name: String,
    /// What the runtime is for, in the operator's words (or its recipe's): one line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The image the sandbox runs, when the operator named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The recipe the image is built from, when the operator named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipe: Option<String>,
    /// For a recipe: the image its build is tagged with, `sandboxd/recipe-NAME:HASH12` (the
    /// hash of the recipe's content, so a changed recipe is built again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe_image: Option<String>,
    #[serde(flatten)]
    pub limits: Limits,
    /// The program that runs a piece of source code in this runtime (e.g. `["python3"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interpreter: Vec<String>,
    /// Sandboxes kept started and ready, so opening a session takes no container start.
    #[serde(default)]
    pub pool_size: u32,
    /// The Jupyter kernels of this runtime, for code contexts: language -> the command that
    /// starts one (`{connection_file}` stands for its connection file).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub kernels: std::collections::BTreeMap<String, Vec<String>>,
    /// With `network_mode = "egress"`: the names (and ports) its sandboxes may reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub egress: Vec<EgressRule>,
}

/// One entry of `GET /v1/runtimes`: the runtime, and where its image stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RuntimeEntry {
    #[serde(flatten)]
    pub runtime: RuntimeInfo,
    #[serde(flatten)]
    pub status: ImageStatus,
}

/// Where a runtime's image stands: `{"state": "ready"}`, `{"state": "not_built"}`,
/// `{"state": "building", "progress": {...}}` or `{"state": "failed", "reason": "..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ImageStatus {
    /// The image is on the platform: a session starts at once.
    Ready,
    /// Not on the platform yet: the first session (or `POST /v1/runtimes/{name}/build`)
    /// pulls it, or builds it from its recipe.
    NotBuilt,
    /// Being pulled or built now; sessions asking for it wait for this one build.
    Building { progress: BuildProgress },
    /// The last attempt failed; the next session (or build request) tries again.
    Failed { reason: String },
}

/// How far a pull or build is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct BuildProgress {
    /// The build step under way (from 1) and how many there are, when building.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// The latest line of output.
    pub line: String,
}

/// One line of `POST /v1/runtimes/{name}/build` (newline-delimited JSON): the runtime's image
/// as it changes. The last line has the state `ready` or `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuntimeBuildEvent {
    pub runtime: String,
    pub image: String,
    #[serde(flatten)]
    pub status: ImageStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RuntimeList {
    pub default_runtime: String,
    pub runtimes: Vec<RuntimeEntry>,
}
