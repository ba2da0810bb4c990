//! The operator's configuration: runtime allowlist, service-wide defaults and the service policy.
//!
//! The file is TOML. [`Config::parse`] checks everything an operator can get wrong and says
//! precisely what and where, so that a bad config stops the service at start, not a request later.

mod backend;
mod e2b;
mod egress;
mod kernels;
mod origin;
mod policy;
mod ports;
mod recipes;
mod secrets;
mod size;
mod tenants;

use sandboxd_api::{ConfigView, Limits, NetworkMode, Policy, RuntimeInfo};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use backend::{BackendSettings, KubernetesSettings};
pub use e2b::E2bSettings;
pub use egress::EgressSettings;
use origin::check_origin;
use policy::{resolve_policy, PolicyFile};
pub use ports::PortsSettings;
use recipes::catalogue;
pub use recipes::{suggested_runtimes, BuildSettings, ContextFile, Recipe, CATALOGUE};
pub use secrets::{PlaceholderKey, Secret, SecretValue, Secrets};
use size::SizeValue;
pub use size::{format_bytes, parse_bytes};
pub use tenants::{to_hex, token_sha256, Tenant};

/// The configuration used when no file is given: the seed's example.
pub const EMBEDDED_DEFAULT: &str = include_str!("default.toml");

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config is not valid: {0}")]
    Syntax(String),
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
}

pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

