//! The per-sandbox secret an agent proves itself with, and the file it is read from.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The file beside the agent socket from which the agent reads its [`AgentSecret`] at start.
/// The service removes it once the agent has said hello, before anything else runs in the
/// sandbox, so no sandbox process can read it.
pub const AGENT_SECRET_FILE: &str = "agent-secret";
/// The secret's length in bytes: 32 bytes, written as 64 hex digits.
pub const AGENT_SECRET_LEN: usize = 32;

/// The per-sandbox secret an agent proves itself with: [`AGENT_SECRET_LEN`] bytes as lowercase
/// hex. Its `Debug` form never shows it, so it cannot reach a log through an event.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentSecret(String);

impl AgentSecret {
    /// The secret for `bytes`.
    pub fn from_bytes(bytes: &[u8; AGENT_SECRET_LEN]) -> AgentSecret {
        AgentSecret(hex(bytes))
    }

    /// Reads the secret as the agent's secret file holds it (surrounding whitespace ignored);
    /// `None` unless it is exactly [`AGENT_SECRET_LEN`] bytes of lowercase hex.
    pub fn parse(text: &str) -> Option<AgentSecret> {
        let text = text.trim();
        let well_formed = text.len() == 2 * AGENT_SECRET_LEN
            && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        well_formed.then(|| AgentSecret(text.to_string()))
    }

    /// The hex form, as the secret file holds it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The SHA-256 of the hex form, in hex: what an agent reachable by others than the service
    /// is told at start (`--claim-digest`), so that it accepts only this secret's claims
    /// without the secret itself being written where others read it (a pod's spec).
    pub fn digest(&self) -> String {
        hex(&Sha256::digest(self.0.as_bytes()))
    }
}

/// Lowercase hex, two digits a byte.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl std::fmt::Debug for AgentSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentSecret(<redacted>)")
    }
}

/// Compares in time independent of where the secrets differ, so a dialer cannot learn the
/// secret byte by byte from how fast it is refused. Hand-written rather than `subtle` because
/// the agent links std and libc only; `black_box` keeps the compiler from adding an early exit.
impl PartialEq for AgentSecret {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        let difference = a
            .iter()
            .zip(b)
            .fold(0u8, |acc, (x, y)| std::hint::black_box(acc | (x ^ y)));
        a.len() == b.len() && difference == 0
    }
}

impl Eq for AgentSecret {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_parse_strictly_and_compare_by_value() {
        let text = format!("  {}\n", "0f".repeat(AGENT_SECRET_LEN));
        let secret = AgentSecret::parse(&text).unwrap();
        assert_eq!(secret, AgentSecret::from_bytes(&[0x0f; AGENT_SECRET_LEN]));
        assert_ne!(secret, AgentSecret::from_bytes(&[0x0e; AGENT_SECRET_LEN]));
        assert_ne!(secret, AgentSecret("0f".repeat(AGENT_SECRET_LEN - 1)));
        for bad in [
            "",
            "0f",
            &"0F".repeat(AGENT_SECRET_LEN),
            &"zz".repeat(AGENT_SECRET_LEN),
        ] {
            assert!(AgentSecret::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_digest_is_the_sha256_of_the_hex_form() {
        let secret = AgentSecret::from_bytes(&[0; AGENT_SECRET_LEN]);
        // sha256 of 64 ASCII zeros.
        assert_eq!(
            secret.digest(),
            "60e05bd1b195af2f94112fa7197a5c88289058840ce7c6df9693756bc6250f55"
        );
    }
}
