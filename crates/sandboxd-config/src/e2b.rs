//! `[e2b]`: the E2B-compatible API's settings. Without a domain, the E2B SDKs reach the
//! service through `E2B_API_URL` and `E2B_SANDBOX_URL` (one address, sandboxes told apart by
//! a header); with one, also as `api.DOMAIN` and `PORT-SANDBOXID.DOMAIN`, the only form the
//! SDKs' next major version keeps (TLS and the wildcard name are the operator's proxy's).

use crate::{invalid, ConfigError};
use serde::Deserialize;

/// A DNS name's longest length.
const MAX_DOMAIN_LEN: usize = 253;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct E2bFile {
    domain: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct E2bSettings {
    /// Lower case, without a scheme, port or trailing dot.
    pub domain: Option<String>,
}

impl E2bSettings {
    pub(crate) fn resolve(file: &E2bFile) -> Result<E2bSettings, ConfigError> {
        let Some(domain) = &file.domain else {
            return Ok(E2bSettings::default());
        };
        let domain = dns_name("e2b.domain", domain)?;
        Ok(E2bSettings {
            domain: Some(domain),
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
        E2bSettings::resolve(&E2bFile {
            domain: Some(domain.into()),
        })
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
