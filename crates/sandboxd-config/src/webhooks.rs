//! `[webhooks.NAME]`: URLs the service tells of each session's lifecycle (created, paused,
//! resumed, killed), signed with a secret only the service and the receiver hold. The payload
//! and its headers are E2B's, so a receiver written for E2B's webhooks reads them unchanged.

use crate::error::invalid;
use crate::error::ConfigError;
use crate::secrets::{check_table_name, read_value, SecretValue, ValueSource};
use sandboxd_api::LifecycleKind;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most webhooks a config may name: each costs a delivery per event.
const MAX_WEBHOOKS: usize = 16;
const MAX_ATTEMPTS: u32 = 10;
const MAX_TIMEOUT_SECS: u64 = 60;
const MAX_QUEUE: usize = 100_000;
/// The largest CA file read for a receiver's certificate.
const MAX_CA_FILE_BYTES: u64 = 1 << 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebhookFile {
    url: String,
    secret_file: Option<PathBuf>,
    secret_env: Option<String>,
    #[serde(default)]
    events: Vec<String>,
    tenant: Option<String>,
    attempts: Option<u32>,
    timeout_secs: Option<u64>,
    queue: Option<usize>,
    ca_file: Option<PathBuf>,
}

/// One `[webhooks.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub name: String,
    /// `http://` or `https://`, without credentials.
    pub url: String,
    /// Signs each delivery (`e2b-signature`).
    pub secret: SecretValue,
    /// What it is told of, in order, without repeats.
    pub events: Vec<LifecycleKind>,
    /// Only this tenant's sessions; every session when `None`.
    pub tenant: Option<String>,
    /// Tries per event, the first included (default 4: E2B's one and three retries).
    pub attempts: u32,
    /// How long one try may take (default 10 s).
    pub timeout: Duration,
    /// Events waiting for it at most (default 1000); past it the oldest is given up.
    pub queue: usize,
    /// Roots (PEM) trusted for its certificate beside the host's.
    pub ca_pem: Option<Vec<u8>>,
}

impl Webhook {
    pub fn wants(&self, kind: LifecycleKind, tenant: Option<&str>) -> bool {
        self.events.contains(&kind)
            && self
                .tenant
                .as_deref()
                .is_none_or(|wanted| Some(wanted) == tenant)
    }
}

