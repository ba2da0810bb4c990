//! The service's own CA, for the hosts of secrets only: the proxy ends the sandbox's TLS with
//! a certificate for the host signed by it, and opens its own TLS to the host, verified
//! against the host's roots (and any configured extra CA).
//!
//! The CA is made at the first start and kept in a directory of the service's state: its
//! certificate (`ca.pem`) and key (`ca-key.pem`, 0600), reused after a restart. Only the
//! certificate ever goes to a sandbox.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CA_FILE: &str = "ca.pem";
const CA_KEY_FILE: &str = "ca-key.pem";
const CA_NAME: &str = "sandboxd egress CA";
/// Where the host keeps its roots, the first that exists.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];
/// Host certificates kept at most, and how long one is used before it is made anew.
const MAX_LEAVES: usize = 1024;
const LEAF_REUSE: Duration = Duration::from_secs(24 * 3600);

#[derive(Debug, thiserror::Error)]
pub enum CaError {
    #[error("cannot keep the egress CA in {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the egress CA in {path} cannot be used ({why}); remove the directory to make a new one"
    )]
    Invalid { path: PathBuf, why: String },
    #[error("the egress proxy's TLS settings: {0}")]
    Tls(#[from] rustls::Error),
}

/// The CA, the certificates made with it, and the TLS settings towards the hosts.
pub struct Interception {
    ca_pem: String,
    issuer: Issuer<'static, KeyPair>,
    leaf_key: KeyPair,
    leaves: Mutex<HashMap<String, (Instant, Arc<rustls::ServerConfig>)>>,
    upstream: Arc<rustls::ClientConfig>,
    /// The host's roots and the extra CAs, for the sandboxes' bundle.
    roots_pem: Vec<u8>,
}

impl std::fmt::Debug for Interception {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Interception { .. }")
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("no names");
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.distinguished_name.push(DnType::CommonName, CA_NAME);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

impl Interception {
    /// The CA in `dir` (made there if there is none), and the roots the proxy trusts towards
    /// the hosts: the host's bundle plus `extra_roots_pem`.
    pub fn load_or_create(dir: &Path, extra_roots_pem: &[u8]) -> Result<Interception, CaError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CaError::Io { path, source }
        };
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)))
            .map_err(io(dir))?;
        let (cert_path, key_path) = (dir.join(CA_FILE), dir.join(CA_KEY_FILE));
        let invalid = |why: String| CaError::Invalid {
            path: dir.to_path_buf(),
            why,
        };
        let (ca_pem, key) = if key_path.exists() {
            let key_pem = std::fs::read_to_string(&key_path).map_err(io(&key_path))?;
            let ca_pem = std::fs::read_to_string(&cert_path).map_err(io(&cert_path))?;
            let key = KeyPair::from_pem(&key_pem).map_err(|e| invalid(e.to_string()))?;
            (ca_pem, key)
        } else {
            let key = KeyPair::generate().map_err(|e| invalid(e.to_string()))?;
            let mut params = ca_params();
            let now = time::OffsetDateTime::now_utc();
            params.not_before = now - time::Duration::days(1);
            params.not_after = now + time::Duration::days(3650);
            let cert = params
                .self_signed(&key)
                .map_err(|e| invalid(e.to_string()))?;
            // The key first, private from its first byte; the certificate says it is done.
            write_new(&key_path, key.serialize_pem().as_bytes(), 0o600).map_err(io(&key_path))?;
            write_new(&cert_path, cert.pem().as_bytes(), 0o644).map_err(io(&cert_path))?;
            (cert.pem(), key)
        };
        // The issuer needs the CA's name, key usages and key, all rebuilt the same way.
        let issuer = Issuer::new(ca_params(), key);
        let mut roots_pem = SYSTEM_BUNDLES
            .iter()
            .find_map(|path| std::fs::read(path).ok())
            .unwrap_or_default();
        if !roots_pem.is_empty() && !roots_pem.ends_with(b"\n") {
            roots_pem.push(b'\n');
        }
        roots_pem.extend_from_slice(extra_roots_pem);
        let mut roots = rustls::RootCertStore::empty();
        roots.add_parsable_certificates(
            CertificateDer::pem_slice_iter(&roots_pem).filter_map(Result::ok),
        );
        let mut upstream = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        upstream.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Interception {
            ca_pem,
            issuer,
            leaf_key: KeyPair::generate().map_err(|e| invalid(e.to_string()))?,
            leaves: Mutex::default(),
            upstream: Arc::new(upstream),
            roots_pem,
        })
    }

    /// The CA's certificate (PEM), what a sandbox trusts.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The bundle a sandbox with secrets trusts: the host's roots, the extra CAs and the
    /// service's CA (so hosts passed through verify as before, and intercepted ones too).
    pub fn sandbox_bundle(&self) -> Vec<u8> {
        let mut bundle = self.roots_pem.clone();
        bundle.extend_from_slice(self.ca_pem.as_bytes());
        bundle
    }

    pub(crate) fn upstream(&self) -> Arc<rustls::ClientConfig> {
        self.upstream.clone()
    }

    /// The TLS settings that answer as `host`, with a certificate the CA signed for it.
    pub(crate) fn server_config(&self, host: &str) -> Result<Arc<rustls::ServerConfig>, CaError> {
        let mut leaves = self.leaves.lock().expect("leaf cache lock");
        if let Some((made, config)) = leaves.get(host) {
            if made.elapsed() < LEAF_REUSE {
                return Ok(config.clone());
            }
        }
        let invalid = |why: String| CaError::Invalid {
            path: PathBuf::from(CA_FILE),
            why,
        };
        let mut params =
            CertificateParams::new(vec![host.to_string()]).map_err(|e| invalid(e.to_string()))?;
        params.distinguished_name.push(DnType::CommonName, host);
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::hours(1);
        params.not_after = now + time::Duration::days(7);
        let cert = params
            .signed_by(&self.leaf_key, &self.issuer)
            .map_err(|e| invalid(e.to_string()))?;
        let key = PrivateKeyDer::try_from(self.leaf_key.serialize_der())
            .map_err(|e| invalid(e.to_string()))?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        if leaves.len() >= MAX_LEAVES {
            leaves.retain(|_, (made, _)| made.elapsed() < LEAF_REUSE);
            if leaves.len() >= MAX_LEAVES {
                leaves.clear();
            }
        }
        leaves.insert(host.to_string(), (Instant::now(), config.clone()));
        Ok(config)
    }
}

fn write_new(path: &Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_is_kept_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = Interception::load_or_create(dir.path(), b"").unwrap();
        let mode = std::fs::metadata(dir.path().join(CA_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(!first
            .sandbox_bundle()
            .windows(11)
            .any(|w| w == b"PRIVATE KEY"));
        let again = Interception::load_or_create(dir.path(), b"").unwrap();
        assert_eq!(first.ca_pem(), again.ca_pem());
        // A leaf made after the restart is signed by the same CA: a client trusting the
        // certificate kept accepts it.
        let leaf = again.server_config("api.test").unwrap();
        assert!(Arc::ptr_eq(
            &leaf,
            &again.server_config("api.test").unwrap()
        ));
    }
}
