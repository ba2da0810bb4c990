//! The HTTP client the deliveries go through: HTTP/1 over TCP, or TLS (ring, the host's roots
//! and the webhook's own CA file) verified as any client verifies a server.

use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use std::sync::Arc;

pub(crate) type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A client trusting the host's roots and the certificates of `extra_roots_pem`.
pub(crate) fn new_client(extra_roots_pem: Option<&[u8]>) -> Result<HttpClient, String> {
    let mut roots = rustls::RootCertStore::empty();
    // A host without a bundle still reaches receivers over HTTP or through its own CA file.
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(pem) = extra_roots_pem {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
            .filter_map(Result::ok)
            .collect();
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err("its ca_file holds no certificate rustls can use".into());
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}
