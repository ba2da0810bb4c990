//! The service stays reachable for every party while one floods it (the real service, loopback):
//! slow-header connections without a token and one tenant's event streams, each more than
//! the service's connection limit, leave another tenant's exec and the administrator's session
//! list answering.

mod common;

use common::{base_config, tenant_token, TestService, TOKEN};
use serde_json::json;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Slow-header connections and event streams the attack opens, each.
const FLOOD: usize = 1000;
/// What another party's request is given to answer during the flood.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);
/// How long the flood's connections may take to be opened, all of them: a service that stops
/// accepting stalls the flood for good, so the bound only has to outlast a loaded machine (the
/// test step's parallel suites once took the 2,000 opens past 10 s).
const FLOOD_OPENS_WITHIN: Duration = Duration::from_secs(60);
/// The default of `policy.max_requests_per_caller`, which the service here keeps.
const PER_CALLER: usize = 256;

struct Flooded {
    service: TestService,
    a: String,
    b: String,
}

fn start() -> Flooded {
    let (a, a_config) = tenant_token("team-a");
    let (b, b_config) = tenant_token("team-b");
    let config = format!("{}{a_config}{b_config}", base_config(2, ""));
    Flooded {
        service: TestService::start(&config),
        a,
        b,
    }
}

/// Opens a connection and sends `head` without reading anything back.
async fn send_head(address: &str, head: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// The status of the first answer on `stream`, if one comes within a second (0 when the
/// connection was closed without one).
async fn status_of(stream: &mut TcpStream) -> Option<u16> {
    let mut head = [0u8; 12];
    let mut read = 0;
    let got = tokio::time::timeout(Duration::from_secs(1), async {
        while read < head.len() {
            match stream.read(&mut head[read..]).await {
                Ok(0) | Err(_) => return 0,
                Ok(n) => read += n,
            }
        }
        std::str::from_utf8(&head[9..12])
            .ok()
            .and_then(|code| code.parse().ok())
            .unwrap_or(0)
    })
    .await;
    got.ok()
}

#[tokio::test]
async fn a_flood_of_slow_headers_and_event_streams_leaves_others_answering() {
    let flooded = start();
    let service = &flooded.service;
    // Tenant b's session, open before the flood.
    let b_client = reqwest::Client::new();
    let opened: serde_json::Value = b_client
        .post(service.url("/v1/sessions"))
        .bearer_auth(&flooded.b)
        .json(&json!({"runtime": "sh"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let session = opened["id"]
        .as_str()
        .expect("b's session opened")
        .to_string();

    // The flood goes on in the background: a service that stops accepting connections stalls
    // it, and what others get meanwhile is what is checked.
    let address = service.url.trim_start_matches("http://").to_string();
    let stream_head = format!(
        "GET /v1/events HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\r\n",
        flooded.a
    );
    let mut flood = tokio::spawn(async move {
        let mut slow = Vec::with_capacity(FLOOD);
        for _ in 0..FLOOD {
            slow.push(send_head(&address, "GET /v1/sessions HTTP/1.1\r\nHost: ").await);
        }
        let mut streams = Vec::with_capacity(FLOOD);
        for _ in 0..FLOOD {
            streams.push(send_head(&address, &stream_head).await);
        }
        (slow, streams)
    });
    let flooded_in_time = tokio::time::timeout(FLOOD_OPENS_WITHIN, &mut flood).await;

    // Fresh clients: every connection of theirs is new, as a newcomer's would be.
    let exec = reqwest::Client::new()
        .post(service.url(&format!("/v1/sessions/{session}/exec")))
        .bearer_auth(&flooded.b)
        .json(&json!({"argv": ["echo", "still here"]}))
        .send();
    let exec = tokio::time::timeout(ANSWER_WITHIN, exec)
        .await
        .expect("tenant b's exec answered within 2 s during the flood")
        .unwrap();
    let status = exec.status();
    let exec: serde_json::Value = exec.json().await.unwrap();
    assert_eq!(status, 200, "{exec}");
    assert_eq!(exec["stdout"], "still here\n");

    let list = reqwest::Client::new()
        .get(service.url("/v1/sessions"))
        .bearer_auth(TOKEN)
        .send();
    let list = tokio::time::timeout(ANSWER_WITHIN, list)
        .await
        .expect("the administrator's session list answered within 2 s during the flood")
        .unwrap();
    assert_eq!(list.status(), 200);

    // Every connection of the flood was taken in, and tenant a got its share of streams and
    // no more: the rest were told why.
    let (slow, mut streams) = flooded_in_time
        .expect("the service took in 2,000 connections without stalling")
        .unwrap();
    let mut served = 0;
    let mut refused = 0;
    for stream in &mut streams {
        match status_of(stream).await {
            Some(200) => served += 1,
            Some(429) => refused += 1,
            _ => {}
        }
    }
    assert!(
        served <= PER_CALLER,
        "{served} event streams of one tenant served at once"
    );
    assert!(
        refused > 0,
        "tenant a's streams past policy.max_requests_per_caller were not refused"
    );
    eprintln!("tenant a: {served} streams served, {refused} refused with 429");
    drop(slow);
}

#[tokio::test]
async fn a_caller_over_its_share_is_told_which_limit_it_reached() {
    let (a, a_config) = tenant_token("team-a");
    let service = TestService::start(&format!(
        "{}max_connections = 16\nreserved_connections = 4\nmax_requests_per_caller = 2\n{a_config}",
        base_config(1, "")
    ));
    let address = service.url.trim_start_matches("http://").to_string();
    let head =
        format!("GET /v1/events HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {a}\r\n\r\n");
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = send_head(&address, &head).await;
        assert_eq!(status_of(&mut stream).await, Some(200));
        held.push(stream);
    }
    let third = reqwest::Client::new()
        .get(service.url("/v1/events"))
        .bearer_auth(&a)
        .send()
        .await
        .unwrap();
    assert_eq!(third.status(), 429);
    assert_eq!(
        third
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap()),
        Some("1")
    );
    let body: serde_json::Value = third.json().await.unwrap();
    assert_eq!(body["error"]["code"], "too_many_requests");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("tenant team-a") && message.contains("policy.max_requests_per_caller"),
        "{message}"
    );
    // The administrator is not counted with the tenant.
    let admin = service.get("/v1/events").send().await.unwrap();
    assert_eq!(admin.status(), 200);
    // A stream that ends gives its place back.
    held.pop();
    let again = tokio::time::timeout(Duration::from_secs(40), async {
        loop {
            let mut stream = send_head(&address, &head).await;
            if status_of(&mut stream).await == Some(200) {
                return stream;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("a place freed by a closed stream is taken again");
    drop(again);
}

#[tokio::test]
async fn anonymous_streams_over_their_share_leave_the_dashboard_loading() {
    let service = TestService::start(&base_config(
        1,
        "max_connections = 16\nreserved_connections = 4\nmax_requests_per_caller = 2",
    ));
    // A share link to a server whose /sse stream stays open: requests without a token, all
    // from this address.
    let id = service.open("python").await;
    let written = service
        .put(&format!("/v1/sessions/{id}/files/content?path=server.py"))
        .body(include_str!("ports/server.py"))
        .send()
        .await
        .unwrap();
    assert_eq!(written.status(), 200);
    let started = service
        .post(&format!("/v1/sessions/{id}/processes"))
        .json(&json!({"command": "python3 server.py 8002", "timeout_secs": 60}))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 201);
    let link: serde_json::Value = service
        .post(&format!("/v1/sessions/{id}/ports/8002/share"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let path = link["path"].as_str().unwrap().to_string();
    let address = service.url.trim_start_matches("http://").to_string();
    let head = format!("GET {path}sse HTTP/1.1\r\nHost: {address}\r\n\r\n");
    let mut held = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while held.len() < 2 {
        let mut stream = send_head(&address, &head).await;
        if status_of(&mut stream).await == Some(200) {
            held.push(stream);
        } else {
            assert!(
                std::time::Instant::now() < deadline,
                "the server never answered"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let anonymous = reqwest::Client::new();
    let third = anonymous
        .get(service.url(&format!("{path}sse")))
        .send()
        .await
        .unwrap();
    assert_eq!(third.status(), 429, "a third stream of this address");
    // The dashboard's page and files, and /healthz, still load for the same address.
    for page in ["/", "/healthz"] {
        let answer = anonymous.get(service.url(page)).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{page}");
    }
    drop(held);
}