/// Reads and checks every `[webhooks.NAME]`; `tenants` are the config's tenant names.
pub(crate) fn resolve(
    files: &BTreeMap<String, WebhookFile>,
    tenants: &[&str],
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Webhook>, ConfigError> {
    if files.len() > MAX_WEBHOOKS {
        return Err(invalid(
            "webhooks",
            format!("at most {MAX_WEBHOOKS} webhooks, not {}", files.len()),
        ));
    }
    files
        .iter()
        .map(|(name, file)| resolve_one(name, file, tenants, lookup_env))
        .collect()
}

fn resolve_one(
    name: &str,
    file: &WebhookFile,
    tenants: &[&str],
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Webhook, ConfigError> {
    let field = format!("webhooks.{name}");
    check_table_name(&field, name, "a webhook")?;
    let url = check_url(&format!("{field}.url"), &file.url)?;
    let secret = read_value(
        &field,
        ValueSource {
            file: file.secret_file.as_deref(),
            env: file.secret_env.as_deref(),
            file_key: "secret_file",
            env_key: "secret_env",
        },
        lookup_env,
    )?;
    let mut events = Vec::new();
    for text in &file.events {
        let kind = LifecycleKind::parse(text).ok_or_else(|| {
            invalid(
                format!("{field}.events"),
                format!(
                    "\"{text}\" is not an event; there are: {}",
                    LifecycleKind::ALL.map(LifecycleKind::name).join(", ")
                ),
            )
        })?;
        events.push(kind);
    }
    if events.is_empty() {
        events = LifecycleKind::ALL.to_vec();
    }
    events.sort();
    events.dedup();
    if let Some(tenant) = &file.tenant {
        if !tenants.contains(&tenant.as_str()) {
            return Err(invalid(
                format!("{field}.tenant"),
                format!("\"{tenant}\" is not one of [tenants]"),
            ));
        }
    }
    let attempts = bounded(&field, "attempts", file.attempts, 4, MAX_ATTEMPTS)?;
    let timeout_secs = bounded(
        &field,
        "timeout_secs",
        file.timeout_secs,
        10,
        MAX_TIMEOUT_SECS,
    )?;
    let queue = bounded(&field, "queue", file.queue, 1000, MAX_QUEUE)?;
    let ca_pem = match &file.ca_file {
        Some(path) => Some(read_ca_file(&format!("{field}.ca_file"), path)?),
        None => None,
    };
    Ok(Webhook {
        name: name.to_string(),
        url,
        secret,
        events,
        tenant: file.tenant.clone(),
        attempts,
        timeout: Duration::from_secs(timeout_secs),
        queue,
        ca_pem,
    })
}

/// `value`, or `default` without one; refused outside 1..=`most`.
fn bounded<T>(
    field: &str,
    key: &str,
    value: Option<T>,
    default: T,
    most: T,
) -> Result<T, ConfigError>
where
    T: PartialOrd + From<u8> + std::fmt::Display + Copy,
{
    let value = value.unwrap_or(default);
    if value < T::from(1) || value > most {
        return Err(invalid(
            format!("{field}.{key}"),
            format!("must be 1 to {most}, not {value}"),
        ));
    }
    Ok(value)
}

/// An absolute `http` or `https` URL with a host and no credentials (a URL is logged).
fn check_url(field: &str, text: &str) -> Result<String, ConfigError> {
    let refuse = |why: &str| {
        invalid(
            field,
            format!("\"{text}\" {why}; e.g. url = \"https://hooks.example.com/sandboxd\""),
        )
    };
    let uri: http::Uri = text.parse().map_err(|_| refuse("is not a URL"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(refuse("is not an http:// or https:// URL"));
    }
    let Some(authority) = uri.authority() else {
        return Err(refuse("names no host"));
    };
    if authority.as_str().contains('@') {
        return Err(refuse(
            "holds credentials, which would be logged: the secret signs each delivery instead",
        ));
    }
    Ok(text.to_string())
}

fn read_ca_file(field: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    let metadata = std::fs::metadata(path)
        .map_err(|e| invalid(field, format!("cannot read {}: {e}", path.display())))?;
    if !metadata.is_file() || metadata.len() > MAX_CA_FILE_BYTES {
        return Err(invalid(
            field,
            format!("{} must be a PEM file of at most 1 MiB", path.display()),
        ));
    }
    let pem = std::fs::read(path)
        .map_err(|e| invalid(field, format!("cannot read {}: {e}", path.display())))?;
    if !pem
        .windows(b"BEGIN CERTIFICATE".len())
        .any(|w| w == b"BEGIN CERTIFICATE")
    {
        return Err(invalid(
            field,
            format!("{} holds no PEM certificate", path.display()),
        ));
    }
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_text(toml_text: &str) -> Result<Vec<Webhook>, ConfigError> {
        let files: BTreeMap<String, WebhookFile> = toml::from_str(toml_text).unwrap();
        resolve(&files, &["acme"], &|name| {
            (name == "HOOK_SECRET").then(|| "s3cret\n".to_string())
        })
    }

    #[test]
    fn a_webhook_gets_every_event_and_e2bs_retries_by_default() {
        let hooks =
            resolve_text("[audit]\nurl = \"https://h.example/x\"\nsecret_env = \"HOOK_SECRET\"\n")
                .unwrap();
        let hook = &hooks[0];
        assert_eq!(hook.events, LifecycleKind::ALL.to_vec());
        assert_eq!(hook.secret.expose(), "s3cret");
        assert_eq!(
            (hook.attempts, hook.timeout.as_secs(), hook.queue),
            (4, 10, 1000)
        );
        assert!(hook.wants(LifecycleKind::Killed, Some("any")));
    }

    #[test]
    fn events_and_tenant_narrow_what_it_is_told() {
        let hooks = resolve_text(
            "[a]\nurl = \"http://127.0.0.1:9/\"\nsecret_env = \"HOOK_SECRET\"\nevents = [\"sandbox.lifecycle.killed\", \"created\", \"killed\"]\ntenant = \"acme\"\n",
        )
        .unwrap();
        let hook = &hooks[0];
        assert_eq!(hook.events, [LifecycleKind::Created, LifecycleKind::Killed]);
        assert!(hook.wants(LifecycleKind::Created, Some("acme")));
        assert!(!hook.wants(LifecycleKind::Created, None));
        assert!(!hook.wants(LifecycleKind::Paused, Some("acme")));
    }

    #[test]
    fn what_cannot_work_is_refused_naming_the_key() {
        let secret = "secret_env = \"HOOK_SECRET\"";
        for (body, key) in [
            (
                format!("url = \"ftp://h.example/\"\n{secret}"),
                "webhooks.a.url",
            ),
            (
                format!("url = \"https://u:p@h.example/\"\n{secret}"),
                "webhooks.a.url",
            ),
            ("url = \"https://h.example/\"".to_string(), "webhooks.a"),
            (
                "url = \"https://h.example/\"\nsecret_env = \"NOT_SET\"".to_string(),
                "webhooks.a.secret_env",
            ),
            (
                format!("url = \"https://h.example/\"\n{secret}\nevents = [\"updated\"]"),
                "webhooks.a.events",
            ),
            (
                format!("url = \"https://h.example/\"\n{secret}\ntenant = \"other\""),
                "webhooks.a.tenant",
            ),
            (
                format!("url = \"https://h.example/\"\n{secret}\nattempts = 0"),
                "webhooks.a.attempts",
            ),
            (
                format!("url = \"https://h.example/\"\n{secret}\nqueue = 100001"),
                "webhooks.a.queue",
            ),
        ] {
            match resolve_text(&format!("[a]\n{body}\n")) {
                Err(ConfigError::Invalid { field, .. }) => assert_eq!(field, key, "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }
}
