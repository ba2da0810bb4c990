//! The Host and Origin guard and the security headers, over real HTTP against the real
//! service: a browser page on another host name (DNS rebinding) or another origin gets 403
//! with the API's error shape, the dashboard is served with a strict policy, a WebSocket can
//! present the token as a subprotocol, and a browser's presents a single-use ticket instead
//! (as may an output stream, in its query).

mod common;

use common::{base_config, TestService, TOKEN};
use futures_util::{SinkExt, StreamExt};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// A raw HTTP/1.1 exchange, so every header (Host, Upgrade, Origin) is exactly as written.
/// Returns the status, the headers (lower-case names) and the body.
fn raw(service_url: &str, request_head: &str) -> (u16, Vec<(String, String)>, String) {
    let address = service_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request_head.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("no status line: {status_line:?}"))
        .parse()
        .unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    if status == 101 {
        return (status, headers, String::new());
    }
    let mut body = String::new();
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map(|(_, v)| v.parse::<usize>().unwrap());
    match length {
        Some(length) => {
            let mut buffer = vec![0; length];
            reader.read_exact(&mut buffer).unwrap();
            body = String::from_utf8_lossy(&buffer).into_owned();
        }
        None => {
            reader.read_to_string(&mut body).unwrap();
        }
    }
    (status, headers, body)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn port(service: &TestService) -> String {
    service.url.rsplit(':').next().unwrap().to_string()
}

fn get(path: &str, host: &str, extra: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n")
}

fn bearer() -> String {
    format!("Authorization: Bearer {TOKEN}\r\n")
}

fn error_code(body: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(body)
        .unwrap_or_else(|e| panic!("not the JSON error shape ({e}): {body}"));
    json["error"]["code"].as_str().unwrap().to_string()
}

/// Unpadded base64url, as the dashboard encodes the token in its subprotocol.
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
        }
    }
    out
}

#[test]
fn host_names_the_service_was_not_reached_by_are_refused() {
    let service = TestService::start(&base_config(2, ""));
    let port = port(&service);
    for host in [
        format!("evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "evil.example".to_string(),
        format!("localhost:{port}@evil.example"),
        // An address, but not one this service listens on.
        format!("10.9.8.7:{port}"),
    ] {
        for (path, auth) in [
            ("/v1/stats", bearer()),
            ("/healthz", String::new()),
            ("/", String::new()),
        ] {
            let (status, headers, body) = raw(&service.url, &get(path, &host, &auth));
            assert_eq!(status, 403, "{path} with Host {host}: {body}");
            assert_eq!(error_code(&body), "forbidden_host");
            assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
        }
    }
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("[::1]:{port}"),
        // Through a tunnel or a proxy on another port (ssh -L 8080:localhost:PORT).
        "localhost:8080".to_string(),
    ] {
        let (status, _, body) = raw(&service.url, &get("/v1/stats", &host, &bearer()));
        assert_eq!(status, 200, "Host {host}: {body}");
    }
}

