//! Tenants: agents or teams that each get their own token, the runtimes they may use and a
//! session quota. The config holds only a SHA-256 of each token, never the token itself.

use crate::error::invalid;
use crate::error::ConfigError;
use sandboxd_api::{RuntimeInfo, TenantInfo};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TenantFile {
    token_sha256: String,
    runtimes: Option<Vec<String>>,
    max_sessions: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct Tenant {
    pub name: String,
    pub token_sha256: [u8; 32],
    /// The runtimes this tenant may open; all of them when the config names none.
    pub runtimes: Option<Vec<String>>,
    pub max_sessions: u32,
}

impl Tenant {
    pub fn may_use(&self, runtime: &str) -> bool {
        self.runtimes
            .as_ref()
            .is_none_or(|allowed| allowed.iter().any(|r| r == runtime))
    }

    pub fn info(&self, all_runtimes: &BTreeMap<String, RuntimeInfo>) -> TenantInfo {
        TenantInfo {
            name: self.name.clone(),
            runtimes: all_runtimes
                .keys()
                .filter(|r| self.may_use(r))
                .cloned()
                .collect(),
            max_sessions: self.max_sessions,
        }
    }
}

/// The SHA-256 of a token, as the config stores it.
pub fn token_sha256(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

pub(crate) fn resolve(
    files: &BTreeMap<String, TenantFile>,
    runtimes: &BTreeMap<String, RuntimeInfo>,
    max_sessions: u32,
) -> Result<BTreeMap<String, Tenant>, ConfigError> {
    let mut tenants = BTreeMap::new();
    for (name, file) in files {
        let field = format!("tenants.{name}");
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        {
            return Err(invalid(
                &field,
                "a tenant name may only hold letters, digits, '-', '_' and '.'",
            ));
        }
        let token_sha256 = from_hex(&file.token_sha256.to_ascii_lowercase()).ok_or_else(|| {
            invalid(
                format!("{field}.token_sha256"),
                format!("must be the 64 hex digits that `sandboxd token --tenant {name}` prints"),
            )
        })?;
        if let Some(other) = tenants
            .values()
            .find(|t: &&Tenant| t.token_sha256 == token_sha256)
        {
            return Err(invalid(
                format!("{field}.token_sha256"),
                format!(
                    "the same token as tenant \"{}\"; give each tenant its own",
                    other.name
                ),
            ));
        }
        if let Some(unknown) = file
            .runtimes
            .iter()
            .flatten()
            .find(|r| !runtimes.contains_key(*r))
        {
            return Err(invalid(
                format!("{field}.runtimes"),
                format!(
                    "\"{unknown}\" is not one of the configured runtimes ({})",
                    runtimes.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let quota = file.max_sessions.unwrap_or(max_sessions);
        if quota == 0 {
            return Err(invalid(
                format!("{field}.max_sessions"),
                "must be at least 1",
            ));
        }
        tenants.insert(
            name.clone(),
            Tenant {
                name: name.clone(),
                token_sha256,
                runtimes: file.runtimes.clone(),
                max_sessions: quota,
            },
        );
    }
    Ok(tenants)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let hash = token_sha256("a token of sixteen+ chars");
        assert_eq!(from_hex(&to_hex(&hash)), Some(hash));
        assert_eq!(from_hex("zz"), None);
        assert_eq!(from_hex(&"g".repeat(64)), None);
    }
}