/// Where the service token comes from, before the binary resolves it.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenSource {
    Inline(String),
    File(PathBuf),
    /// Generate one at first start and keep it in the state directory.
    Generated,
}

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub token: TokenSource,
    pub default_runtime: String,
    pub max_sessions: u32,
    pub defaults: Limits,
    pub runtimes: BTreeMap<String, RuntimeInfo>,
    pub policy: Policy,
    /// Every recipe a runtime may name: the suggested catalogue and the config's own.
    pub recipes: BTreeMap<String, Recipe>,
    pub build: BuildSettings,
    /// Tokens with their own runtimes and quota; the service token stays the administrator's.
    pub tenants: BTreeMap<String, Tenant>,
    /// Browser origins (`scheme://host[:port]`) allowed to call the service beside its own,
    /// e.g. the MCP Inspector's page; none by default.
    pub extra_allowed_origins: Vec<String>,
    /// Which platform runs the sandboxes (`[backend]`).
    pub backend: BackendSettings,
    /// The E2B-compatible API's settings (`[e2b]`).
    pub e2b: E2bSettings,
    /// How share links are named (`[ports]`).
    pub ports: PortsSettings,
    /// The egress proxy's settings (`[egress]`).
    pub egress: EgressSettings,
    /// The credentials the egress proxy adds on the way out (`[secrets.NAME]`).
    pub secrets: Secrets,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    token: Option<String>,
    token_file: Option<PathBuf>,
    default_runtime: Option<String>,
    max_sessions: Option<u32>,
    #[serde(flatten)]
    defaults: LimitsFile,
    #[serde(default)]
    runtimes: BTreeMap<String, RuntimeFile>,
    #[serde(default)]
    policy: PolicyFile,
    #[serde(default)]
    recipes: BTreeMap<String, recipes::RecipeFile>,
    #[serde(default)]
    build: recipes::BuildFile,
    #[serde(default)]
    tenants: BTreeMap<String, tenants::TenantFile>,
    #[serde(default)]
    extra_allowed_origins: Vec<String>,
    backend: Option<backend::BackendFile>,
    #[serde(default)]
    e2b: e2b::E2bFile,
    #[serde(default)]
    ports: ports::PortsFile,
    #[serde(default)]
    egress: egress::EgressFile,
    #[serde(default)]
    secrets: BTreeMap<String, secrets::SecretFile>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsFile {
    mem_limit: Option<SizeValue>,
    cpus: Option<f64>,
    pids_limit: Option<i64>,
    network_mode: Option<String>,
    tmpfs_size: Option<SizeValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuntimeFile {
    image: Option<String>,
    /// A recipe's name (the suggested catalogue's or the config's own), built on first use.
    runtime: Option<String>,
    #[serde(default)]
    interpreter: Vec<String>,
    #[serde(default)]
    pool_size: u32,
    #[serde(default)]
    kernels: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    egress: Vec<String>,
    /// The `[secrets.NAME]` its sessions get (egress runtimes only).
    #[serde(default)]
    secrets: Vec<String>,
    #[serde(flatten)]
    limits: LimitsFile,
}

/// Service-wide defaults that apply when the file names none.
pub(crate) const BUILTIN_DEFAULTS: Limits = Limits {
    mem_limit_bytes: 1 << 30,
    cpus: 1.0,
    pids_limit: 256,
    network_mode: NetworkMode::None,
    tmpfs_size_bytes: 256 << 20,
};

/// The memory-backed places of a sandbox of `tmpfs_size` each: `/tmp`, the working
/// directory and `/dev/shm`.
const TMPFS_PLACES: u64 = 3;

/// Docker refuses memory limits below 6 MB; a sandbox needs more than that anyway.
const MIN_MEM_LIMIT: u64 = 6 << 20;

impl Config {
    /// The embedded default configuration. It names the host's CA bundle for builds, so it can
    /// fail on a host without one (the message says which file).
    pub fn embedded() -> Result<Config, ConfigError> {
        Config::parse(EMBEDDED_DEFAULT)
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(&text)
    }

    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let file: ConfigFile =
            toml::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string()))?;

        let token = match (file.token, file.token_file) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "token",
                    "give either `token` or `token_file`, not both",
                ))
            }
            (Some(token), None) => {
                check_token(&token, "token")?;
                TokenSource::Inline(token)
            }
            (None, Some(path)) => TokenSource::File(path),
            (None, None) => TokenSource::Generated,
        };

        let defaults = resolve_limits(&file.defaults, &BUILTIN_DEFAULTS, "")?;
        let build = BuildSettings::resolve(&file.build)?;
        let recipes = recipes::resolve_recipes(&file.recipes, &defaults, &build)?;

        if file.runtimes.is_empty() {
            return Err(invalid(
                "runtimes",
                "no runtimes are configured; add at least one, e.g. [runtimes.python] image = \"sandboxd/python:3.11-bookworm\"",
            ));
        }
        let mut runtimes = BTreeMap::new();
        for (name, runtime) in &file.runtimes {
            runtimes.insert(
                name.clone(),
                resolve_runtime(name, runtime, &defaults, &recipes)?,
            );
        }

        let default_runtime = match file.default_runtime {
            Some(name) if runtimes.contains_key(&name) => name,
            Some(name) => {
                return Err(invalid(
                    "default_runtime",
                    format!(
                        "\"{name}\" is not one of the configured runtimes ({})",
                        names(&runtimes)
                    ),
                ))
            }
            None if runtimes.len() == 1 => runtimes.keys().next().cloned().unwrap_or_default(),
            None => {
                return Err(invalid(
                    "default_runtime",
                    format!(
                        "name the runtime used when a request names none, one of: {}",
                        names(&runtimes)
                    ),
                ))
            }
        };

        let max_sessions = file.max_sessions.unwrap_or(20);
        if max_sessions == 0 {
            return Err(invalid("max_sessions", "must be at least 1"));
        }
        let policy = resolve_policy(&file.policy, max_sessions)?;
        check_pools(&runtimes, max_sessions)?;
        let tenants = tenants::resolve(&file.tenants, &runtimes, max_sessions)?;
        let extra_allowed_origins = file
            .extra_allowed_origins
            .iter()
            .map(|origin| check_origin(origin))
            .collect::<Result<_, _>>()?;
        let backend = backend::resolve(file.backend.as_ref(), &runtimes)?;
        egress::check_backend(&backend, &runtimes)?;
        let e2b = E2bSettings::resolve(&file.e2b, &runtimes)?;
        let ports = PortsSettings::resolve(&file.ports)?;
        let egress = EgressSettings::resolve(&file.egress)?;
        let named_secrets = file
            .runtimes
            .iter()
            .map(|(name, runtime)| (name.clone(), runtime.secrets.clone()))
            .collect();
        let secrets = secrets::resolve(&file.secrets, &runtimes, &named_secrets, &|name| {
            std::env::var(name).ok()
        })?;

        Ok(Config {
            token,
            default_runtime,
            max_sessions,
            defaults,
            runtimes,
            policy,
            recipes,
            build,
            tenants,
            extra_allowed_origins,
            backend,
            e2b,
            ports,
            egress,
            secrets,
        })
    }

    /// The memory the host would need if every session ran its largest runtime at its ceiling.
    pub fn worst_case_memory_bytes(&self) -> u64 {
        let largest = self
            .runtimes
            .values()
            .map(|r| r.limits.mem_limit_bytes)
            .max()
            .unwrap_or(0);
        largest.saturating_mul(u64::from(self.max_sessions))
    }

    /// What `--check` warns of: runtimes whose memory-backed places (`/tmp`, the working
    /// directory and `/dev/shm`, `tmpfs_size` each), once full, hold all of `mem_limit`. Their
    /// sandboxes can then run out of memory by writing files, and the kernel kills processes
    /// (the agent last) without freeing any of it.
    pub fn memory_warnings(&self) -> Vec<String> {
        self.runtimes
            .values()
            .filter_map(|runtime| {
                let limits = &runtime.limits;
                let tmpfs = limits.tmpfs_size_bytes.saturating_mul(TMPFS_PLACES);
                (tmpfs >= limits.mem_limit_bytes).then(|| {
                    format!(
                        "runtime \"{}\": its {TMPFS_PLACES} tmpfs places (/tmp, /workspace, /dev/shm) of tmpfs_size {} each can hold {}, at or above its mem_limit of {}: files written there count against memory, and a sandbox that fills them runs out of memory. Lower tmpfs_size to at most {} or raise mem_limit above {}",
                        runtime.name,
                        format_bytes(limits.tmpfs_size_bytes),
                        format_bytes(tmpfs),
                        format_bytes(limits.mem_limit_bytes),
                        format_bytes(((limits.mem_limit_bytes - 1) / TMPFS_PLACES) >> 20 << 20),
                        format_bytes(tmpfs),
                    )
                })
            })
            .collect()
    }

    pub fn runtime(&self, name: &str) -> Option<&RuntimeInfo> {
        self.runtimes.get(name)
    }

    pub fn recipe(&self, name: &str) -> Option<&Recipe> {
        self.recipes.get(name)
    }

    pub fn runtime_names(&self) -> String {
        names(&self.runtimes)
    }

    /// The configuration as the API shows it: everything but the token.
    pub fn view(&self) -> ConfigView {
        ConfigView {
            token: "<redacted>".into(),
            default_runtime: self.default_runtime.clone(),
            max_sessions: self.max_sessions,
            defaults: self.defaults.clone(),
            runtimes: self.runtimes.clone(),
            policy: self.policy.clone(),
            tenants: self
                .tenants
                .values()
                .map(|t| t.info(&self.runtimes))
                .collect(),
            extra_allowed_origins: self.extra_allowed_origins.clone(),
        }
    }

    /// The tenant a token belongs to. Every tenant's hash is compared, in constant time.
    pub fn tenant_for(&self, token: &str) -> Option<&Tenant> {
        let hash = token_sha256(token);
        let mut found = None;
        for tenant in self.tenants.values() {
            if bool::from(subtle::ConstantTimeEq::ct_eq(
                &tenant.token_sha256[..],
                &hash[..],
            )) {
                found = Some(tenant);
            }
        }
        found
    }
}