#[tokio::test]
async fn pages_on_other_origins_cannot_drive_the_api() {
    let service = TestService::start(&base_config(2, ""));
    let port = port(&service);
    let own = format!("http://127.0.0.1:{port}");
    for origin in [
        "http://evil.example".to_string(),
        format!("http://evil.example:{port}"),
        format!("http://localhost:{}", port.parse::<u16>().unwrap() ^ 1),
        format!("https://127.0.0.1:{}", port.parse::<u16>().unwrap() ^ 1),
        "null".to_string(),
        "file://".to_string(),
    ] {
        let response = service
            .post("/v1/sessions")
            .header("Origin", &origin)
            .json(&serde_json::json!({"runtime": "sh"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "Origin {origin}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "forbidden_origin", "{body}");
    }
    let sessions: serde_json::Value = service
        .get("/v1/sessions")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        sessions["sessions"],
        serde_json::json!([]),
        "nothing was opened"
    );

    // The service's own origin, as its dashboard sends it.
    let response = service
        .get("/v1/stats")
        .header("Origin", &own)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // A correct Origin does not stand in for the token.
    let response = service
        .client
        .get(service.url("/v1/stats"))
        .header("Origin", &own)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[test]
fn the_dashboard_is_served_with_a_strict_policy() {
    let service = TestService::start(&base_config(2, ""));
    let host = format!("127.0.0.1:{}", port(&service));
    let (status, headers, body) = raw(&service.url, &get("/", &host, ""));
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/html; charset=utf-8")
    );
    let csp = header(&headers, "content-security-policy").unwrap();
    for directive in [
        "default-src 'self'",
        "script-src 'self';",
        "style-src-attr 'none'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
    ] {
        assert!(csp.contains(directive), "{directive} missing from {csp}");
    }
    assert!(
        csp.contains(&format!("connect-src 'self' ws://{host} wss://{host};")),
        "{csp}"
    );
    assert!(!csp.contains("unsafe"), "{csp}");
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap();
    assert!(body.contains(&format!("content=\"{nonce}\"")));
    assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
    assert_eq!(header(&headers, "referrer-policy"), Some("no-referrer"));
    assert_eq!(header(&headers, "x-frame-options"), Some("DENY"));
    assert!(body.contains("/assets/js/main.js"));
    assert!(!body.contains(" style="));

    let (status, headers, body) = raw(&service.url, &get("/assets/js/main.js", &host, ""));
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert!(body.contains("import"));
    let etag = header(&headers, "etag").unwrap().to_string();
    let (status, _, _) = raw(
        &service.url,
        &get(
            "/assets/js/main.js",
            &host,
            &format!("If-None-Match: {etag}\r\n"),
        ),
    );
    assert_eq!(status, 304);
    for missing in [
        "/assets/nope.js",
        "/assets/../Cargo.toml",
        "/assets/%2e%2e/lib.rs",
    ] {
        let (status, _, body) = raw(&service.url, &get(missing, &host, ""));
        assert_eq!(status, 404, "{missing}: {body}");
    }

    // The API's answers are never rendered as a page, framed or cached.
    let (status, headers, _) = raw(&service.url, &get("/v1/stats", &host, &bearer()));
    assert_eq!(status, 200);
    let csp = header(&headers, "content-security-policy").unwrap();
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
    assert_eq!(header(&headers, "cache-control"), Some("no-store"));
    assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
}

fn upgrade(path: &str, host: &str, extra: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    )
}

#[tokio::test]
async fn a_websocket_presents_the_token_as_a_subprotocol() {
    let service = TestService::start(&base_config(2, ""));
    let host = format!("127.0.0.1:{}", port(&service));
    let origin = format!("Origin: http://{host}\r\n");
    let good = format!(
        "Sec-WebSocket-Protocol: sandboxd, bearer.{}\r\n",
        base64url(TOKEN.as_bytes())
    );
    let wrong = format!(
        "Sec-WebSocket-Protocol: sandboxd, bearer.{}\r\n",
        base64url(b"not-the-token-0123456789")
    );

    // Without the subprotocol, or with a wrong token in it, the token check refuses.
    let (status, _, body) = raw(&service.url, &upgrade("/v1/stats", &host, &origin));
    assert_eq!(status, 401, "{body}");
    let (status, _, _) = raw(
        &service.url,
        &upgrade("/v1/stats", &host, &format!("{origin}{wrong}")),
    );
    assert_eq!(status, 401);
    // Only an upgrade request may carry it: a plain request with it is not authenticated.
    let (status, _, _) = raw(&service.url, &get("/v1/stats", &host, &good));
    assert_eq!(status, 401);

    // A real terminal: the handshake succeeds and names the protocol the page offered,
    // never the one carrying the token.
    let id = service.open("sh").await;
    let path = format!("/v1/sessions/{id}/pty?cols=80&rows=24");
    let (status, headers, body) = raw(
        &service.url,
        &upgrade(&path, &host, &format!("{origin}{good}")),
    );
    assert_eq!(status, 101, "{body}");
    assert_eq!(header(&headers, "sec-websocket-protocol"), Some("sandboxd"));
    // From another origin the same handshake is refused before anything runs.
    let (status, _, body) = raw(
        &service.url,
        &upgrade(
            &path,
            &host,
            &format!("Origin: http://evil.example\r\n{good}"),
        ),
    );
    assert_eq!(status, 403);
    assert_eq!(error_code(&body), "forbidden_origin");
}

async fn ticket(service: &TestService, id: &str) -> String {
    let response = service
        .post(&format!("/v1/sessions/{id}/tickets"))
        .header("x-sandboxd-client", "dashboard")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["expires_in_secs"], 30, "{body}");
    body["ticket"].as_str().unwrap().to_string()
}

/// Opens the session's terminal offering `ticket` as the dashboard does, with no token.
async fn terminal_with_ticket(
    service: &TestService,
    id: &str,
    ticket: &str,
) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
    let url = format!(
        "{}/v1/sessions/{id}/pty",
        service.url.replacen("http", "ws", 1)
    );
    let mut request = url.into_client_request().unwrap();
    let protocols = format!("sandboxd, ticket.{ticket}");
    request
        .headers_mut()
        .insert("sec-websocket-protocol", protocols.parse().unwrap());
    let (socket, response) = tokio_tungstenite::connect_async(request).await?;
    let chosen = response.headers().get("sec-websocket-protocol");
    assert_eq!(chosen.unwrap(), "sandboxd", "the ticket is never echoed");
    Ok(socket)
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Terminal output until `needle`; anything but output before it fails the test.
async fn read_until(socket: &mut Socket, needle: &str) {
    let mut seen = String::new();
    while !seen.contains(needle) {
        let message = tokio::time::timeout(Duration::from_secs(30), socket.next())
            .await
            .expect("output in time")
            .unwrap()
            .unwrap();
        match message {
            Message::Binary(data) => seen += &String::from_utf8_lossy(&data),
            Message::Text(text) => assert!(text.contains("started"), "{text}"),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("{other:?} before {needle:?}; saw {seen:?}"),
        }
    }
}

