//! The proxy against test hosts of our own (a network namespace with a veth pair, a DNS
//! server on loopback, TLS with a test CA), with curl as the client. Needs root.

mod support;

use hickory_proto::op::ResponseCode;
use sandboxd_egress::{
    ConnectionRecord, Door, Egress, Interception, Policy, Refusal, SecretRecord, SessionRules,
    SessionSecret, Settings,
};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Command;
use std::sync::{Arc, Mutex};
use support::testnet::{ask, dns_server, serve_hello, serve_recording, test_ca, Received, TestNet};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Every connection from loopback is session "s1" with these rules, and the secret `api`
/// (its value [`SECRET_VALUE`], its placeholder [`PLACEHOLDER`]) for `secret.test:8443`.
struct OneSession {
    rules: Mutex<Arc<[sandboxd_api::EgressRule]>>,
    secrets: Arc<[SessionSecret]>,
    records: Mutex<Vec<ConnectionRecord>>,
    secret_records: Mutex<Vec<SecretRecord>>,
}

const SECRET_VALUE: &str = "real-value-of-api";
const PLACEHOLDER: &str = "placeholder-of-api";

fn secrets() -> Arc<[SessionSecret]> {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), SECRET_VALUE).unwrap();
    let config = sandboxd_config::Config::parse(&format!(
        "[runtimes.t]\nimage = \"t\"\nnetwork_mode = \"egress\"\negress = [\"secret.test:8443\"]\nsecrets = [\"api\"]\n\
         [secrets.api]\nvalue_file = {:?}\nhosts = [\"secret.test:8443\"]\nenv = \"API_KEY\"\n",
        file.path()
    ))
    .unwrap();
    let secret = config.secrets.for_runtime("t")[0].clone();
    Arc::new([SessionSecret {
        secret,
        placeholder: PLACEHOLDER.into(),
    }])
}

#[async_trait::async_trait]
impl Policy for OneSession {
    async fn session(&self, peer: IpAddr) -> Option<SessionRules> {
        peer.is_loopback().then(|| SessionRules {
            session_id: "s1".into(),
            rules: self.rules.lock().unwrap().clone(),
            secrets: self.secrets.clone(),
        })
    }
    fn record(&self, record: ConnectionRecord) {
        self.records.lock().unwrap().push(record);
    }
    fn record_secret(&self, record: SecretRecord) {
        self.secret_records.lock().unwrap().push(record);
    }
}

