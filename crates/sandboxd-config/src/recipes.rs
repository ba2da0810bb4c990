//! Recipes: how a runtime's image is made when the platform does not have it. A recipe is a
//! base image, Dockerfile steps on top of it, and the ceilings a runtime built from it gets
//! unless it names its own.
//!
//! The suggested catalogue ([`CATALOGUE`]) ships in the binary; a config adds recipes, or
//! replaces catalogue ones, under `[recipes.NAME]`. Each recipe is resolved at load into the
//! Dockerfile a platform builds and the hash of everything that goes into the build, so a
//! changed recipe (or changed extra CA certificates) is built again and an unchanged one never.

use crate::description::check_description;
use crate::error::invalid;
use crate::error::ConfigError;
use crate::limits::resolve_limits;
use crate::limits::LimitsFile;
use sandboxd_api::Limits;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The suggested catalogue, as TOML an operator can paste under a config's `[recipes]`.
pub const CATALOGUE: &str = include_str!("catalogue.toml");

/// The name of the extra CA certificates in a build's context (beside the Dockerfile).
const EXTRA_CA_FILE: &str = "sandboxd-extra-ca.crt";

/// Where the extra CA certificates land in an image; the system bundle gains them too.
const EXTRA_CA_IN_IMAGE: &str = "/usr/local/share/ca-certificates/sandboxd-extra-ca.crt";
const SYSTEM_CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The image repository of a recipe's builds: ours, never an official image's name.
const IMAGE_PREFIX: &str = "sandboxd/recipe-";

/// How long a recipe build may take unless the config says otherwise.
const DEFAULT_BUILD_TIMEOUT_SECS: u64 = 1800;

/// Dockerfile instructions a step may use: all but FROM, which `base` gives.
const STEP_INSTRUCTIONS: &[&str] = &[
    "ADD",
    "ARG",
    "CMD",
    "COPY",
    "ENTRYPOINT",
    "ENV",
    "EXPOSE",
    "HEALTHCHECK",
    "LABEL",
    "ONBUILD",
    "RUN",
    "SHELL",
    "STOPSIGNAL",
    "USER",
    "VOLUME",
    "WORKDIR",
];

/// `[recipes.NAME]`, in the catalogue or a config.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecipeFile {
    #[serde(default)]
    description: String,
    base: String,
    #[serde(default)]
    steps: Vec<String>,
    #[serde(default)]
    interpreter: Vec<String>,
    #[serde(default)]
    kernels: BTreeMap<String, Vec<String>>,
    #[serde(flatten)]
    limits: LimitsFile,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    recipes: BTreeMap<String, RecipeFile>,
}

/// `[build]`: how recipe images are built.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct BuildFile {
    /// PEM files whose certificates builds trust (and the images they make), for HTTPS
    /// through a TLS-intercepting proxy.
    #[serde(default)]
    extra_ca_certificates: Vec<PathBuf>,
    timeout_secs: Option<u64>,
}

/// How recipe images are built, for every recipe.
#[derive(Debug, Clone)]
pub struct BuildSettings {
    /// The files beside the Dockerfile: the extra CA certificates, when there are any.
    pub context: Vec<ContextFile>,
    /// The longest a build may take.
    pub timeout: Duration,
}

/// A file in a build's context, which the Dockerfile may COPY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub name: String,
    pub contents: Arc<[u8]>,
}

/// A resolved recipe, ready for a platform to build.
#[derive(Debug, Clone)]
pub struct Recipe {
    pub name: String,
    pub description: String,
    pub base: String,
    pub steps: Vec<String>,
    /// What a runtime built from it gets unless the runtime names its own (the service-wide
    /// defaults fill what the recipe leaves out).
    pub limits: Limits,
    pub interpreter: Vec<String>,
    /// The Jupyter kernels it holds: language -> the command that starts one.
    pub kernels: BTreeMap<String, Vec<String>>,
    /// FROM the base, then the extra CA certificates (when configured), then the steps.
    pub dockerfile: String,
    /// sha256 (hex) of the Dockerfile and the context files: all that goes into the build.
    pub hash: String,
    /// `sandboxd/recipe-NAME:HASH12`, what the build is tagged with.
    pub image: String,
}

impl BuildSettings {
    pub(crate) fn resolve(file: &BuildFile) -> Result<BuildSettings, ConfigError> {
        let timeout_secs = file.timeout_secs.unwrap_or(DEFAULT_BUILD_TIMEOUT_SECS);
        if timeout_secs == 0 {
            return Err(invalid("build.timeout_secs", "must be above 0"));
        }
        let pem = read_ca_files(&file.extra_ca_certificates, "build.extra_ca_certificates")?;
        let context = if pem.is_empty() {
            Vec::new()
        } else {
            vec![ContextFile {
                name: EXTRA_CA_FILE.to_string(),
                contents: pem.into(),
            }]
        };
        Ok(BuildSettings {
            context,
            timeout: Duration::from_secs(timeout_secs),
        })
    }