#[tokio::test]
async fn a_ticket_opens_one_terminal_or_stream_without_the_token() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;

    let first = ticket(&service, &id).await;
    let mut socket = terminal_with_ticket(&service, &id, &first).await.unwrap();
    socket
        .send(Message::Binary("echo hi-with-a-ticket\n".into()))
        .await
        .unwrap();
    read_until(&mut socket, "\nhi-with-a-ticket\r\n").await;
    socket.close(None).await.unwrap();
    // Spent: the same ticket again is refused like a wrong token.
    match terminal_with_ticket(&service, &id, &first).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 401)
        }
        other => panic!("{:?}", other.map(|_| "upgraded")),
    }
    // The terminal acted as the one that asked for the ticket, through the dashboard.
    let activity = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    let entries = activity["entries"].as_array().unwrap();
    let pty = entries.iter().find(|e| e["action"] == "pty").unwrap();
    assert_eq!(pty["principal"], "admin", "{pty}");
    assert_eq!(pty["interface"], "dashboard", "{pty}");

    // An output stream with `?ticket=` and no token streams the process's output.
    let response = service
        .post(&format!("/v1/sessions/{id}/processes"))
        .json(&serde_json::json!({"command": "sleep 1; echo streamed-with-a-ticket"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let process: serde_json::Value = response.json().await.unwrap();
    let pid = process["id"].as_str().unwrap();
    let stream = service.url(&format!(
        "/v1/sessions/{id}/processes/{pid}/stream?since=0&ticket={}",
        ticket(&service, &id).await
    ));
    let response = reqwest::get(&stream).await.unwrap();
    assert_eq!(response.status(), 200);
    let events = tokio::time::timeout(Duration::from_secs(30), response.text())
        .await
        .expect("the stream ends with the process")
        .unwrap();
    assert!(events.contains("streamed-with-a-ticket"), "{events}");
    assert!(events.contains("event: exit"), "{events}");
    let again = reqwest::get(&stream).await.unwrap();
    assert_eq!(again.status(), 401);
}

/// A service started with `SANDBOXD_ALLOWED_HOSTS`; killed on drop (it opens no sandbox).
struct EnvService {
    child: Child,
    url: String,
    _state_dir: tempfile::TempDir,
}

impl Drop for EnvService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_with_allowed_hosts(names: &str) -> EnvService {
    let state_dir = tempfile::Builder::new()
        .prefix("sbd")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(state_dir.path().join("instance-id"), "test-origin-env").unwrap();
    let config = state_dir.path().join("config.toml");
    std::fs::write(&config, base_config(2, "")).unwrap();
    let mut child = Command::new(common::sandboxd_bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--state-dir")
        .arg(state_dir.path())
        .env_remove("SANDBOXD_TOKEN")
        .env("SANDBOXD_AGENT", common::agent_binary())
        .env("SANDBOXD_ALLOWED_HOSTS", names)
        .env("SANDBOXD_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    // The service keeps printing: its stdout is read to the end, so it never writes to a
    // closed pipe.
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("sandboxd listening on ") {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("sandboxd printed its address");
    EnvService {
        child,
        url,
        _state_dir: state_dir,
    }
}

#[test]
fn the_operator_can_allow_more_host_names() {
    let service = start_with_allowed_hosts("sandboxd.internal.test, Other.Test");
    let port = service.url.rsplit(':').next().unwrap().to_string();
    for host in [
        format!("sandboxd.internal.test:{port}"),
        "other.test".to_string(),
    ] {
        let (status, _, body) = raw(&service.url, &get("/healthz", &host, ""));
        assert_eq!(status, 200, "Host {host}: {body}");
        // Its own origin is then that name.
        let origin = format!("Origin: http://{host}\r\n");
        let (status, _, body) = raw(
            &service.url,
            &get("/v1/stats", &host, &format!("{origin}{}", bearer())),
        );
        assert_eq!(status, 200, "Host {host}: {body}");
    }
    let (status, _, body) = raw(
        &service.url,
        &get("/healthz", &format!("evil.test:{port}"), ""),
    );
    assert_eq!(status, 403);
    assert_eq!(error_code(&body), "forbidden_host");
}
