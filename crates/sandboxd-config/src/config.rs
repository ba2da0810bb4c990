//! The configuration as a whole: the file parsed, every part resolved and checked, and what the
//! service asks of it.

use crate::backend;
use crate::backend::BackendSettings;
use crate::e2b;
use crate::e2b::E2bSettings;
use crate::egress;
use crate::egress::EgressSettings;
use crate::error::{invalid, ConfigError};
use crate::limits::{resolve_limits, LimitsFile, BUILTIN_DEFAULTS, TMPFS_PLACES};
use crate::origin::check_origin;
use crate::policy::{resolve_policy, PolicyFile};
use crate::ports;
use crate::ports::PortsSettings;
use crate::recipes;
use crate::recipes::{BuildSettings, Recipe};
use crate::runtimes::{resolve_runtime, RuntimeFile};
use crate::secrets;
use crate::secrets::Secrets;
use crate::size::format_bytes;
use crate::suggest;
use crate::tenants;
use crate::tenants::{token_sha256, Tenant};
use crate::webhooks;
use crate::webhooks::Webhook;
use sandboxd_api::{ConfigView, Isolation, Limits, Policy, RuntimeInfo};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The configuration used when no file is given: the seed's example.
pub const EMBEDDED_DEFAULT: &str = include_str!("default.toml");

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
    /// URLs told of each session's lifecycle (`[webhooks.NAME]`).
    pub webhooks: Vec<Webhook>,
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
    #[serde(default)]
    webhooks: BTreeMap<String, webhooks::WebhookFile>,
}

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
            toml::from_str(text).map_err(|e| ConfigError::Syntax(suggest::explain(&e, text)))?;

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
        let lookup_env = |name: &str| std::env::var(name).ok();
        let secrets = secrets::resolve(&file.secrets, &runtimes, &named_secrets, &lookup_env)?;
        let tenant_names: Vec<&str> = tenants.keys().map(String::as_str).collect();
        let webhooks = webhooks::resolve(&file.webhooks, &tenant_names, &lookup_env)?;

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
            webhooks,
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
    /// (the agent last) without freeing any of it. Not gVisor runtimes: their host limit
    /// leaves room for full tmpfs places beside `mem_limit` (the Docker backend's isolation).
    pub fn memory_warnings(&self) -> Vec<String> {
        self.runtimes
            .values()
            .filter(|runtime| runtime.limits.isolation != Isolation::Gvisor)
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

impl Config {
    /// Makes recipe builds trust `pem` too (the egress CA's certificate, known once the
    /// service has its state), as `[build] extra_ca_certificates` do: it joins the extra CA
    /// file, and every recipe's Dockerfile, hash and so image tag follow, so a recipe image
    /// made without it is built again.
    pub fn trust_in_builds(&mut self, pem: &[u8]) {
        self.build.trust(pem);
        for recipe in self.recipes.values_mut() {
            recipe.follow(&self.build);
        }
        for runtime in self.runtimes.values_mut() {
            if let Some(recipe) = runtime.recipe.as_ref().and_then(|r| self.recipes.get(r)) {
                runtime.recipe_image = Some(recipe.image.clone());
            }
        }
    }
}

/// Pools hold started sandboxes: they need an image (named, or a recipe's once built), and
/// together they must leave room under `max_sessions`.
fn check_pools(
    runtimes: &BTreeMap<String, RuntimeInfo>,
    max_sessions: u32,
) -> Result<(), ConfigError> {
    for runtime in runtimes.values() {
        if runtime.pool_size > 0 && runtime.image.is_none() && runtime.recipe.is_none() {
            return Err(invalid(
                format!("runtimes.{}.pool_size", runtime.name),
                "a warm pool needs a runtime with an `image` or a recipe (`runtime`)",
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
