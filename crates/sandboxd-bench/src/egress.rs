//! The egress row: an HTTPS request (connect, TLS handshake, GET, answer read) through the
//! egress proxy's `CONNECT` against the same request made directly, p50 of each. The host is
//! the egress tests' own: a server in a network namespace with a veth pair and a test CA, a
//! DNS server on loopback; nothing leaves the machine. Needs root; skipped otherwise.

// What testnet notes its namespaces in (a no-op unless SANDBOXD_TEST_LEDGER is set).
#[path = "../../sandboxd-egress/tests/support/ledger.rs"]
mod ledger;
#[path = "../../sandboxd-egress/tests/support/testnet.rs"]
mod testnet;

use crate::report::{time, Sample};
use anyhow::{bail, Context, Result};
use sandboxd_egress::{ConnectionRecord, Egress, Policy, SessionRules, Settings};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use testnet::{dns_server, serve_hello, test_ca, TestNet};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HOST: &str = "allowed.test";

/// Every loopback client is one session allowed [`HOST`]; entries are dropped.
struct BenchSession(Arc<[sandboxd_api::EgressRule]>);

#[async_trait::async_trait]
impl Policy for BenchSession {
    async fn session(&self, peer: IpAddr) -> Option<SessionRules> {
        peer.is_loopback().then(|| SessionRules {
            session_id: "bench".into(),
            rules: self.0.clone(),
            secrets: Arc::new([]),
        })
    }
    fn record(&self, _: ConnectionRecord) {}
}

pub(crate) async fn run(iterations: usize) -> Result<()> {
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        println!("egress: skipped (the test host's network namespace needs root)");
        return Ok(());
    }
    let net = TestNet::create();
    let ca = test_ca();
    let listener = tokio::net::TcpListener::from_std(net.bind(443))?;
    serve_hello(listener, Some(ca.server_config(HOST)));
    let dns = dns_server(HashMap::from([(HOST.to_string(), net.ns_ip)])).await;
    let rules: Arc<[sandboxd_api::EgressRule]> = [HOST.parse().map_err(anyhow::Error::msg)?].into();
    let egress = Egress::new(Settings::new(vec![dns]), Arc::new(BenchSession(rules)))?;
    let proxy_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let proxy = proxy_listener.local_addr()?;
    tokio::spawn(async move { egress.serve_proxy(proxy_listener).await });

    let mut roots = rustls::RootCertStore::empty();
    let pem = ca.pem.clone();
    let der = pem_to_der(&pem)?;
    roots.add(der)?;
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let direct_to = SocketAddr::from((net.ns_ip, 443));

    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    for _ in 0..iterations {
        time(&mut direct, async {
            let stream = TcpStream::connect(direct_to).await?;
            get(&connector, stream).await
        })
        .await?;
        time(&mut proxied, async {
            let stream = connect_through(proxy).await?;
            get(&connector, stream).await
        })
        .await?;
    }
    let (direct, proxied) = (Sample(direct), Sample(proxied));
    println!(
        "egress: HTTPS request p50 through the proxy {} vs direct {} ({:.2}x; p99 {} vs {})",
        crate::report::ms(proxied.p50()),
        crate::report::ms(direct.p50()),
        proxied.p50().as_secs_f64() / direct.p50().as_secs_f64().max(1e-9),
        crate::report::ms(proxied.p99()),
        crate::report::ms(direct.p99()),
    );
    drop(net);
    Ok(())
}

/// A tunnel to [`HOST`]:443 through the proxy, its `200` read.
async fn connect_through(proxy: SocketAddr) -> Result<TcpStream> {
    let mut stream = TcpStream::connect(proxy).await?;
    stream
        .write_all(format!("CONNECT {HOST}:443 HTTP/1.1\r\nHost: {HOST}:443\r\n\r\n").as_bytes())
        .await?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await? == 0 || head.len() > 4096 {
            bail!("the proxy closed the tunnel request");
        }
        head.push(byte[0]);
    }
    if !head.starts_with(b"HTTP/1.1 200") {
        bail!("the proxy refused: {}", String::from_utf8_lossy(&head));
    }
    Ok(stream)
}

/// TLS to [`HOST`] over `stream`, then `GET /` with its answer read whole.
async fn get(connector: &tokio_rustls::TlsConnector, stream: TcpStream) -> Result<()> {
    let name = rustls::pki_types::ServerName::try_from(HOST)?;
    let mut tls = connector.connect(name, stream).await?;
    tls.write_all(
        format!("GET / HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await?;
    let mut answer = Vec::new();
    // The test server closes without close_notify at times: what was read is what counts.
    let _ = tls.read_to_end(&mut answer).await;
    if !answer.starts_with(b"HTTP/1.1 200") {
        bail!("unexpected answer: {}", String::from_utf8_lossy(&answer));
    }
    Ok(())
}

fn pem_to_der(pem: &str) -> Result<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).context("the test CA's PEM")
}
