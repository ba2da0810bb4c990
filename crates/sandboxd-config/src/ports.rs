//! `[ports]`: how share links are named. Without a `share_domain`, a link is a path on the
//! service (`/p/CAPABILITY/`); with one, a host of its own (`https://CAPABILITY.DOMAIN/`),
//! which pages that use absolute paths, cookies or their own storage need. The wildcard name
//! (`*.DOMAIN` in DNS and in a certificate) and TLS are the operator's reverse proxy's, which
//! passes `Host` on.

use crate::e2b::dns_name;
use crate::error::ConfigError;
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct PortsFile {
    share_domain: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct PortsSettings {
    /// Lower case, without a scheme, port or trailing dot.
    pub share_domain: Option<String>,
}

impl PortsSettings {
    pub(crate) fn resolve(file: &PortsFile) -> Result<PortsSettings, ConfigError> {
        let share_domain = file
            .share_domain
            .as_deref()
            .map(|domain| dns_name("ports.share_domain", domain))
            .transpose()?;
        Ok(PortsSettings { share_domain })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_domain_is_a_dns_name() {
        let resolve = |domain: &str| {
            PortsSettings::resolve(&PortsFile {
                share_domain: Some(domain.into()),
            })
        };
        assert_eq!(
            resolve("Preview.Example.com")
                .unwrap()
                .share_domain
                .as_deref(),
            Some("preview.example.com")
        );
        let refused = resolve("https://preview.example.com").unwrap_err();
        assert!(
            refused.to_string().starts_with("ports.share_domain:"),
            "{refused}"
        );
        assert!(PortsSettings::resolve(&PortsFile::default())
            .unwrap()
            .share_domain
            .is_none());
    }
}