    fn has_extra_ca(&self) -> bool {
        self.context.iter().any(|f| f.name == EXTRA_CA_FILE)
    }
}

/// The PEM certificates of `paths`, one after the other; `field` names the list in errors.
pub(crate) fn read_ca_files(paths: &[PathBuf], field: &str) -> Result<Vec<u8>, ConfigError> {
    let mut pem = Vec::new();
    for (index, path) in paths.iter().enumerate() {
        let field = format!("{field}[{index}]");
        let contents = std::fs::read(path)
            .map_err(|e| invalid(&field, format!("cannot read {}: {e}", path.display())))?;
        let marker = b"-----BEGIN CERTIFICATE-----";
        if !contents.windows(marker.len()).any(|w| w == marker) {
            return Err(invalid(
                &field,
                format!(
                    "{} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                    path.display()
                ),
            ));
        }
        pem.extend_from_slice(&contents);
        if !pem.ends_with(b"\n") {
            pem.push(b'\n');
        }
    }
    Ok(pem)
}

/// The catalogue's recipes and the config's own, which replace catalogue ones of the same name.
pub(crate) fn resolve_recipes(
    own: &BTreeMap<String, RecipeFile>,
    defaults: &Limits,
    build: &BuildSettings,
) -> Result<BTreeMap<String, Recipe>, ConfigError> {
    let catalogue: CatalogueFile =
        toml::from_str(CATALOGUE).expect("the embedded catalogue is valid TOML");
    let catalogue_only = catalogue
        .recipes
        .iter()
        .filter(|(name, _)| !own.contains_key(*name));
    let mut recipes = BTreeMap::new();
    for (name, file) in catalogue_only.chain(own) {
        recipes.insert(name.clone(), resolve_recipe(name, file, defaults, build)?);
    }
    Ok(recipes)
}

/// The suggested catalogue, resolved over the built-in defaults and without extra CAs.
pub(crate) fn catalogue() -> BTreeMap<String, Recipe> {
    let build = BuildSettings::resolve(&BuildFile::default()).expect("the default build settings");
    resolve_recipes(&BTreeMap::new(), &crate::limits::BUILTIN_DEFAULTS, &build)
        .expect("the embedded catalogue is valid")
}

/// The suggested runtimes as config TOML to paste: one `[runtimes.NAME]` per catalogue recipe,
/// with the recipe's ceilings spelled out.
pub fn suggested_runtimes() -> String {
    let mut text = String::from(
        "# Suggested runtimes, from the catalogue built into sandboxd.\n\
         # Paste the ones you want into the config file. Each names a recipe, built on this host\n\
         # the first time a session needs it (or ahead of time: `sandboxd runtimes build NAME`),\n\
         # on top of the base images of scripts/build-images.sh. Change the limits here; to change\n\
         # what is installed, copy the recipe from `sandboxd runtimes suggested --recipes` into\n\
         # [recipes.NAME]. Builds that download over HTTPS through a TLS-intercepting proxy need\n\
         # its CA: [build] extra_ca_certificates = [\"/etc/ssl/certs/ca-certificates.crt\"]\n",
    );
    for recipe in catalogue().values() {
        let limits = &recipe.limits;
        text.push_str(&format!(
            "\n# {}\n[runtimes.{name}]\nruntime = {}\nmem_limit = {}\ncpus = {:?}\npids_limit = {}\nnetwork_mode = {}\n",
            recipe.description,
            toml_string(&recipe.name),
            toml_string(&crate::size::format_bytes(limits.mem_limit_bytes)),
            limits.cpus,
            limits.pids_limit,
            toml_string(limits.network_mode.as_str()),
            name = recipe.name,
        ));
        if !recipe.interpreter.is_empty() {
            let words: Vec<String> = recipe.interpreter.iter().map(|w| toml_string(w)).collect();
            text.push_str(&format!("interpreter = [{}]\n", words.join(", ")));
        }
    }
    text
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

fn resolve_recipe(
    name: &str,
    file: &RecipeFile,
    defaults: &Limits,
    build: &BuildSettings,
) -> Result<Recipe, ConfigError> {
    let field = format!("recipes.{name}");
    check_recipe_name(name, &field)?;
    let base = file.base.trim();
    if base.is_empty() || base.contains(char::is_whitespace) {
        return Err(invalid(
            format!("{field}.base"),
            "must be an image name such as \"sandboxd/python:3.11-bookworm\"",
        ));
    }
    for (index, step) in file.steps.iter().enumerate() {
        check_step(step).map_err(|message| invalid(format!("{field}.steps[{index}]"), message))?;
    }
    if file.interpreter.iter().any(|arg| arg.is_empty()) {
        return Err(invalid(
            format!("{field}.interpreter"),
            "must be a program and its arguments, none of them empty",
        ));
    }
    let limits = resolve_limits(&file.limits, defaults, &format!("{field}."))?;
    let kernels = crate::kernels::resolve_kernels(&file.kernels, &field)?;
    let description = check_description(&file.description, &format!("{field}.description"))?;
    let mut recipe = Recipe {
        name: name.to_string(),
        description,
        base: base.to_string(),
        steps: file.steps.iter().map(|s| s.trim().to_string()).collect(),
        limits,
        interpreter: file.interpreter.clone(),
        kernels,
        image: String::new(),
        dockerfile: String::new(),
        hash: String::new(),
    };
    recipe.follow(build);
    Ok(recipe)
}

impl Recipe {
    /// Sets the Dockerfile, and the hash and tag that follow from it and the build's files.
    pub(crate) fn follow(&mut self, build: &BuildSettings) {
        self.dockerfile = dockerfile(&self.base, &self.steps, build.has_extra_ca());
        self.hash = content_hash(&self.dockerfile, &build.context);
        self.image = format!("{IMAGE_PREFIX}{}:{}", self.name, &self.hash[..12]);
    }
}

impl BuildSettings {
    /// Adds `pem` to the extra CA file every recipe build trusts (see
    /// `Config::trust_in_builds`).
    pub(crate) fn trust(&mut self, pem: &[u8]) {
        let mut contents = self
            .context
            .iter()
            .find(|f| f.name == EXTRA_CA_FILE)
            .map(|f| f.contents.to_vec())
            .unwrap_or_default();
        contents.extend_from_slice(pem);
        if !contents.ends_with(b"\n") {
            contents.push(b'\n');
        }
        self.context.retain(|f| f.name != EXTRA_CA_FILE);
        self.context.push(ContextFile {
            name: EXTRA_CA_FILE.to_string(),
            contents: contents.into(),
        });
    }
}

/// A recipe's name becomes part of an image name: lowercase letters, digits and inner '-'.
fn check_recipe_name(name: &str, field: &str) -> Result<(), ConfigError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if valid {
        Ok(())
    } else {
        Err(invalid(
            field,
            "a recipe name may only hold lowercase letters, digits and '-' (not first or last), at most 64 characters",
        ))
    }
}

