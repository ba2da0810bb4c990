//! `[secrets.NAME]`: credentials the egress proxy adds to requests on their way out, so that
//! a sandbox only ever holds a placeholder. A runtime names the secrets its sessions get
//! (`secrets = ["NAME"]`, `network_mode = "egress"` only), and each secret's hosts must be
//! within that runtime's egress list.
//!
//! The value comes from a file (`value_file`) or the service's environment (`value_env`),
//! never from the config itself, and is read when the config is loaded. It is kept in a
//! [`SecretValue`], whose `Debug` and `Display` print a redaction.

use crate::error::invalid;
use crate::error::ConfigError;
use hmac::{KeyInit, Mac};
use sandboxd_api::RuntimeInfo;
use sandboxd_api::{first_widening, EgressRule, NetworkMode, MAX_EGRESS_RULES};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The longest value a secret may have.
const MAX_VALUE_BYTES: usize = 8 << 10;
/// Where the template puts the value (or the placeholder).
const SLOT: &str = "{}";
/// Environment variables the service sets itself, which a secret may not take.
const RESERVED_ENV: &[&str] = &[
    "HOME",
    "PATH",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "PIP_CERT",
];

/// A secret's value: shown nowhere, `Debug` and `Display` included.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(Arc<str>);

impl SecretValue {
    /// The value itself, for the one place that sends it: the proxy's header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl std::fmt::Display for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// One `[secrets.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Secret {
    pub name: String,
    pub value: SecretValue,
    /// Where it may go (the egress rules' syntax).
    pub hosts: Vec<EgressRule>,
    /// The header it is sent in, lower case (e.g. `authorization`).
    pub header: String,
    /// The header's value with `{}` where the secret goes (e.g. `Bearer {}`).
    pub format: String,
    /// The environment variable holding the placeholder in the sandbox.
    pub env: String,
}

impl Secret {
    /// The header's value with `text` (the value, or a placeholder) in its slot.
    pub fn header_value(&self, text: &str) -> String {
        self.format.replacen(SLOT, text, 1)
    }
}

/// Every secret, and which runtimes get which.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Secrets {
    by_name: BTreeMap<String, Arc<Secret>>,
    by_runtime: BTreeMap<String, Vec<Arc<Secret>>>,
}

impl Secrets {
    /// The secrets a runtime's sessions get (none for most).
    pub fn for_runtime(&self, runtime: &str) -> &[Arc<Secret>] {
        self.by_runtime.get(runtime).map_or(&[], Vec::as_slice)
    }

