//! `[e2b]`: the E2B-compatible API's settings. Without a domain, the E2B SDKs reach the
//! service through `E2B_API_URL` and `E2B_SANDBOX_URL` (one address, sandboxes told apart by
//! a header); with one, also as `api.DOMAIN` and `PORT-SANDBOXID.DOMAIN`, the only form the
//! SDKs' next major version keeps (TLS and the wildcard name are the operator's proxy's).
//! `templates` names runtimes by the template IDs the E2B SDKs ask for (`base`,
//! `code-interpreter-v1`, ...).

use crate::error::invalid;
use crate::error::ConfigError;
use crate::size::SizeValue;
use sandboxd_api::RuntimeInfo;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A DNS name's longest length.
const MAX_DOMAIN_LEN: usize = 253;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct E2bFile {
    domain: Option<String>,
    #[serde(default)]
    templates: BTreeMap<String, String>,
    watcher_bytes: Option<SizeValue>,
    watcher_bytes_per_tenant: Option<SizeValue>,
    watcher_bytes_in_all: Option<SizeValue>,
    volume_size: Option<SizeValue>,
}

#[derive(Debug, Clone)]
pub struct E2bSettings {
    /// Lower case, without a scheme, port or trailing dot.
    pub domain: Option<String>,
    /// Template ID to the runtime alias a sandbox of it runs; each names a runtime.
    pub templates: BTreeMap<String, String>,
    /// What polled watchers (`CreateWatcher`) may hold of changes not yet polled.
    pub watcher_bytes: WatcherBytes,
    /// The size of a volume made through E2B's API, which asks for none.
    pub volume_size: u64,
}

/// What `e2b.volume_size` is unless set.
pub const DEFAULT_E2B_VOLUME_SIZE: u64 = 1 << 30;

impl Default for E2bSettings {
    fn default() -> Self {
        E2bSettings {
            domain: None,
            templates: BTreeMap::new(),
            watcher_bytes: WatcherBytes::default(),
            volume_size: DEFAULT_E2B_VOLUME_SIZE,
        }
    }
}

/// Bytes of changes not yet polled that one watcher, one tenant's watchers and all watchers
/// may hold; past them a watcher reports lost changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatcherBytes {
    pub per_watcher: u64,
    pub per_tenant: u64,
    pub in_all: u64,
}

impl Default for WatcherBytes {
    fn default() -> Self {
        WatcherBytes {
            per_watcher: 1 << 20,
            per_tenant: 16 << 20,
            in_all: 64 << 20,
        }
    }
}

impl E2bSettings {
    pub(crate) fn resolve(
        file: &E2bFile,
        runtimes: &BTreeMap<String, RuntimeInfo>,
    ) -> Result<E2bSettings, ConfigError> {
        for (template, runtime) in &file.templates {
            if !runtimes.contains_key(runtime) {
                return Err(invalid(
                    format!("e2b.templates.{template}"),
                    format!(
                        "names runtime \"{runtime}\", which is not one of [runtimes]: {}",
                        runtimes.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        let domain = match &file.domain {
            Some(domain) => Some(dns_name("e2b.domain", domain)?),
            None => None,
        };
        let defaults = WatcherBytes::default();
        let size = |value: &Option<SizeValue>, name: &str, default: u64| {
            let field = format!("e2b.{name}");
            let bytes = match value {
                Some(value) => value.resolve(&field)?,
                None => default,
            };
            if bytes == 0 {
                return Err(invalid(field, "must be above 0"));
            }
            Ok(bytes)
        };
        let watcher_bytes = WatcherBytes {
            per_watcher: size(&file.watcher_bytes, "watcher_bytes", defaults.per_watcher)?,
            per_tenant: size(
                &file.watcher_bytes_per_tenant,
                "watcher_bytes_per_tenant",
                defaults.per_tenant,
            )?,
            in_all: size(
                &file.watcher_bytes_in_all,
                "watcher_bytes_in_all",
                defaults.in_all,
            )?,
        };
        Ok(E2bSettings {
            domain,
            templates: file.templates.clone(),
            watcher_bytes,
            volume_size: size(&file.volume_size, "volume_size", DEFAULT_E2B_VOLUME_SIZE)?,
        })
    }
}

/// `raw` as a DNS name of at least two labels, lower case, without a trailing dot; or why not.
pub(crate) fn dns_name(field: &str, raw: &str) -> Result<String, ConfigError> {
    let domain = raw.trim().trim_end_matches('.').to_ascii_lowercase();
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if domain.len() > MAX_DOMAIN_LEN || !domain.contains('.') || !domain.split('.').all(label_ok) {
        return Err(invalid(
            field,
            format!("\"{domain}\" is not a DNS name with at least two labels, e.g. \"sandboxd.example.com\" (no scheme, port or path)"),
        ));
    }
    Ok(domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(domain: &str) -> Result<E2bSettings, ConfigError> {
        E2bSettings::resolve(
            &E2bFile {
                domain: Some(domain.into()),
                ..E2bFile::default()
            },
            &BTreeMap::new(),
        )
    }

    #[test]
    fn a_domain_is_normalised_and_anything_else_refused() {
        assert_eq!(
            resolve("Sandboxd.Example.com.").unwrap().domain.as_deref(),
            Some("sandboxd.example.com")
        );
        for bad in [
            "localhost",
            "https://x.example",
            "x.example:443",
            "a..b",
            "-a.b",
            "",
        ] {
            assert!(resolve(bad).is_err(), "{bad} was accepted");
        }
    }
}
