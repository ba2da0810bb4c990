//! Test hosts of the tests' own: a network namespace joined to the host by a veth pair, and a
//! DNS server on loopback that says what the test wants. Nothing leaves the machine.
//! Needs root (namespaces, links) and `ip`.
//!
//! The pair's addresses are public ones ([`TEST_HOSTS`]): the proxy reaches no special-purpose
//! address (documentation ranges included), so a test host cannot have one. They are routed
//! to the pair only: its /30 is more specific than any route the host has.

#![allow(dead_code)]

// The includer's ledger (support/ledger.rs, which sandboxd's tests share through their harness).
use super::ledger;

use hickory_proto::op::{Message, MessageType, Metadata, OpCode, ResponseCode};
use hickory_proto::rr::rdata::A;
use hickory_proto::rr::{RData, Record, RecordType};
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// The prefix of every namespace these tests make, so a crashed run's are found and removed.
pub const PREFIX: &str = "sbxeg";

/// The /24 the pairs' /30s are taken from: public space just past the shared (CGNAT) range.
pub const TEST_HOSTS: [u8; 3] = [100, 128, 0];

pub struct TestNet {
    pub name: String,
    /// The host's end of the pair: an address of the host itself.
    pub host_ip: Ipv4Addr,
    /// The namespace's end, where the test's servers listen.
    pub ns_ip: Ipv4Addr,
}

fn ip(args: &[&str]) {
    let output = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        output.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

impl TestNet {
    pub fn create() -> TestNet {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let name = format!("{PREFIX}{}-{n}", pid % 100_000);
        // A /30 per namespace, picked from the process id so parallel runs rarely meet.
        let block = ((pid * 7 + n) % 63) as u8 * 4;
        let [a, b, c] = TEST_HOSTS;
        let host_ip = Ipv4Addr::new(a, b, c, block + 1);
        let ns_ip = Ipv4Addr::new(a, b, c, block + 2);
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        ip(&["netns", "add", &name]);
        ledger::record_made("netns", &name);
        let net = TestNet {
            name: name.clone(),
            host_ip,
            ns_ip,
        };
        let (host_end, ns_end) = (format!("{name}h"), format!("{name}n"));
        ip(&[
            "link", "add", &host_end, "type", "veth", "peer", "name", &ns_end, "netns", &name,
        ]);
        ip(&["addr", "add", &format!("{host_ip}/30"), "dev", &host_end]);
        ip(&["link", "set", &host_end, "up"]);
        ip(&[
            "-n",
            &name,
            "addr",
            "add",
            &format!("{ns_ip}/30"),
            "dev",
            &ns_end,
        ]);
        ip(&["-n", &name, "link", "set", &ns_end, "up"]);
        ip(&["-n", &name, "link", "set", "lo", "up"]);
        net
    }

    /// A listener inside the namespace: bound by a thread that entered it (a socket stays in
    /// the namespace it was made in).
    pub fn bind(&self, port: u16) -> std::net::TcpListener {
        let path = format!("/var/run/netns/{}", self.name);
        let address = SocketAddr::from((self.ns_ip, port));
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).expect("open the namespace");
            // SAFETY: setns on this thread only, with a descriptor of a network namespace.
            let entered = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(entered, 0, "setns: {}", std::io::Error::last_os_error());
            let listener = std::net::TcpListener::bind(address).expect("bind in the namespace");
            listener.set_nonblocking(true).unwrap();
            listener
        })
        .join()
        .expect("bind thread")
    }
}

impl Drop for TestNet {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the pair, and with it the host's.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// A DNS server on loopback answering A queries from a fixed table; anything else: NXDOMAIN.
pub async fn dns_server(table: HashMap<String, Ipv4Addr>) -> SocketAddr {
    dns_server_silent_under(table, None).await
}

/// As [`dns_server`], never answering for names under `silent` (an upstream down for a zone).
pub async fn dns_server_silent_under(
    table: HashMap<String, Ipv4Addr>,
    silent: Option<&'static str>,
) -> SocketAddr {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let address = socket.local_addr().unwrap();
    let table = Arc::new(table);
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 1500];
        loop {
            let Ok((n, peer)) = socket.recv_from(&mut buffer).await else {
                return;
            };
            let Ok(request) = Message::from_vec(&buffer[..n]) else {
                continue;
            };
            let under_silent = |query: &hickory_proto::op::Query| {
                let name = query.name().to_ascii();
                silent.is_some_and(|zone| name.trim_end_matches('.').ends_with(zone))
            };
            if request.queries.iter().any(under_silent) {
                continue;
            }
            let mut response =
                Message::new(request.metadata.id, MessageType::Response, OpCode::Query);
            response.metadata = Metadata::response_from_request(&request.metadata);
            response.metadata.authoritative = true;
            let mut code = ResponseCode::NXDomain;
            for query in &request.queries {
                response.add_query(query.clone());
                let name = query.name().to_ascii();
                if let Some(address) = table.get(name.trim_end_matches('.')) {
                    code = ResponseCode::NoError;
                    if query.query_type() == RecordType::A {
                        response.add_answer(Record::from_rdata(
                            query.name().clone(),
                            5,
                            RData::A(A(*address)),
                        ));
                    }
                }
            }
            response.metadata.response_code = code;
            let _ = socket.send_to(&response.to_vec().unwrap(), peer).await;
        }
    });
    address
}

