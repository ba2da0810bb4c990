//! Egress sandboxes against the real engine and test hosts of our own: a network namespace
//! with a veth pair holding HTTP and HTTPS servers (a test CA), and a DNS server on loopback
//! that the service resolves with. Nothing leaves the machine. Needs root (namespaces,
//! iptables).

mod common;

#[path = "../../sandboxd-egress/tests/support/testnet.rs"]
mod testnet;

mod egress_world;

// What testnet notes its namespaces in.
use common::ledger;

use common::{base_config, TestService};
use egress_world::{python_open, World};
use std::collections::HashMap;
use std::net::Ipv4Addr;
use testnet::{dns_server, serve_hello, test_ca, TestNet};

const RULES: &str = r#"["allowed.test", "rebind.test", "metadata.test", "host.test"]"#;

async fn world() -> World {
    let net = TestNet::create();
    let ca = test_ca();
    serve_hello(
        tokio::net::TcpListener::from_std(net.bind(80)).unwrap(),
        None,
    );
    serve_hello(
        tokio::net::TcpListener::from_std(net.bind(443)).unwrap(),
        Some(ca.server_config("allowed.test")),
    );
    let dns = dns_server(HashMap::from([
        ("allowed.test".to_string(), net.ns_ip),
        ("other.test".to_string(), net.ns_ip),
        ("rebind.test".to_string(), Ipv4Addr::LOCALHOST),
        (
            "metadata.test".to_string(),
            Ipv4Addr::new(169, 254, 169, 254),
        ),
        ("host.test".to_string(), net.host_ip),
    ]))
    .await;
    let extra = format!(
        "[runtimes.net]\nimage = \"{}\"\nmem_limit = \"256m\"\nnetwork_mode = \"egress\"\negress = {RULES}\n\n[egress]\nupstream_dns = [\"{dns}\"]\n",
        common::python_image()
    );
    let world = World::start(TestService::start(&base_config(4, &extra)), net).await;
    // The test CA, for the sandbox's programs to trust.
    let response = world
        .service
        .put(&format!(
            "/v1/sessions/{}/files/content?path=/tmp/ca.pem",
            world.session
        ))
        .body(ca.pem.clone())
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "{}",
        response.text().await.unwrap()
    );
    world
}

/// A Python program in the sandbox fetching `url`: prints the status and body, or the error.
fn fetch(url: &str, use_proxy: bool) -> String {
    let handlers =
        "urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile='/tmp/ca.pem'))";
    python_open(&format!("'{url}'"), handlers, use_proxy)
}

