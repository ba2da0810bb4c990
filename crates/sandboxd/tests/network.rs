//! Bridge sandboxes, against the real engine: they join sandboxd's own network, where they
//! cannot reach one another (also across tenants) nor the services of the host, while the
//! outside stays reachable through the host's NAT.

mod common;

use common::{base_config, docker, tenant_token, TestService};
use serde_json::{json, Value};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

const NETWORK: &str = "sandboxd-bridge";

/// Connects to HOST:PORT from inside a sandbox and prints `connected` or `blocked: <error>`.
fn probe(host: &str, port: u16) -> String {
    format!(
        "python3 -c \"import socket\ntry:\n    socket.create_connection(('{host}', {port}), 3); print('connected')\nexcept OSError as e:\n    print('blocked:', repr(e))\""
    )
}

/// A service with a bridge runtime `web` (Python) and two tenants allowed only that runtime.
struct Bridge {
    service: TestService,
    a: String,
    b: String,
}

fn start() -> Bridge {
    let (a, a_config) = tenant_token("team-a");
    let (b, b_config) = tenant_token("team-b");
    let web = format!(
        "[runtimes.web]\nimage = \"{}\"\nmem_limit = \"256m\"\nnetwork_mode = \"bridge\"\n",
        common::python_image()
    );
    let config = format!(
        "{}{a_config}runtimes = [\"web\"]\n{b_config}runtimes = [\"web\"]\n",
        base_config(6, &web)
    );
    Bridge {
        service: TestService::start(&config),
        a,
        b,
    }
}

impl Bridge {
    async fn call(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .service
            .client
            .post(self.service.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn open(&self, token: &str) -> String {
        let (status, session) = self
            .call(token, "/v1/sessions", json!({"runtime": "web"}))
            .await;
        assert_eq!(status, 201, "{session}");
        session["id"].as_str().unwrap().to_string()
    }

    /// Runs a shell command in the session as `token`; returns its stdout.
    async fn sh(&self, token: &str, id: &str, command: &str) -> String {
        let (status, result) = self
            .call(
                token,
                &format!("/v1/sessions/{id}/exec"),
                json!({"command": command, "timeout_secs": 30}),
            )
            .await;
        assert_eq!(status, 200, "{command}: {result}");
        result["stdout"].as_str().unwrap().to_string()
    }

    /// The session's container as `docker inspect` shows it.
    fn container(&self, id: &str) -> Value {
        self.service
            .containers()
            .into_iter()
            .find(|c| c["Config"]["Labels"]["org.sandboxd.session"] == id)
            .unwrap_or_else(|| panic!("no container for session {id}"))
    }

    /// The session's address on sandboxd's network, which it must be attached to (alone).
    fn address(&self, id: &str) -> String {
        let container = self.container(id);
        assert_eq!(container["HostConfig"]["NetworkMode"], NETWORK);
        let networks = container["NetworkSettings"]["Networks"]
            .as_object()
            .unwrap();
        assert_eq!(networks.keys().collect::<Vec<_>>(), [NETWORK]);
        networks[NETWORK]["IPAddress"].as_str().unwrap().to_string()
    }
}

#[tokio::test]
async fn sandboxes_do_not_reach_each_other() {
    let t = start();
    let a = t.open(&t.a).await;
    let b = t.open(&t.b).await;
    let (status, server) = t
        .call(
            &t.b,
            &format!("/v1/sessions/{b}/processes"),
            json!({"command": "python3 -m http.server 8000", "cwd": "/tmp"}),
        )
        .await;
    assert_eq!(status, 201, "{server}");
    let b_ip = t.address(&b);
    assert_ne!(b_ip, t.address(&a));

    // The server is up: b fetches its own page at the address a would use.
    let fetch = format!(
        "python3 -c \"import time, urllib.request\nfor _ in range(40):\n    try:\n        urllib.request.urlopen('http://{b_ip}:8000/', timeout=3); print('served'); break\n    except OSError:\n        time.sleep(0.25)\""
    );
    assert_eq!(t.sh(&t.b, &b, &fetch).await.trim(), "served");

    let from_a = t.sh(&t.a, &a, &probe(&b_ip, 8000)).await;
    assert!(from_a.starts_with("blocked"), "a reached b: {from_a}");

    let network: Value = serde_json::from_str(&docker(&["network", "inspect", NETWORK])).unwrap();
    let network = &network[0];
    assert_eq!(network["Labels"]["org.sandboxd.managed"], "true");
    assert_eq!(
        network["Options"]["com.docker.network.bridge.enable_icc"],
        "false"
    );
}

/// The gateway of the sandbox's default route, from /proc/net/route (little-endian hex).
const GATEWAY: &str = "python3 -c \"import socket, struct\nfor line in open('/proc/net/route').readlines()[1:]:\n    f = line.split()\n    if f[1] == '00000000': print(socket.inet_ntoa(struct.pack('<I', int(f[2], 16))))\"";

#[tokio::test]
async fn the_hosts_services_are_out_of_reach() {
    let t = start();
    let id = t.open(&t.a).await;
    let listener = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let gateway = t.sh(&t.a, &id, GATEWAY).await.trim().to_string();
    let gateway_ip: Ipv4Addr = gateway.parse().expect("a gateway address");

    // The host reaches its own service, at loopback and at the sandboxes' gateway address.
    for host in [Ipv4Addr::LOCALHOST, gateway_ip] {
        let address = SocketAddr::from((host, port));
        TcpStream::connect_timeout(&address, Duration::from_secs(3))
            .unwrap_or_else(|e| panic!("the host cannot reach {address}: {e}"));
    }
    let from_sandbox = t.sh(&t.a, &id, &probe(&gateway, port)).await;
    assert!(
        from_sandbox.starts_with("blocked"),
        "the sandbox reached the host's service at {gateway}:{port}: {from_sandbox}"
    );

    // Nor over IPv6: the sandbox's interfaces have no IPv6 address, not even a link-local one
    // (the host's bridge has one, so a service bound to [::] would otherwise be in reach).
    let inet6 = t.sh(&t.a, &id, "cat /proc/net/if_inet6 || true").await;
    let eth: Vec<&str> = inet6.lines().filter(|l| !l.ends_with(" lo")).collect();
    assert!(eth.is_empty(), "the sandbox has IPv6 addresses: {eth:?}");
}

/// The host's first resolver, when it is outside the host (not loopback) and answers on TCP 53.
fn reachable_resolver() -> Option<String> {
    let conf = std::fs::read_to_string("/etc/resolv.conf").ok()?;
    let resolver: Ipv4Addr = conf
        .lines()
        .find_map(|l| l.strip_prefix("nameserver "))?
        .trim()
        .parse()
        .ok()?;
    if resolver.is_loopback() {
        return None;
    }
    let address = SocketAddr::from((resolver, 53));
    TcpStream::connect_timeout(&address, Duration::from_secs(3)).ok()?;
    Some(resolver.to_string())
}

#[tokio::test]
async fn the_outside_stays_reachable() {
    let Some(resolver) = reachable_resolver() else {
        common::skip_or_fail("a resolver outside the host that answers on TCP 53");
        return;
    };
    let t = start();
    let id = t.open(&t.a).await;
    let outcome = t.sh(&t.a, &id, &probe(&resolver, 53)).await;
    assert_eq!(outcome.trim(), "connected", "to {resolver}:53");
}