/// Asks `server` for `name`'s A records: the response code and the addresses.
pub async fn ask(server: SocketAddr, name: &str) -> (ResponseCode, Vec<Ipv4Addr>) {
    ask_from(Ipv4Addr::LOCALHOST, server, name).await
}

/// As [`ask`], from an address of the test's choice (another loopback one: another sandbox).
pub async fn ask_from(
    source: Ipv4Addr,
    server: SocketAddr,
    name: &str,
) -> (ResponseCode, Vec<Ipv4Addr>) {
    let socket = tokio::net::UdpSocket::bind((source, 0)).await.unwrap();
    socket.send_to(&a_query(name, 0), server).await.unwrap();
    let mut buffer = vec![0u8; 1500];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), socket.recv(&mut buffer))
        .await
        .expect("a DNS answer")
        .unwrap();
    answer_of(&buffer[..n])
}

/// A query for `name`'s A records, with this id.
pub fn a_query(name: &str, id: u16) -> Vec<u8> {
    use hickory_proto::op::Query;
    use hickory_proto::rr::Name;
    let mut query = Message::query();
    query.metadata.id = id;
    query.metadata.recursion_desired = true;
    query.add_query(Query::query(
        Name::from_ascii(format!("{name}.")).unwrap(),
        RecordType::A,
    ));
    query.to_vec().unwrap()
}

/// An answer's response code and addresses.
pub fn answer_of(bytes: &[u8]) -> (ResponseCode, Vec<Ipv4Addr>) {
    let answer = Message::from_vec(bytes).unwrap();
    let addresses = answer
        .answers
        .iter()
        .filter_map(|r| match &r.data {
            RData::A(a) => Some(a.0),
            _ => None,
        })
        .collect();
    (answer.metadata.response_code, addresses)
}

pub struct TestCa {
    pub pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

pub fn test_ca() -> TestCa {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "sandboxd egress test CA");
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    TestCa {
        pem: cert.pem(),
        issuer: rcgen::Issuer::new(params, key),
    }
}

impl TestCa {
    pub fn server_config(&self, name: &str) -> Arc<rustls::ServerConfig> {
        self.server_config_for(&[name])
    }

    /// A server's TLS settings with one certificate for all of `names`.
    pub fn server_config_for(&self, names: &[&str]) -> Arc<rustls::ServerConfig> {
        let key = rcgen::KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let cert = rcgen::CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &self.issuer)
            .unwrap();
        let key = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key)
        .unwrap();
        Arc::new(config)
    }
}

/// Answers every request with `hello <Host>` (over TLS when given a config).
pub fn serve_hello(listener: tokio::net::TcpListener, tls: Option<Arc<rustls::ServerConfig>>) {
    serve_recording(listener, tls);
}

/// The headers of every request a test server was sent, in order.
pub type Received = Arc<std::sync::Mutex<Vec<http::HeaderMap>>>;

/// As [`serve_hello`], keeping each request's headers (never echoing them).
pub fn serve_recording(
    listener: tokio::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Received {
    let received = Received::default();
    let kept = received.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (tls, kept) = (tls.clone(), kept.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        kept.lock().unwrap().push(request.headers().clone());
                        async move {
                            let host = request
                                .headers()
                                .get("host")
                                .and_then(|h| h.to_str().ok())
                                .unwrap_or("")
                                .to_string();
                            Ok::<_, std::convert::Infallible>(http::Response::new(
                                http_body_util::Full::new(bytes::Bytes::from(format!(
                                    "hello {host}"
                                ))),
                            ))
                        }
                    },
                );
                let builder = hyper::server::conn::http1::Builder::new();
                match tls {
                    Some(config) => {
                        if let Ok(stream) =
                            tokio_rustls::TlsAcceptor::from(config).accept(stream).await
                        {
                            let _ = builder
                                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                                .await;
                        }
                    }
                    None => {
                        let _ = builder
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                            .await;
                    }
                }
            });
        }
    });
    received
}