    /// Whether any runtime gets a secret (and so the proxy intercepts some hosts).
    pub fn any_in_use(&self) -> bool {
        self.by_runtime.values().any(|s| !s.is_empty())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SecretFile {
    value_file: Option<PathBuf>,
    value_env: Option<String>,
    #[serde(default)]
    hosts: Vec<String>,
    header: Option<String>,
    format: Option<String>,
    env: Option<String>,
}

/// Reads and checks every `[secrets.NAME]`, then each runtime's `secrets = [...]` against
/// them. `lookup_env` is the service's environment (a parameter so that tests need not
/// change the process's).
pub(crate) fn resolve(
    files: &BTreeMap<String, SecretFile>,
    runtimes: &BTreeMap<String, RuntimeInfo>,
    named: &BTreeMap<String, Vec<String>>,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Secrets, ConfigError> {
    let mut by_name = BTreeMap::new();
    for (name, file) in files {
        by_name.insert(name.clone(), Arc::new(resolve_one(name, file, lookup_env)?));
    }
    let mut by_runtime = BTreeMap::new();
    for (runtime_name, names) in named {
        let Some(runtime) = runtimes.get(runtime_name) else {
            continue;
        };
        let field = format!("runtimes.{}.secrets", runtime.name);
        if names.is_empty() {
            continue;
        }
        if runtime.limits.network_mode != NetworkMode::Egress {
            return Err(invalid(
                field,
                "secrets are added by the egress proxy: the runtime needs network_mode = \"egress\"",
            ));
        }
        let mut given: Vec<Arc<Secret>> = Vec::new();
        for name in names {
            let secret = by_name.get(name).ok_or_else(|| {
                let known: Vec<&str> = by_name.keys().map(String::as_str).collect();
                invalid(
                    &field,
                    format!(
                        "\"{name}\" is not a [secrets.NAME] of this config (there are: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                )
            })?;
            if let Some(rule) = first_widening(&runtime.egress, &secret.hosts) {
                return Err(invalid(
                    &field,
                    format!("secret \"{name}\" may go to \"{rule}\", which is not on this runtime's egress list"),
                ));
            }
            if given.iter().any(|s| s.env == secret.env) {
                return Err(invalid(
                    &field,
                    format!("two of its secrets use the variable {}", secret.env),
                ));
            }
            if !given.iter().any(|s| s.name == secret.name) {
                given.push(secret.clone());
            }
        }
        by_runtime.insert(runtime.name.clone(), given);
    }
    Ok(Secrets {
        by_name,
        by_runtime,
    })
}

fn resolve_one(
    name: &str,
    file: &SecretFile,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Secret, ConfigError> {
    let field = format!("secrets.{name}");
    check_table_name(&field, name, "a secret")?;
    let value = read_value(
        &field,
        ValueSource {
            file: file.value_file.as_deref(),
            env: file.value_env.as_deref(),
            file_key: "value_file",
            env_key: "value_env",
        },
        lookup_env,
    )?;
    let hosts_field = format!("{field}.hosts");
    if file.hosts.is_empty() || file.hosts.len() > MAX_EGRESS_RULES {
        return Err(invalid(
            &hosts_field,
            format!("name 1 to {MAX_EGRESS_RULES} hosts the secret may go to, e.g. hosts = [\"api.openai.com\"]"),
        ));
    }
    let hosts = file
        .hosts
        .iter()
        .map(|text| text.parse().map_err(|m: String| invalid(&hosts_field, m)))
        .collect::<Result<Vec<EgressRule>, _>>()?;
    let header = file.header.as_deref().unwrap_or("Authorization");
    if http::HeaderName::from_bytes(header.as_bytes()).is_err()
        || header.eq_ignore_ascii_case("host")
    {
        return Err(invalid(
            format!("{field}.header"),
            format!("{header:?} is not a header a secret can be sent in"),
        ));
    }
    let format = file.format.clone().unwrap_or_else(|| "Bearer {}".into());
    if format.matches(SLOT).count() != 1
        || http::HeaderValue::from_str(&format.replace(SLOT, "x")).is_err()
    {
        return Err(invalid(
            format!("{field}.format"),
            "must be a header value holding `{}` once, where the secret goes, e.g. \"Bearer {}\"",
        ));
    }
    let env = file.env.clone().ok_or_else(|| {
        invalid(
            format!("{field}.env"),
            "name the environment variable that holds the placeholder in the sandbox, e.g. env = \"OPENAI_API_KEY\"",
        )
    })?;
    let valid_env = !env.is_empty()
        && !env.starts_with(|c: char| c.is_ascii_digit())
        && env.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !env.starts_with("SANDBOXD");
    if !valid_env || RESERVED_ENV.contains(&env.as_str()) {
        return Err(invalid(
            format!("{field}.env"),
            format!("{env:?} is not a variable a secret's placeholder can take (letters, digits and '_', not one the service sets)"),
        ));
    }
    Ok(Secret {
        name: name.to_string(),
        value,
        hosts,
        header: header.to_ascii_lowercase(),
        format,
        env,
    })
}

/// Refuses a table's name (`[secrets.NAME]`, `[webhooks.NAME]`) unless it holds 1 to 64
/// letters, digits, '-' and '_' (it is logged and shown).
pub(crate) fn check_table_name(field: &str, name: &str, what: &str) -> Result<(), ConfigError> {
    let fits = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fits {
        return Ok(());
    }
    Err(invalid(
        field,
        format!("{what}'s name holds 1 to 64 letters, digits, '-' and '_'"),
    ))
}

/// Where a secret value comes from: a file or a variable of the service's environment, named
/// by the keys `file_key` and `env_key` of the config's table.
pub(crate) struct ValueSource<'a> {
    pub file: Option<&'a Path>,
    pub env: Option<&'a str>,
    pub file_key: &'a str,
    pub env_key: &'a str,
}

/// The value `source` names for the table `field`: exactly one of its two keys, 1 to
/// `MAX_VALUE_BYTES` of printable ASCII (it is sent in a header or signs one).
pub(crate) fn read_value(
    field: &str,
    source: ValueSource<'_>,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<SecretValue, ConfigError> {
    let ValueSource {
        file,
        env,
        file_key,
        env_key,
    } = source;
    let value = match (file, env) {
        (Some(path), None) => read_value_file(path, &format!("{field}.{file_key}"))?,
        (None, Some(variable)) => lookup_env(variable).ok_or_else(|| {
            invalid(
                format!("{field}.{env_key}"),
                format!("the service's environment has no variable {variable}"),
            )
        })?,
        _ => {
            return Err(invalid(
                field,
                format!("give the value as either `{file_key}` (a file only the service reads) or `{env_key}` (a variable of the service's environment); it is never written in the config"),
            ))
        }
    };
    let value = value.trim_end_matches(['\n', '\r']);
    if value.is_empty() || value.len() > MAX_VALUE_BYTES {
        return Err(invalid(
            field,
            format!("the value must hold 1 to {MAX_VALUE_BYTES} bytes"),
        ));
    }
    if !value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
    {
        return Err(invalid(
            field,
            "the value may only hold printable ASCII (it is sent in a header)",
        ));
    }
    Ok(SecretValue(value.into()))
}

fn read_value_file(path: &Path, field: &str) -> Result<String, ConfigError> {
    // The error names the file, never what it holds.
    let metadata = std::fs::metadata(path)
        .map_err(|e| invalid(field, format!("cannot read {}: {e}", path.display())))?;
    if !metadata.is_file() || metadata.len() > MAX_VALUE_BYTES as u64 + 2 {
        return Err(invalid(
            field,
            format!(
                "{} must be a file of at most {MAX_VALUE_BYTES} bytes",
                path.display()
            ),
        ));
    }
    std::fs::read_to_string(path)
        .map_err(|e| invalid(field, format!("cannot read {}: {e}", path.display())))
}

/// The service's key for placeholders, kept in its state directory (0600): a placeholder is
/// a keyed hash of the session and the secret's name, so it is the same after a restart,
/// differs between sessions, cannot be guessed without the key, and owes nothing to the value.
#[derive(Clone)]
pub struct PlaceholderKey([u8; 32]);

impl std::fmt::Debug for PlaceholderKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlaceholderKey(<redacted>)")
    }
}

impl PlaceholderKey {
    pub fn new(bytes: [u8; 32]) -> PlaceholderKey {
        PlaceholderKey(bytes)
    }

    /// The placeholder `session_id`'s sandbox holds for the secret `name`.
    pub fn placeholder(&self, session_id: &str, name: &str) -> String {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.0).expect("any key length");
        mac.update(session_id.as_bytes());
        mac.update(&[0]);
        mac.update(name.as_bytes());
        let digest = mac.finalize().into_bytes();
        let hex: String = digest[..20].iter().map(|b| format!("{b:02x}")).collect();
        format!("sandboxd-placeholder-{hex}")
    }

    /// The environment of a session's sandbox for its runtime's secrets: `ENV=placeholder`.
    pub fn environment(&self, secrets: &[Arc<Secret>], session_id: &str) -> Vec<String> {
        secrets
            .iter()
            .map(|s| format!("{}={}", s.env, self.placeholder(session_id, &s.name)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    const RUNTIME: &str = "[runtimes.py]\nimage = \"python:3\"\nnetwork_mode = \"egress\"\negress = [\"api.example.com\", \"pypi.org\"]\n";

    fn value_file(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_secret_is_read_from_its_file_and_given_to_its_runtime() {
        let file = value_file("sk-real-value\n");
        let config = parse(&format!(
            "{RUNTIME}secrets = [\"openai\"]\n[secrets.openai]\nvalue_file = {:?}\nhosts = [\"api.example.com\"]\nenv = \"OPENAI_API_KEY\"\n",
            file.path()
        ))
        .unwrap();
        let secrets = config.secrets.for_runtime("py");
        assert_eq!(secrets.len(), 1);
        let secret = &secrets[0];
        assert_eq!(secret.value.expose(), "sk-real-value");
        assert_eq!(secret.header, "authorization");
        assert_eq!(secret.header_value("x"), "Bearer x");
        // Nothing that prints the config shows the value.
        assert!(!format!("{config:?}").contains("sk-real-value"));
        assert!(!format!("{}", secret.value).contains("sk-real"));
        assert!(config.secrets.any_in_use());
    }

    #[test]
    fn mistakes_are_named_where_they_are() {
        let file = value_file("v");
        let path = format!("{:?}", file.path());
        for (text, says) in [
            (
                format!("{RUNTIME}[secrets.a]\nhosts = [\"api.example.com\"]\nenv = \"A\"\n"),
                "secrets.a: give the value as either",
            ),
            (
                format!("{RUNTIME}[secrets.a]\nvalue_file = \"/nonexistent/key\"\nhosts = [\"api.example.com\"]\nenv = \"A\"\n"),
                "secrets.a.value_file: cannot read /nonexistent/key",
            ),
            (
                format!("{RUNTIME}[secrets.a]\nvalue_env = \"SANDBOXD_TEST_NO_SUCH_VARIABLE\"\nhosts = [\"api.example.com\"]\nenv = \"A\"\n"),
                "secrets.a.value_env: the service's environment has no variable SANDBOXD_TEST_NO_SUCH_VARIABLE",
            ),
            (
                format!("{RUNTIME}[secrets.a]\nvalue_file = {path}\nhosts = [\"api.example.com\"]\nenv = \"A\"\nformat = \"Bearer\"\n"),
                "secrets.a.format",
            ),
            (
                format!("{RUNTIME}[secrets.a]\nvalue_file = {path}\nhosts = [\"10.0.0.1\"]\nenv = \"A\"\n"),
                "secrets.a.hosts",
            ),
            (
                format!("{RUNTIME}[secrets.a]\nvalue_file = {path}\nhosts = [\"api.example.com\"]\nenv = \"HTTPS_PROXY\"\n"),
                "secrets.a.env",
            ),
            (
                format!("{RUNTIME}[secrets.a]\nvalue_file = {path}\nhosts = [\"api.example.com\"]\n"),
                "secrets.a.env",
            ),
            (
                format!("{RUNTIME}secrets = [\"b\"]\n[secrets.a]\nvalue_file = {path}\nhosts = [\"api.example.com\"]\nenv = \"A\"\n"),
                "runtimes.py.secrets: \"b\" is not a [secrets.NAME] of this config (there are: a)",
            ),
            (
                format!("{RUNTIME}secrets = [\"a\"]\n[secrets.a]\nvalue_file = {path}\nhosts = [\"*.example.com\"]\nenv = \"A\"\n"),
                "runtimes.py.secrets: secret \"a\" may go to \"*.example.com\", which is not on this runtime's egress list",
            ),
            (
                format!("[runtimes.py]\nimage = \"python:3\"\nnetwork_mode = \"bridge\"\nsecrets = [\"a\"]\n[secrets.a]\nvalue_file = {path}\nhosts = [\"api.example.com\"]\nenv = \"A\"\n"),
                "runtimes.py.secrets: secrets are added by the egress proxy",
            ),
            (
                format!("{RUNTIME}secrets = [\"a\", \"b\"]\n[secrets.a]\nvalue_file = {path}\nhosts = [\"api.example.com\"]\nenv = \"A\"\n[secrets.b]\nvalue_file = {path}\nhosts = [\"pypi.org\"]\nenv = \"A\"\n"),
                "two of its secrets use the variable A",
            ),
        ] {
            let error = parse(&text).unwrap_err();
            assert!(error.contains(says), "{text}\n{error}");
        }
    }

    #[test]
    fn a_value_from_the_environment_is_never_in_an_error() {
        let files = BTreeMap::from([(
            "a".to_string(),
            SecretFile {
                value_file: None,
                value_env: Some("KEY".into()),
                hosts: vec!["api.example.com".into()],
                header: Some("X-Api-Key".into()),
                format: Some("{}".into()),
                env: Some("API_KEY".into()),
            },
        )]);
        let lookup = |name: &str| (name == "KEY").then(|| "line\nbreak".to_string());
        let error = resolve(&files, &BTreeMap::new(), &BTreeMap::new(), &lookup)
            .unwrap_err()
            .to_string();
        assert!(error.contains("printable ASCII"), "{error}");
        assert!(!error.contains("line"), "{error}");
        let lookup = |name: &str| (name == "KEY").then(|| "k-123".to_string());
        let secrets = resolve(&files, &BTreeMap::new(), &BTreeMap::new(), &lookup).unwrap();
        assert_eq!(secrets.names().collect::<Vec<_>>(), ["a"]);
        assert_eq!(secrets.by_name["a"].header_value("p"), "p");
    }

    #[test]
    fn placeholders_differ_by_session_and_secret_and_owe_nothing_to_the_value() {
        let key = PlaceholderKey::new([7; 32]);
        let one = key.placeholder("s1", "openai");
        assert_eq!(one, key.placeholder("s1", "openai"));
        assert_ne!(one, key.placeholder("s2", "openai"));
        assert_ne!(one, key.placeholder("s1", "github"));
        assert_ne!(
            one,
            PlaceholderKey::new([8; 32]).placeholder("s1", "openai")
        );
        assert!(
            one.starts_with("sandboxd-placeholder-") && one.len() == 61,
            "{one}"
        );
        assert!(!format!("{key:?}").contains('7'));
    }
}