#[tokio::test]
async fn allowed_names_are_reached_and_everything_else_is_refused_and_logged() {
    let world = world().await;
    let ns = world.net.ns_ip.to_string();

    // Through the proxy variables the sandbox starts with.
    assert_eq!(
        world.run(&fetch("http://allowed.test/", true)).await,
        "200 hello allowed.test"
    );
    let entry = world.entry("allowed.test:80", "egress.http").await;
    assert_eq!(entry["status"], "ok");
    assert_eq!(entry["bytes"], "hello allowed.test".len());
    assert_eq!(entry["interface"], "egress");
    assert_eq!(
        world.run(&fetch("https://allowed.test/", true)).await,
        "200 hello allowed.test"
    );
    assert_eq!(
        world.entry("allowed.test:443", "egress.connect").await["status"],
        "ok"
    );

    // A program ignoring them: the service's DNS answers, the firewall redirects.
    assert_eq!(
        world.run(&fetch("http://allowed.test/", false)).await,
        "200 hello allowed.test"
    );
    assert_eq!(
        world.run(&fetch("https://allowed.test/", false)).await,
        "200 hello allowed.test"
    );
    assert_eq!(
        world.entry("allowed.test:443", "egress.tls").await["status"],
        "ok"
    );

    // Refused, with the reason, and logged.
    for (url, target, says) in [
        (
            "http://other.test/",
            "other.test:80",
            "not on this sandbox's egress allow-list",
        ),
        (
            &format!("http://{ns}/") as &str,
            &format!("{ns}:80") as &str,
            "not an address",
        ),
        (
            "http://rebind.test/",
            "rebind.test:80",
            "127.0.0.1, a loopback address",
        ),
        (
            "http://metadata.test/",
            "metadata.test:80",
            "the cloud metadata address",
        ),
        (
            "http://host.test/",
            "host.test:80",
            "an address of this host",
        ),
    ] {
        let answer = world.run(&fetch(url, true)).await;
        assert!(
            answer.starts_with("403 refused by policy") && answer.contains(says),
            "{url}: {answer}"
        );
        let entry = world.entry(target, "egress.http").await;
        assert_eq!(entry["status"], "refused", "{entry}");
        assert!(entry["error"].as_str().unwrap().contains(says), "{entry}");
    }
    let answer = world.run(&fetch("https://metadata.test/", true)).await;
    assert!(answer.contains("403"), "{answer}");
    assert_eq!(
        world.entry("metadata.test:443", "egress.connect").await["status"],
        "refused"
    );

    // Without the proxy: a denied name does not resolve, a raw address is refused by Host.
    let answer = world.run(&fetch("http://other.test/", false)).await;
    assert!(
        answer.starts_with("failed") && answer.contains("gaierror"),
        "{answer}"
    );
    assert_eq!(
        world.entry("other.test:53", "egress.dns").await["status"],
        "refused"
    );
    let answer = world.run(&fetch(&format!("http://{ns}/"), false)).await;
    assert!(answer.starts_with("403 refused by policy"), "{answer}");
}

#[tokio::test]
async fn other_protocols_and_ports_are_held() {
    let world = world().await;
    let ns = world.net.ns_ip;
    // Another port, and UDP elsewhere: dropped on the host.
    let probe = format!(
        "python3 -c \"
import socket
try:
    socket.create_connection(('{ns}', 22), 3); print('connected')
except OSError as e:
    print('blocked', repr(e))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.sendto(b'x', ('{ns}', 9999))
try:
    s.recv(10); print('answered')
except OSError as e:
    print('no answer')
# Not HTTP on port 80: refused by the proxy.
c = socket.create_connection(('{ns}', 80), 5)
c.sendall(b'SSH-2.0-OpenSSH_9.2\\r\\n\\r\\n')
print('port 80 said', c.recv(100)[:12])
\""
    );
    let answer = world.run(&probe).await;
    assert!(answer.starts_with("blocked"), "{answer}");
    assert!(answer.contains("no answer"), "{answer}");
    assert!(answer.contains("port 80 said b'HTTP/1.1 400'"), "{answer}");
    let entry = world.entry("port 80", "egress.http").await;
    assert_eq!(entry["status"], "refused");
    assert!(
        entry["error"].as_str().unwrap().contains("only HTTP"),
        "{entry}"
    );
}

/// `sandboxd ARGS...` against the world's service: its exit code and stdout.
fn cli(world: &World, args: &[&str]) -> (i32, String) {
    let output = std::process::Command::new(common::sandboxd_bin())
        .args(args)
        .env("SANDBOXD_URL", &world.service.url)
        .env("SANDBOXD_TOKEN", common::TOKEN)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).trim().to_string(),
    )
}

#[tokio::test]
async fn narrowing_at_run_time_holds_new_connections() {
    let world = world().await;
    let id = world.session.clone();
    assert_eq!(
        world.run(&fetch("http://allowed.test/", true)).await,
        "200 hello allowed.test"
    );
    let (code, listed) = cli(&world, &["network", &id]);
    assert_eq!((code, listed.lines().count()), (0, 4), "{listed}");

    let (code, set) = cli(&world, &["network", &id, "--set", "rebind.test"]);
    assert_eq!((code, set.as_str()), (0, "rebind.test"));
    for use_proxy in [true, false] {
        let answer = world.run(&fetch("http://allowed.test/", use_proxy)).await;
        assert!(
            answer.starts_with("403") || answer.contains("gaierror"),
            "{answer}"
        );
    }
    // Widening is refused, in the CLI's words, and changes nothing.
    let (code, _) = cli(&world, &["network", &id, "--set", "other.test"]);
    assert_ne!(code, 0);
    assert_eq!(cli(&world, &["network", &id]).1, "rebind.test");
}