/// Pools hold started sandboxes: they need an image, and together they must leave room under
/// `max_sessions`.
fn check_pools(
    runtimes: &BTreeMap<String, RuntimeInfo>,
    max_sessions: u32,
) -> Result<(), ConfigError> {
    for runtime in runtimes.values() {
        if runtime.pool_size > 0 && runtime.image.is_none() {
            return Err(invalid(
                format!("runtimes.{}.pool_size", runtime.name),
                "a warm pool needs a runtime with an `image`",
            ));
        }
    }
    let pooled: u64 = runtimes.values().map(|r| u64::from(r.pool_size)).sum();
    if pooled > u64::from(max_sessions) {
        return Err(invalid(
            "pool_size",
            format!("the runtimes' pool sizes add up to {pooled}, more than max_sessions ({max_sessions}); pooled sandboxes count against it"),
        ));
    }
    Ok(())
}

/// A token must be long enough to resist guessing and safe to send in a header.
pub fn check_token(token: &str, field: &str) -> Result<(), ConfigError> {
    if token.len() < 16 {
        return Err(invalid(field, "the token must be at least 16 characters"));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(invalid(
            field,
            "the token may only hold printable ASCII characters without spaces",
        ));
    }
    Ok(())
}

fn names(runtimes: &BTreeMap<String, RuntimeInfo>) -> String {
    runtimes.keys().cloned().collect::<Vec<_>>().join(", ")
}