impl OneSession {
    /// The latest record of `door` for `host`, waiting for it a little: a tunnel is recorded
    /// when it closes, just after the client is done.
    async fn wait_for(&self, host: &str, door: Door) -> ConnectionRecord {
        for _ in 0..50 {
            let found = self
                .records
                .lock()
                .unwrap()
                .iter()
                .rev()
                .find(|r| r.host == host && r.door == door)
                .cloned();
            if let Some(record) = found {
                return record;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        self.last_for(host)
    }

    fn last_for(&self, host: &str) -> ConnectionRecord {
        let records = self.records.lock().unwrap();
        records
            .iter()
            .rev()
            .find(|r| r.host == host)
            .cloned()
            .unwrap_or_else(|| panic!("no record for {host:?} in {records:#?}"))
    }
}

struct World {
    _net: TestNet,
    ns_ip: Ipv4Addr,
    policy: Arc<OneSession>,
    proxy: SocketAddr,
    http: SocketAddr,
    tls: SocketAddr,
    dns: SocketAddr,
    ca_file: tempfile::NamedTempFile,
    /// What a sandbox with the secret trusts: the test CA and the proxy's own.
    bundle_file: tempfile::NamedTempFile,
    /// What `secret.test:8443` was sent.
    secret_host: Received,
    _ca_dir: tempfile::TempDir,
}

/// Servers in the namespace on ports 80 and 443 answering with the Host they were asked for.
async fn world(rules: &[&str]) -> World {
    let net = TestNet::create();
    let ns_ip = net.ns_ip;
    let ca = test_ca();
    serve_hello(
        tokio::net::TcpListener::from_std(net.bind(80)).unwrap(),
        None,
    );
    serve_hello(
        tokio::net::TcpListener::from_std(net.bind(443)).unwrap(),
        Some(ca.server_config("allowed.test")),
    );
    let secret_host = serve_recording(
        tokio::net::TcpListener::from_std(net.bind(8443)).unwrap(),
        Some(ca.server_config("secret.test")),
    );
    let dns_upstream = dns_server(HashMap::from([
        ("allowed.test".to_string(), ns_ip),
        ("secret.test".to_string(), ns_ip),
        ("other.test".to_string(), ns_ip),
        ("rebind.test".to_string(), Ipv4Addr::LOCALHOST),
        (
            "metadata.test".to_string(),
            Ipv4Addr::new(169, 254, 169, 254),
        ),
        ("private.test".to_string(), Ipv4Addr::new(10, 0, 0, 1)),
        // TEST-NET-1: on some hosts (these tests' own machines) the host's own network.
        (
            "documentation.test".to_string(),
            Ipv4Addr::new(192, 0, 2, 1),
        ),
        ("host.test".to_string(), net.host_ip),
    ]))
    .await;
    let policy = Arc::new(OneSession {
        rules: Mutex::new(rules.iter().map(|r| r.parse().unwrap()).collect()),
        secrets: secrets(),
        records: Mutex::default(),
        secret_records: Mutex::default(),
    });
    let ca_dir = tempfile::tempdir().unwrap();
    let interception = Interception::load_or_create(ca_dir.path(), ca.pem.as_bytes()).unwrap();
    let mut bundle_file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut bundle_file, &interception.sandbox_bundle()).unwrap();
    let mut settings = Settings::new(vec![dns_upstream]);
    settings.interception = Some(Arc::new(interception));
    let egress = Egress::new(settings, policy.clone()).unwrap();
    let bind = || std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (proxy, http, tls) = (bind(), bind(), bind());
    let addresses = (
        proxy.local_addr().unwrap(),
        http.local_addr().unwrap(),
        tls.local_addr().unwrap(),
    );
    for (listener, door) in [(proxy, 0), (http, 1), (tls, 2)] {
        listener.set_nonblocking(true).unwrap();
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let egress = egress.clone();
        tokio::spawn(async move {
            match door {
                0 => egress.serve_proxy(listener).await,
                1 => egress.serve_http(listener).await,
                _ => egress.serve_tls(listener).await,
            }
        });
    }
    let dns_socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let dns = dns_socket.local_addr().unwrap();
    tokio::spawn({
        let egress = egress.clone();
        async move { egress.serve_dns(dns_socket).await }
    });
    let mut ca_file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut ca_file, ca.pem.as_bytes()).unwrap();
    World {
        _net: net,
        ns_ip,
        policy,
        proxy: addresses.0,
        http: addresses.1,
        tls: addresses.2,
        dns,
        ca_file,
        bundle_file,
        secret_host,
        _ca_dir: ca_dir,
    }
}