#[tokio::test]
async fn a_sandbox_on_a_freed_address_is_itself_to_the_proxy() {
    let world = world().await;
    assert_eq!(
        world.run(&fetch("http://allowed.test/", true)).await,
        "200 hello allowed.test"
    );
    let closed = world
        .service
        .delete(&format!("/v1/sessions/{}", world.session))
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success());
    // The engine hands the freed address to the next sandbox on the network.
    let next = world.service.open("net").await;
    let plain_fetch = "python3 -c \"import urllib.request as u; print(u.urlopen('http://allowed.test/', timeout=15).read().decode())\"";
    let result = world.service.sh(&next, plain_fetch).await;
    assert_eq!(
        result["stdout"].as_str().unwrap_or("").trim(),
        "hello allowed.test",
        "{result}"
    );
    let log = world
        .service
        .get_json(&format!("/v1/sessions/{next}/activity"))
        .await;
    assert!(
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"].as_str().unwrap_or("").starts_with("egress.")),
        "the connection is the new session's: {log}"
    );
}

/// The chains of an instance's egress network, as `iptables-save` lists them.
fn chains_of(instance_id: &str) -> usize {
    let chain = sandboxd_docker::egress::EgressNames::for_instance(instance_id).chain;
    let output = std::process::Command::new("iptables-save")
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.starts_with(&format!(":{chain}")))
        .count()
}

fn has_network(instance_id: &str) -> bool {
    let network = sandboxd_docker::egress::EgressNames::for_instance(instance_id).network;
    !common::docker(&[
        "network",
        "ls",
        "-q",
        "--filter",
        &format!("name=^{network}$"),
    ])
    .trim()
    .is_empty()
}

#[tokio::test]
async fn an_operator_removes_a_stopped_services_network_state_and_no_other() {
    let extra = format!(
        "[runtimes.net]\nimage = \"{}\"\nnetwork_mode = \"egress\"\negress = [\"allowed.test\"]\n",
        common::busybox_image()
    );
    // Each with its cleanup, dropped after it (a tuple drops in order), when the test fails too.
    let with_cleanup = |service: TestService| {
        let cleanup = egress_world::EgressCleanup(service.instance_id.clone());
        (service, cleanup)
    };
    let (service, _cleanup) = with_cleanup(TestService::start(&base_config(2, &extra)));
    let beside = with_cleanup(TestService::start(&base_config(2, &extra)));
    let beside = &beside.0;
    let instance = service.instance_id.clone();
    service.open("net").await;
    beside.open("net").await;
    assert_eq!(
        chains_of(&instance),
        4,
        "nat, INPUT, FORWARD and OUTPUT chains"
    );
    assert!(has_network(&instance));

    let (removed, output) = common::remove_network_state(&instance);
    assert!(!removed, "refused while a sandbox of it exists: {output}");
    assert!(output.contains("still has 1 sandboxes"), "{output}");
    assert_eq!(
        chains_of(&instance),
        4,
        "the rules holding its sandbox stay"
    );

    drop(service);
    let (removed, output) = common::remove_network_state(&instance);
    assert!(removed, "{output}");
    assert_eq!(chains_of(&instance), 0, "{output}");
    assert!(!has_network(&instance), "{output}");
    assert_eq!(
        chains_of(&beside.instance_id),
        4,
        "another instance's chains are left alone"
    );
    assert!(has_network(&beside.instance_id));
}