/// A step is one Dockerfile instruction on one line, anything but FROM.
fn check_step(step: &str) -> Result<(), String> {
    if step.contains(['\n', '\r']) {
        return Err("one Dockerfile instruction on one line per step; split it into more steps (in a TOML \"\"\" string, end a line with \\ to join it with the next)".into());
    }
    let Some(word) = step.split_whitespace().next() else {
        return Err("must not be empty".into());
    };
    let instruction = word.to_ascii_uppercase();
    if instruction == "FROM" {
        return Err(
            "the build starts from the recipe's `base`; a step may not start another with FROM"
                .into(),
        );
    }
    if !STEP_INSTRUCTIONS.contains(&instruction.as_str()) {
        return Err(format!(
            "\"{word}\" is not a Dockerfile instruction; a step is one, e.g. \"RUN apt-get update && apt-get install -y --no-install-recommends curl\""
        ));
    }
    Ok(())
}

/// The Dockerfile of a recipe. With extra CA certificates, they join the system bundle (through
/// `update-ca-certificates` where the base has it) and the variables that pip, requests, npm
/// and node read point at it, for the steps and for the sandboxes.
fn dockerfile(base: &str, steps: &[String], extra_ca: bool) -> String {
    let mut text = format!("FROM {base}\n");
    if extra_ca {
        text.push_str(&format!(
            "COPY {EXTRA_CA_FILE} {EXTRA_CA_IN_IMAGE}\n\
             RUN if command -v update-ca-certificates >/dev/null 2>&1; then update-ca-certificates >/dev/null; \
             else mkdir -p /etc/ssl/certs && cat {EXTRA_CA_IN_IMAGE} >> {SYSTEM_CA_BUNDLE}; fi\n\
             ENV SSL_CERT_FILE={SYSTEM_CA_BUNDLE} PIP_CERT={SYSTEM_CA_BUNDLE} REQUESTS_CA_BUNDLE={SYSTEM_CA_BUNDLE} \
             NPM_CONFIG_CAFILE={SYSTEM_CA_BUNDLE} NODE_EXTRA_CA_CERTS={EXTRA_CA_IN_IMAGE}\n"
        ));
    }
    for step in steps {
        text.push_str(step.trim());
        text.push('\n');
    }
    text
}

/// sha256 over the Dockerfile and every context file, each length-prefixed.
fn content_hash(dockerfile: &str, context: &[ContextFile]) -> String {
    let mut hasher = Sha256::new();
    let mut part = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_be_bytes());
        hasher.update(bytes);
    };
    part(dockerfile.as_bytes());
    for file in context {
        part(file.name.as_bytes());
        part(&file.contents);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests;
