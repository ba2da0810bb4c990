//! The service's agent key and the per-sandbox secrets derived from it, and the claim with
//! which the service opens a connection to a listening agent.
//!
//! Each sandbox's secret is derived, not stored: HMAC-SHA256 under one service key (a 0600
//! file in a directory private to the service) of the session id. A restarted service
//! recomputes the secret of every sandbox it adopts.

use super::framing::{read_frame_limited, write_json};
use crate::error::ProtoError;
use crate::message::{Event, Request};
use crate::secret::{AgentSecret, AGENT_SECRET_LEN};
use rand::Rng;
use sha2::{Digest, Sha256};
use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use tokio::io::{AsyncRead, AsyncWrite};

/// The service key's file in the directory; its leading dot keeps it apart from the
/// per-sandbox entries beside it, which are named by session id (hex).
const KEY_FILE: &str = ".agent-key";
const KEY_LEN: usize = 32;
/// Separates this use of the key from any later one.
const SECRET_CONTEXT: &[u8] = b"sandboxd agent secret\0";

/// The key the sandboxes' secrets are derived from, read from `dir` or created
/// there (0600, so only the service's user reads it).
pub struct AgentKey([u8; KEY_LEN]);

impl AgentKey {
    pub fn load_or_create(dir: &Path) -> io::Result<AgentKey> {
        let path = dir.join(KEY_FILE);
        let created = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        let key: [u8; KEY_LEN] = match created {
            Ok(mut file) => {
                let key: [u8; KEY_LEN] = rand::rng().random();
                file.write_all(&key)?;
                file.sync_all()?;
                key
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                fs::set_permissions(&path, Permissions::from_mode(0o600))?;
                // One byte more than a key, to refuse a longer file.
                let mut read = Vec::with_capacity(KEY_LEN + 1);
                fs::File::open(&path)?
                    .take(KEY_LEN as u64 + 1)
                    .read_to_end(&mut read)?;
                read.try_into().map_err(|_| {
                    io::Error::new(
                        ErrorKind::InvalidData,
                        format!("{} is not a {KEY_LEN}-byte key", path.display()),
                    )
                })?
            }
            Err(e) => return Err(e),
        };
        Ok(AgentKey(key))
    }

    /// The secret of one session's agent.
    pub fn secret_for(&self, session_id: &str) -> AgentSecret {
        let message = [SECRET_CONTEXT, session_id.as_bytes()].concat();
        AgentSecret::from_bytes(&hmac_sha256(&self.0, &message))
    }
}

/// HMAC-SHA256 (RFC 2104) for keys no longer than SHA-256's 64-byte block.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; AGENT_SECRET_LEN] {
    const BLOCK: usize = 64;
    let mut padded = [0u8; BLOCK];
    padded[..key.len()].copy_from_slice(key);
    let pad = |byte: u8| padded.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// The largest hello a listening agent sends: a few numbers.
const MAX_HELLO_LEN: usize = 1024;

/// Claims a connection to a listening agent with the sandbox's `secret` (see
/// [`Request::Claim`]); once this returns the connection takes requests.
pub async fn claim<S: AsyncRead + AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    secret: &AgentSecret,
) -> Result<(), ProtoError> {
    let request = Request::Claim {
        secret: secret.clone(),
    };
    write_json(stream, &request).await?;
    match read_frame_limited(stream, MAX_HELLO_LEN)
        .await?
        .parse_json::<Event>()?
    {
        Event::Hello { .. } => Ok(()),
        other => Err(ProtoError::Unexpected(format!("{other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().mode() & 0o7777
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 1 of RFC 4231.
        let mac = hmac_sha256(&[0x0b; 20], b"Hi There");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
    }

    #[test]
    fn the_key_is_private_and_kept_and_secrets_differ_per_session() {
        let root = tempfile::tempdir().unwrap();
        let key = AgentKey::load_or_create(root.path()).unwrap();
        let key_file = root.path().join(KEY_FILE);
        assert_eq!(mode(&key_file), 0o600);
        let a = key.secret_for("aaaa");
        assert_ne!(a, key.secret_for("aaab"));
        // Loosened meanwhile: read back the same and tightened again.
        fs::set_permissions(&key_file, Permissions::from_mode(0o644)).unwrap();
        let again = AgentKey::load_or_create(root.path()).unwrap();
        assert_eq!(again.secret_for("aaaa"), a);
        assert_eq!(mode(&key_file), 0o600);
        // Another service's key derives other secrets.
        let other = tempfile::tempdir().unwrap();
        let other_key = AgentKey::load_or_create(other.path()).unwrap();
        assert_ne!(other_key.secret_for("aaaa"), a);

        fs::write(&key_file, b"short").unwrap();
        let error = AgentKey::load_or_create(root.path()).err().unwrap();
        assert_eq!(error.kind(), ErrorKind::InvalidData);
    }
}