fn resolve_runtime(
    name: &str,
    file: &RuntimeFile,
    defaults: &Limits,
    recipes: &BTreeMap<String, Recipe>,
) -> Result<RuntimeInfo, ConfigError> {
    let field = format!("runtimes.{name}");
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        return Err(invalid(
            &field,
            "a runtime alias may only hold letters, digits, '-', '_' and '.'",
        ));
    }
    match (&file.image, &file.runtime) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                &field,
                "give either `image` or `runtime` (a recipe to build), not both",
            ))
        }
        (None, None) => {
            return Err(invalid(
                &field,
                "give `image` (an image on the engine) or `runtime` (a recipe to build)",
            ))
        }
        (Some(image), None) if image.trim().is_empty() => {
            return Err(invalid(format!("{field}.image"), "must not be empty"))
        }
        (None, Some(recipe)) if recipe.trim().is_empty() => {
            return Err(invalid(format!("{field}.runtime"), "must not be empty"))
        }
        _ => {}
    }
    if file.interpreter.iter().any(|arg| arg.is_empty()) {
        return Err(invalid(
            format!("{field}.interpreter"),
            "must be a program and its arguments, none of them empty",
        ));
    }
    let recipe = match &file.runtime {
        Some(recipe_name) => Some(recipes.get(recipe_name.trim()).ok_or_else(|| {
            unknown_recipe(&format!("{field}.runtime"), recipe_name.trim(), recipes)
        })?),
        None => None,
    };
    // A runtime's own settings first, then its recipe's, then the service-wide defaults.
    let inherited = recipe.map_or(defaults, |r| &r.limits);
    let interpreter = match recipe {
        Some(recipe) if file.interpreter.is_empty() => recipe.interpreter.clone(),
        _ => file.interpreter.clone(),
    };
    let kernels = match recipe {
        Some(recipe) if file.kernels.is_empty() => recipe.kernels.clone(),
        _ => kernels::resolve_kernels(&file.kernels, &field)?,
    };
    let limits = resolve_limits(&file.limits, inherited, &format!("{field}."))?;
    Ok(RuntimeInfo {
        name: name.to_string(),
        image: file.image.clone(),
        recipe: recipe.map(|r| r.name.clone()),
        recipe_image: recipe.map(|r| r.image.clone()),
        egress: egress::resolve(&field, &file.egress, limits.network_mode)?,
        limits,
        interpreter,
        pool_size: file.pool_size,
        kernels,
    })
}

fn unknown_recipe(field: &str, name: &str, recipes: &BTreeMap<String, Recipe>) -> ConfigError {
    let suggested = catalogue();
    let (catalogued, own): (Vec<&String>, Vec<&String>) =
        recipes.keys().partition(|n| suggested.contains_key(*n));
    let list = |names: Vec<&String>| {
        names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut message = format!(
        "no recipe named \"{name}\"; the suggested catalogue has {} (`sandboxd runtimes suggested` shows them)",
        list(catalogued)
    );
    if !own.is_empty() {
        message.push_str(&format!(", this config defines {}", list(own)));
    }
    message.push_str(&format!(
        "; or define it under [recipes.{name}] with `base` and `steps`"
    ));
    invalid(field, message)
}

pub(crate) fn resolve_limits(
    file: &LimitsFile,
    inherited: &Limits,
    prefix: &str,
) -> Result<Limits, ConfigError> {
    let field = |name: &str| format!("{prefix}{name}");
    let mem_limit_bytes = match &file.mem_limit {
        Some(value) => value.resolve(&field("mem_limit"))?,
        None => inherited.mem_limit_bytes,
    };
    if mem_limit_bytes < MIN_MEM_LIMIT {
        return Err(invalid(
            field("mem_limit"),
            format!(
                "{} is below the minimum of 6m",
                format_bytes(mem_limit_bytes)
            ),
        ));
    }
    let cpus = file.cpus.unwrap_or(inherited.cpus);
    if !(cpus.is_finite() && cpus > 0.0) {
        return Err(invalid(
            field("cpus"),
            format!("must be a number above 0 (e.g. 0.5 or 2.0), got {cpus}"),
        ));
    }
    let pids_limit = match file.pids_limit {
        Some(n) if n < 1 || n > i64::from(u32::MAX) => {
            return Err(invalid(
                field("pids_limit"),
                format!("must be a whole number of processes of at least 1, got {n}"),
            ))
        }
        Some(n) => n as u32,
        None => inherited.pids_limit,
    };
    let network_mode = match file.network_mode.as_deref() {
        None => inherited.network_mode,
        Some("none") => NetworkMode::None,
        Some("bridge") => NetworkMode::Bridge,
        Some("egress") => NetworkMode::Egress,
        Some(other) => {
            return Err(invalid(
                field("network_mode"),
                format!("unknown network mode \"{other}\"; use \"none\", \"bridge\" or \"egress\""),
            ))
        }
    };
    let tmpfs_size_bytes = match &file.tmpfs_size {
        Some(value) => value.resolve(&field("tmpfs_size"))?,
        None => inherited.tmpfs_size_bytes,
    };
    if tmpfs_size_bytes < 1 << 20 {
        return Err(invalid(field("tmpfs_size"), "must be at least 1m"));
    }
    Ok(Limits {
        mem_limit_bytes,
        cpus,
        pids_limit,
        network_mode,
        tmpfs_size_bytes,
    })
}

#[cfg(test)]
mod tests;