/// curl's status code and body (`-w` appends the code on its own line).
async fn curl(args: Vec<String>) -> (u16, String) {
    let output = tokio::task::spawn_blocking(move || {
        Command::new("curl")
            .args([
                "-sS",
                "--max-time",
                "20",
                "--noproxy",
                "",
                "-w",
                "\n%{http_code}",
            ])
            .args(&args)
            .env_remove("http_proxy")
            .env_remove("https_proxy")
            .env_remove("HTTPS_PROXY")
            .env_remove("ALL_PROXY")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let (body, code) = stdout.rsplit_once('\n').unwrap_or(("", &stdout));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

fn via_proxy(world: &World, url: &str) -> Vec<String> {
    vec![
        "-x".into(),
        format!("http://{}", world.proxy),
        "--cacert".into(),
        world.ca_file.path().display().to_string(),
        url.into(),
    ]
}

const RULES: &[&str] = &[
    "allowed.test",
    "rebind.test",
    "metadata.test",
    "private.test",
    "documentation.test",
    "host.test",
];

#[tokio::test]
async fn allowed_names_are_reached_over_http_and_https() {
    let world = world(RULES).await;
    let (code, body) = curl(via_proxy(&world, "http://allowed.test/x")).await;
    assert_eq!((code, body.as_str()), (200, "hello allowed.test"));
    let record = world.policy.last_for("allowed.test");
    assert_eq!(
        (record.door, record.port, record.outcome.clone()),
        (Door::Http, 80, Ok(()))
    );
    assert_eq!(record.bytes_received, "hello allowed.test".len() as u64);

    let (code, body) = curl(via_proxy(&world, "https://allowed.test/")).await;
    assert_eq!((code, body.as_str()), (200, "hello allowed.test"));
    let record = world.policy.wait_for("allowed.test", Door::Connect).await;
    assert_eq!((record.port, record.outcome.clone()), (443, Ok(())));
    assert!(
        record.bytes_received > 100,
        "the TLS handshake and answer: {record:?}"
    );

    // Redirected by the firewall: no proxy settings, the address of port 80 or 443 is ours.
    let (code, body) = curl(vec![
        "--connect-to".into(),
        format!("allowed.test:80:{}:{}", world.http.ip(), world.http.port()),
        "http://allowed.test/".into(),
    ])
    .await;
    assert_eq!((code, body.as_str()), (200, "hello allowed.test"));
    let (code, body) = curl(vec![
        "--cacert".into(),
        world.ca_file.path().display().to_string(),
        "--connect-to".into(),
        format!("allowed.test:443:{}:{}", world.tls.ip(), world.tls.port()),
        "https://allowed.test/".into(),
    ])
    .await;
    assert_eq!((code, body.as_str()), (200, "hello allowed.test"));
    let record = world.policy.wait_for("allowed.test", Door::Tls).await;
    assert_eq!(record.outcome, Ok(()));
}

#[tokio::test]
async fn denied_names_addresses_and_rebinding_are_refused_with_the_reason() {
    let world = world(RULES).await;
    let ns = world.ns_ip.to_string();
    for (url, host, says) in [
        (
            "http://other.test/",
            "other.test",
            "not on this sandbox's egress allow-list",
        ),
        (
            "http://allowed.test:8080/",
            "allowed.test",
            "allowed.test:8080 is not on",
        ),
        (
            &format!("http://{ns}/") as &str,
            ns.as_str(),
            "not an address",
        ),
        (
            "http://rebind.test/",
            "rebind.test",
            "127.0.0.1, a loopback address",
        ),
        (
            "http://metadata.test/",
            "metadata.test",
            "169.254.169.254, the cloud metadata address",
        ),
        (
            "http://private.test/",
            "private.test",
            "10.0.0.1, a private address",
        ),
        (
            "http://documentation.test/",
            "documentation.test",
            "192.0.2.1, a documentation address",
        ),
        ("http://host.test/", "host.test", "an address of this host"),
    ] {
        let (code, body) = curl(via_proxy(&world, url)).await;
        assert_eq!(code, 403, "{url}: {body}");
        assert!(
            body.contains("refused by policy") && body.contains(says),
            "{url}: {body}"
        );
        let record = world.policy.last_for(host);
        let refusal = record.outcome.expect_err("refused");
        assert!(
            refusal.by_policy() && refusal.to_string().contains(says),
            "{url}: {refusal}"
        );
    }
    // CONNECT is refused the same way, with the reason in the 403.
    let output = tokio::task::spawn_blocking({
        let proxy = world.proxy;
        move || {
            Command::new("curl")
                .args([
                    "-sS",
                    "-v",
                    "--max-time",
                    "20",
                    "-x",
                    &format!("http://{proxy}"),
                    "https://metadata.test/",
                ])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("403"), "{stderr}");
    assert!(matches!(
        world.policy.last_for("metadata.test").outcome,
        Err(Refusal::DeniedAddress { .. })
    ));
}

#[tokio::test]
async fn other_protocols_are_refused() {
    let world = world(RULES).await;
    for (door, address) in [(Door::Http, world.http), (Door::Tls, world.tls)] {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream
            .write_all(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(15),
            stream.read_to_end(&mut answer),
        )
        .await;
        if door == Door::Tls {
            // A TLS alert: access denied.
            assert_eq!(answer.first(), Some(&0x15), "{answer:?}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let records = world.policy.records.lock().unwrap();
        let refused = records
            .iter()
            .any(|r| r.door == door && matches!(r.outcome, Err(Refusal::NotHttp(_))));
        assert!(refused, "{door:?}: {records:#?}");
    }
    // A TLS connection that names no server is refused as well.
    let (code, _) = curl(vec!["-k".into(), format!("https://{}/", world.tls)]).await;
    assert_eq!(code, 0);
}

#[tokio::test]
async fn only_allowed_names_resolve_for_the_sandbox() {
    let world = world(RULES).await;
    assert_eq!(
        ask(world.dns, "allowed.test").await,
        (ResponseCode::NoError, vec![world.ns_ip])
    );
    assert_eq!(
        ask(world.dns, "ALLOWED.test").await.0,
        ResponseCode::NoError
    );
    assert_eq!(
        ask(world.dns, "other.test").await,
        (ResponseCode::NXDomain, vec![])
    );
    assert_eq!(
        ask(world.dns, "rebind.test").await,
        (ResponseCode::Refused, vec![])
    );
    assert_eq!(
        ask(world.dns, "metadata.test").await,
        (ResponseCode::Refused, vec![])
    );
    assert_eq!(
        ask(world.dns, "documentation.test").await,
        (ResponseCode::Refused, vec![])
    );
    let record = world.policy.last_for("other.test");
    assert_eq!(record.door, Door::Dns);
    assert!(record.outcome.is_err());
}

#[tokio::test]
async fn narrowed_rules_apply_to_the_next_connection() {
    let world = world(RULES).await;
    assert_eq!(curl(via_proxy(&world, "http://allowed.test/")).await.0, 200);
    *world.policy.rules.lock().unwrap() = ["rebind.test".parse().unwrap()].into();
    let (code, body) = curl(via_proxy(&world, "http://allowed.test/")).await;
    assert_eq!(code, 403, "{body}");
}

#[tokio::test]
async fn a_secret_is_put_in_towards_its_host_on_its_port_while_the_list_allows_it() {
    let world = world(&["allowed.test", "secret.test:8443"]).await;
    let call = |url: &str| {
        vec![
            "-x".into(),
            format!("http://{}", world.proxy),
            "--cacert".into(),
            world.bundle_file.path().display().to_string(),
            "-H".into(),
            format!("Authorization: Bearer {PLACEHOLDER}"),
            url.to_string(),
        ]
    };
    let (code, body) = curl(call("https://secret.test:8443/")).await;
    assert_eq!((code, body.as_str()), (200, "hello secret.test:8443"));
    let sent: Vec<String> = world
        .secret_host
        .lock()
        .unwrap()
        .iter()
        .map(|h| h["authorization"].to_str().unwrap().to_string())
        .collect();
    assert_eq!(sent, [format!("Bearer {SECRET_VALUE}")]);
    let record = world.policy.secret_records.lock().unwrap()[0].clone();
    assert_eq!(
        (record.host.as_str(), record.port, record.secret.as_str()),
        ("secret.test", 8443, "api")
    );
    assert!(record.refusal.is_none());

    // Elsewhere: refused, said and recorded, never sent.
    let (code, body) = curl(call("http://allowed.test/")).await;
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("placeholder of secret \"api\""), "{body}");
    let record = world.policy.secret_records.lock().unwrap()[1].clone();
    assert_eq!((record.host.as_str(), record.port), ("allowed.test", 80));
    assert!(matches!(record.refusal, Some(Refusal::Secret { .. })));

    // Once the session's list no longer has the host, its connections are refused.
    *world.policy.rules.lock().unwrap() = ["allowed.test".parse().unwrap()].into();
    let (code, _) = curl(call("https://secret.test:8443/")).await;
    assert_ne!(code, 200);
    assert!(matches!(
        world.policy.last_for("secret.test").outcome,
        Err(Refusal::NotAllowed { port: 8443, .. })
    ));
    assert_eq!(world.secret_host.lock().unwrap().len(), 1);
}
