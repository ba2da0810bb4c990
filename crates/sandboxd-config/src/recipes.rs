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
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn the_catalogue_has_the_suggested_runtimes() {
        let catalogue = catalogue();
        let names: Vec<&str> = catalogue.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "code-interpreter",
                "desktop",
                "node",
                "python",
                "python-datascience",
                "python-gvisor",
                "python-interpreter",
                "python-scraping",
                "shell"
            ]
        );
        let gvisor = catalogue
            .values()
            .filter(|r| r.limits.isolation == sandboxd_api::Isolation::Gvisor)
            .map(|r| r.name.as_str());
        assert!(
            gvisor.eq(["python-gvisor"]),
            "only python-gvisor has a kernel of its own"
        );
        for recipe in catalogue.values() {
            assert!(
                recipe.base.starts_with("sandboxd/"),
                "{} must build on a local base image",
                recipe.name
            );
            assert!(recipe.image.starts_with("sandboxd/recipe-"));
            assert!(!recipe.description.is_empty());
        }
        let scraping = &catalogue["python-scraping"];
        assert_eq!(scraping.limits.network_mode.as_str(), "bridge");
        let others_offline = catalogue
            .values()
            .filter(|r| r.name != "python-scraping")
            .all(|r| r.limits.network_mode.as_str() == "none");
        assert!(others_offline, "only python-scraping is given the network");
        assert!(catalogue["python-datascience"]
            .dockerfile
            .contains("pandas"));
        // What E2B's Desktop SDK runs, and noVNC where it looks for it.
        let desktop = &catalogue["desktop"].dockerfile;
        for tool in [
            "xvfb",
            "xfce4-session",
            "xfwm4",
            "xfdesktop4",
            "x11vnc",
            "novnc",
            "xdotool",
            "x11-xserver-utils",
            "scrot",
            "x11-utils",
            "net-tools",
            "xdg-utils",
            "libgtk-3-bin",
        ] {
            assert!(desktop.contains(&format!(" {tool} ")), "{tool}");
        }
        assert!(desktop.contains("ln -s /usr/share/novnc /opt/noVNC"));
        let interpreter = &catalogue["python-interpreter"];
        assert!(interpreter.dockerfile.contains("ipykernel=="));
        assert!(interpreter.kernels["python"].contains(&"{connection_file}".to_string()));
        assert!(catalogue["python"].kernels.is_empty());
        let languages: Vec<&str> = catalogue["code-interpreter"]
            .kernels
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            languages,
            ["bash", "java", "javascript", "python", "r", "typescript"],
            "the languages of E2B's SDK"
        );
        // The rich-results extension is one Dockerfile line (steps are one instruction each).
        let code_interpreter = &catalogue["code-interpreter"].dockerfile;
        let extension = code_interpreter
            .lines()
            .find(|l| l.contains("sandboxd_e2b_results.py"))
            .unwrap();
        assert!(extension.contains("def load_ipython_extension(shell):"));
    }

    #[test]
    fn suggested_runtimes_paste_into_a_config() {
        let text = format!("default_runtime = \"python\"\n{}", suggested_runtimes());
        let config = Config::parse(&text).unwrap();
        assert_eq!(config.runtimes.len(), catalogue().len());
        let datascience = config.runtime("python-datascience").unwrap();
        assert_eq!(datascience.limits, catalogue()["python-datascience"].limits);
        assert_eq!(datascience.interpreter, ["python3"]);
        // The catalogue itself pastes under [recipes] too.
        let with_recipes = format!("{text}\n{CATALOGUE}");
        let config = Config::parse(&with_recipes).unwrap();
        assert_eq!(
            config.recipe("python").unwrap().hash,
            catalogue()["python"].hash,
            "a pasted copy of a recipe is the same recipe"
        );
    }

    #[test]
    fn the_hash_follows_the_content() {
        let recipe = |steps: &str| {
            Config::parse(&format!(
                "[runtimes.t]\nruntime = \"t\"\n[recipes.t]\nbase = \"b\"\nsteps = [{steps}]\n"
            ))
            .unwrap()
            .recipe("t")
            .unwrap()
            .clone()
        };
        let a = recipe("\"RUN echo a\"");
        let a_again = recipe("\"  RUN echo a \"");
        let b = recipe("\"RUN echo b\"");
        assert_eq!(a.hash, a_again.hash, "surrounding spaces are not content");
        assert_ne!(a.hash, b.hash);
        assert_eq!(a.image, format!("sandboxd/recipe-t:{}", &a.hash[..12]));
        assert_eq!(a.dockerfile, "FROM b\nRUN echo a\n");
    }

    #[test]
    fn a_ca_trusted_later_changes_every_recipe_tag() {
        let mut config = Config::parse("[runtimes.t]\nruntime = \"python\"\n").unwrap();
        let before = config.runtime("t").unwrap().recipe_image.clone().unwrap();
        let pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        config.trust_in_builds(pem);
        let recipe = config.recipe("python").unwrap();
        assert!(
            recipe.dockerfile.contains(EXTRA_CA_FILE),
            "{}",
            recipe.dockerfile
        );
        assert_ne!(recipe.image, before);
        assert_eq!(
            config.runtime("t").unwrap().recipe_image.as_ref(),
            Some(&recipe.image)
        );
        let file = &config.build.context[0];
        assert!(file.contents.ends_with(pem));
    }

    #[test]
    fn extra_ca_certificates_go_into_the_build() {
        let dir = tempfile_dir();
        let ca = dir.join("proxy-ca.pem");
        std::fs::write(
            &ca,
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        )
        .unwrap();
        let text = format!(
            "[runtimes.t]\nruntime = \"python\"\n[build]\nextra_ca_certificates = [{:?}]\ntimeout_secs = 60\n",
            ca.display().to_string()
        );
        let config = Config::parse(&text).unwrap();
        assert_eq!(config.build.timeout, Duration::from_secs(60));
        assert_eq!(config.build.context.len(), 1);
        assert_eq!(config.build.context[0].name, EXTRA_CA_FILE);
        assert!(config.build.context[0].contents.ends_with(b"-----\n"));
        let python = config.recipe("python").unwrap();
        assert!(python
            .dockerfile
            .contains(&format!("COPY {EXTRA_CA_FILE} ")));
        assert!(python.dockerfile.contains("PIP_CERT="));
        assert_ne!(
            python.hash,
            catalogue()["python"].hash,
            "the CA is part of the build"
        );

        std::fs::write(&ca, "not a certificate").unwrap();
        let message = Config::parse(&text).unwrap_err().to_string();
        assert!(
            message.contains("build.extra_ca_certificates[0]") && message.contains("no PEM"),
            "{message}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "sandboxd-config-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn precise_recipe_errors() {
        let runtime = "[runtimes.t]\nruntime = \"t\"\n";
        let cases = [
            (
                "[runtimes.t]\nruntime = \"nope\"\n".to_string(),
                "runtimes.t.runtime: no recipe named \"nope\"",
            ),
            (
                format!("{runtime}[recipes.t]\nbase = \"b\"\nsteps = [\"FROM debian\"]\n"),
                "recipes.t.steps[0]: the build starts from the recipe's `base`",
            ),
            (
                format!("{runtime}[recipes.t]\nbase = \"b\"\nsteps = [\"RUN a\", \"apt-get install x\"]\n"),
                "recipes.t.steps[1]: \"apt-get\" is not a Dockerfile instruction",
            ),
            (
                format!("{runtime}[recipes.t]\nbase = \"b\"\nsteps = [\"RUN a\\nRUN b\"]\n"),
                "recipes.t.steps[0]: one Dockerfile instruction on one line",
            ),
            (
                format!("{runtime}[recipes.t]\nbase = \"\"\n"),
                "recipes.t.base: must be an image name",
            ),
            (
                format!("{runtime}[recipes.t]\nsteps = []\n"),
                "missing field `base`",
            ),
            (
                format!("{runtime}[recipes.t]\nbase = \"b\"\nprivileged = true\n"),
                "unknown field `privileged`",
            ),
            (
                format!("{runtime}[recipes.t]\nbase = \"b\"\ncpus = 0\n"),
                "recipes.t.cpus: must be a number above 0",
            ),
            (
                "[runtimes.t]\nruntime = \"Big_Name\"\n[recipes.Big_Name]\nbase = \"b\"\n"
                    .to_string(),
                "recipes.Big_Name: a recipe name may only hold lowercase letters",
            ),
            (
                "[runtimes.t]\nruntime = \"python\"\n[build]\nextra_ca_certificates = [\"/nonexistent/ca.pem\"]\n".to_string(),
                "build.extra_ca_certificates[0]: cannot read /nonexistent/ca.pem",
            ),
            (
                "[runtimes.t]\nruntime = \"python\"\n[build]\ntimeout_secs = 0\n".to_string(),
                "build.timeout_secs: must be above 0",
            ),
        ];
        for (text, expected) in cases {
            let message = Config::parse(&text).unwrap_err().to_string();
            assert!(
                message.contains(expected),
                "config {text:?}\n  gave {message:?}\n  expected it to contain {expected:?}"
            );
        }
    }

    #[test]
    fn unknown_recipe_lists_the_known_ones() {
        let message =
            Config::parse("[runtimes.t]\nruntime = \"nope\"\n[recipes.mine]\nbase = \"b\"\n")
                .unwrap_err()
                .to_string();
        assert!(
            message.contains(
                "desktop, node, python, python-datascience, python-gvisor, python-interpreter, python-scraping, shell"
            ) && message.contains("mine")
                && message.contains("[recipes.nope]"),
            "{message}"
        );
    }

    #[test]
    fn a_runtime_inherits_the_recipe_then_overrides_it() {
        let config = Config::parse(
            "mem_limit = \"300m\"\ndefault_runtime = \"a\"\n\
             [runtimes.a]\nruntime = \"python-scraping\"\n\
             [runtimes.b]\nruntime = \"python-scraping\"\nnetwork_mode = \"none\"\nmem_limit = \"2g\"\ninterpreter = [\"python3\", \"-u\"]\n\
             [runtimes.c]\nruntime = \"mine\"\n\
             [recipes.mine]\nbase = \"b\"\n",
        )
        .unwrap();
        let a = config.runtime("a").unwrap();
        assert_eq!(a.limits.network_mode.as_str(), "bridge");
        assert_eq!(a.limits.mem_limit_bytes, 1 << 30, "the recipe's");
        assert_eq!(a.interpreter, ["python3"]);
        assert_eq!(
            a.recipe_image.as_deref(),
            Some(config.recipe("python-scraping").unwrap().image.as_str())
        );
        let b = config.runtime("b").unwrap();
        assert_eq!(b.limits.network_mode.as_str(), "none");
        assert_eq!(b.limits.mem_limit_bytes, 2 << 30);
        assert_eq!(b.interpreter, ["python3", "-u"]);
        let c = config.runtime("c").unwrap();
        assert_eq!(
            c.limits.mem_limit_bytes,
            300 << 20,
            "the service-wide default"
        );
        assert!(c.interpreter.is_empty());
    }

    #[test]
    fn a_config_recipe_replaces_the_catalogue_one() {
        let config = Config::parse(
            "[runtimes.t]\nruntime = \"python\"\n[recipes.python]\nbase = \"sandboxd/python:3.11-bookworm\"\nsteps = [\"RUN true\"]\n",
        )
        .unwrap();
        let python = config.recipe("python").unwrap();
        assert!(python.dockerfile.ends_with("RUN true\n"));
        assert_ne!(python.hash, catalogue()["python"].hash);
        assert!(
            config.recipe("node").is_some(),
            "the rest of the catalogue stays"
        );
    }
}
