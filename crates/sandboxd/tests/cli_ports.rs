//! `sandboxd ports`, `share` and `forward`: the built binary against a real service and a real
//! Docker engine, in a python session with no network that serves `python3 -m http.server`
//! and a raw TCP echo on its loopback.

mod common;

use common::{base_config, sandboxd_bin, TestService, TOKEN};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const HTTP_PORT: u16 = 8001;
const ECHO_PORT: u16 = 8003;
/// Echoes what it reads on 127.0.0.1:8003 until the client ends its side, one client at a time.
const ECHO: &str = "import socket\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\ns.bind(('127.0.0.1', 8003))\ns.listen()\nwhile True:\n    c, _ = s.accept()\n    while data := c.recv(65536):\n        c.sendall(data)\n    c.close()\n";

fn sandboxd(service: &TestService, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(sandboxd_bin())
        .args(args)
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code().expect("exited, not killed"),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn ok(service: &TestService, args: &[&str]) -> String {
    let (code, stdout, stderr) = sandboxd(service, args);
    assert_eq!(code, 0, "sandboxd {args:?}: {stderr}");
    stdout
}

fn data(len: usize, seed: u32) -> Vec<u8> {
    // A byte of a hash of each position: its lowest.
    (0..u32::try_from(len).unwrap())
        .map(|i| (i.wrapping_add(seed).wrapping_mul(2654435761) >> 13).to_le_bytes()[0])
        .collect()
}

/// A python session serving `big.bin` over HTTP on 8001 and an echo on 8003; its id.
async fn serving(service: &TestService, big: &[u8]) -> String {
    let id = service.open("python").await;
    for (path, body) in [
        ("big.bin", big.to_vec()),
        ("echo.py", ECHO.as_bytes().to_vec()),
    ] {
        let written = service
            .put(&format!("/v1/sessions/{id}/files/content?path={path}"))
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(written.status(), 200);
    }
    for command in [
        format!("python3 -m http.server {HTTP_PORT} --bind 127.0.0.1"),
        "python3 echo.py".to_string(),
    ] {
        let response = service
            .post(&format!("/v1/sessions/{id}/processes"))
            .json(&json!({"command": command, "timeout_secs": 60}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{}", response.text().await.unwrap());
    }
    id
}

/// Kills the forwarder when the test ends, also on failure.
struct Forwarder(Child);

impl Drop for Forwarder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `sandboxd forward ID PORT 0` and the local address it listens on.
fn forward(service: &TestService, id: &str, port: u16) -> (Forwarder, String) {
    let mut child = Command::new(sandboxd_bin())
        .args(["forward", id, &port.to_string(), "0"])
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line
        .strip_prefix("Forwarding from ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("forward printed {line:?}"))
        .to_string();
    assert!(address.starts_with("127.0.0.1:"), "{line}");
    (Forwarder(child), address)
}

#[tokio::test]
async fn ports_lists_share_links_and_forward_carries_bytes_exactly() {
    let service = TestService::start(&base_config(4, ""));
    let big = data(3 << 20, 7);
    let id = serving(&service, &big).await;

    // ports: both servers, with their program, as a table and as JSON.
    let mut listed = Value::Null;
    for _ in 0..300 {
        listed = serde_json::from_str(&ok(&service, &["ports", &id, "--json"])).unwrap();
        let ports = listed["ports"].as_array().unwrap();
        if [HTTP_PORT, ECHO_PORT]
            .iter()
            .all(|p| ports.iter().any(|l| l["port"] == *p))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let http = listed["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["port"] == HTTP_PORT)
        .unwrap_or_else(|| panic!("never listed: {listed}"));
    assert_eq!(http["program"], "python3");
    let table = ok(&service, &["ports", &id[..8]]);
    assert!(table.starts_with("PORT"), "{table}");
    let row = table.lines().find(|l| l.starts_with("8001 ")).unwrap();
    assert!(
        row.contains("127.0.0.1") && row.contains("python3"),
        "{row}"
    );

    // share: a link on stdout that answers without the token, listed, then revoked.
    let link = ok(&service, &["share", &id, "8001", "--ttl", "600"]);
    let link = link.trim();
    assert!(link.starts_with(&format!("{}/p/", service.url)), "{link}");
    let plain = reqwest::Client::new();
    let page = plain.get(format!("{link}big.bin")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.bytes().await.unwrap(), big);
    let shares: Value =
        serde_json::from_str(&ok(&service, &["share", &id, "--list", "--json"])).unwrap();
    let share_id = shares["shares"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(shares["shares"].as_array().unwrap().len(), 1, "{shares}");
    let list = ok(&service, &["share", &id, "--list"]);
    assert!(list.contains(&share_id) && list.contains("8001"), "{list}");
    let revoked = ok(&service, &["share", &id, "--revoke", &share_id]);
    assert_eq!(revoked.trim(), format!("revoked {share_id}"));
    let gone = plain.get(format!("{link}big.bin")).send().await.unwrap();
    assert_eq!(gone.status(), 404);
    let (code, _, stderr) = sandboxd(&service, &["share", &id, "--revoke", &share_id]);
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("not_found") && !stderr.contains("/v1"),
        "{stderr}"
    );

    // forward: curl reaches the HTTP server through a local port, byte for byte.
    let (_http_forward, address) = forward(&service, &id, HTTP_PORT);
    let curl = Command::new("curl")
        .args(["-sS", "--fail", &format!("http://{address}/big.bin")])
        .output()
        .unwrap();
    assert!(
        curl.status.success(),
        "{}",
        String::from_utf8_lossy(&curl.stderr)
    );
    assert!(curl.stdout == big, "curl got {} bytes", curl.stdout.len());

    // forward: a raw TCP client's bytes come back unchanged from the echo.
    let (_echo_forward, address) = forward(&service, &id, ECHO_PORT);
    let sent = data(1 << 20, 99);
    let echoed = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(&address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut writer = stream.try_clone().unwrap();
        let to_send = sent.clone();
        let writing = std::thread::spawn(move || {
            writer.write_all(&to_send).unwrap();
            writer.shutdown(Shutdown::Write).unwrap();
        });
        let mut echoed = Vec::new();
        stream.read_to_end(&mut echoed).unwrap();
        writing.join().unwrap();
        (sent, echoed)
    })
    .await
    .unwrap();
    assert!(echoed.0 == echoed.1, "echoed {} bytes", echoed.1.len());

    // Each tunnel is one activity entry of the session, with the bytes it carried both ways.
    let mut echo_entries = Vec::new();
    for _ in 0..100 {
        let activity = service
            .get_json(&format!("/v1/sessions/{id}/activity"))
            .await;
        echo_entries = activity["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["action"] == "port_connect" && e["target"] == "8003")
            .cloned()
            .collect();
        if !echo_entries.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(echo_entries.len(), 1, "{echo_entries:?}");
    assert_eq!(echo_entries[0]["interface"], "cli");
    assert_eq!(echo_entries[0]["bytes"], 2 << 20);

    // A session that is not there: forward fails at once, in the CLI's words.
    let (code, _, stderr) = sandboxd(&service, &["forward", "nosuchsession", "8001", "0"]);
    assert_eq!(code, 5, "{stderr}");
    assert!(!stderr.contains("/v1"), "{stderr}");
}
