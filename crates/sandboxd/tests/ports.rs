//! A session's ports through the agent, against a real service and Docker, in a sandbox with
//! no network: `python3 -m http.server` and a little server of Python's standard library
//! (`ports/server.py`) reached through the reverse proxy (a 10 MB file byte for byte, a
//! streamed POST body, Server-Sent Events, a WebSocket echo), and listed with their process.

mod common;

use common::{base_config, TestService, TOKEN};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

#[path = "ports/limits.rs"]
mod limits;

const SERVER: &str = include_str!("ports/server.py");

/// A service with a python session in which `python3 -m http.server` listens on 8001 and
/// the test server on 8002, both on the loopback only; the sandbox has no network.
async fn serving() -> (TestService, String) {
    serving_with("").await
}

/// [`serving`] with more policy lines.
async fn serving_with(policy: &str) -> (TestService, String) {
    let service = TestService::start(&base_config(4, policy));
    let id = serve_in(&service).await;
    (service, id)
}

/// Opens a python session serving as [`serving`] says; its id.
async fn serve_in(service: &TestService) -> String {
    let id = service.open("python").await;
    for container in service.containers() {
        assert_eq!(container["HostConfig"]["NetworkMode"], "none");
    }
    let written = service
        .put(&format!("/v1/sessions/{id}/files/content?path=server.py"))
        .body(SERVER)
        .send()
        .await
        .unwrap();
    assert_eq!(written.status(), 200);
    for command in [
        "python3 -m http.server 8001 --bind 127.0.0.1",
        "python3 server.py 8002",
    ] {
        let response = service
            .post(&format!("/v1/sessions/{id}/processes"))
            .json(&json!({"command": command, "timeout_secs": 60}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{}", response.text().await.unwrap());
    }
    for _ in 0..300 {
        let ports = ports(service, &id).await;
        if [8001, 8002]
            .iter()
            .all(|p| ports.iter().any(|l| l["port"] == *p))
        {
            return id;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the servers did not listen: {:?}",
        ports(service, &id).await
    );
}

async fn ports(service: &TestService, id: &str) -> Vec<Value> {
    let list = service.get_json(&format!("/v1/sessions/{id}/ports")).await;
    list["ports"].as_array().expect("a port list").clone()
}

fn through(id: &str, port: u16, path: &str) -> String {
    format!("/v1/sessions/{id}/ports/{port}/{path}")
}

#[tokio::test]
async fn http_server_is_listed_and_reached_byte_for_byte_without_a_network() {
    let (service, id) = serving().await;
    let listed = ports(&service, &id).await;
    let http_server = listed.iter().find(|p| p["port"] == 8001).unwrap();
    assert_eq!(http_server["address"], "127.0.0.1");
    assert_eq!(http_server["program"], "python3", "{http_server}");
    assert!(http_server["pid"].as_u64().is_some(), "{http_server}");

    let data: Vec<u8> = (0..10 << 20)
        .map(|i: u32| (i.wrapping_mul(2654435761) >> 13).to_le_bytes()[0])
        .collect();
    let written = service
        .put(&format!("/v1/sessions/{id}/files/content?path=big.bin"))
        .body(data.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(written.status(), 200);
    let response = service
        .get(&through(&id, 8001, "big.bin"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.content_length(), Some(10 << 20));
    let body = response.bytes().await.unwrap();
    assert!(
        body == data,
        "the 10 MB file differs ({} bytes)",
        body.len()
    );

    // The listing of the directory, as http.server makes it; the root redirects to the slash.
    let listing = service.get(&through(&id, 8001, "")).send().await.unwrap();
    assert_eq!(listing.status(), 200);
    assert!(listing.text().await.unwrap().contains("big.bin"));
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let bare = no_redirects
        .get(service.url(&format!("/v1/sessions/{id}/ports/8001")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), 308);
    assert_eq!(
        bare.headers()["location"],
        format!("/v1/sessions/{id}/ports/8001/")
    );

    // Nothing listens on 8003: the proxy says so.
    let closed = service.get(&through(&id, 8003, "")).send().await.unwrap();
    assert_eq!(closed.status(), 502);
    let error: Value = closed.json().await.unwrap();
    assert_eq!(error["error"]["code"], "port_closed", "{error}");

    let activity = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    let connects: Vec<&Value> = activity["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "port_connect")
        .collect();
    assert!(
        connects
            .iter()
            .any(|e| e["target"] == "8003" && e["status"] == "error"),
        "{activity}"
    );
    assert!(
        connects
            .iter()
            .any(|e| e["target"] == "8001" && e["status"] == "ok"),
        "{activity}"
    );
}

#[tokio::test]
async fn a_streamed_post_sse_and_a_websocket_pass_through_and_the_token_does_not() {
    let (service, id) = serving().await;

    // A body of unknown length goes chunked, streamed as it is made.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..80u8).map(|i| Ok(vec![i; 64 * 1024])).collect();
    let expected: Vec<u8> = chunks
        .iter()
        .flat_map(|c| c.as_ref().unwrap().clone())
        .collect();
    let response = service
        .post(&through(&id, 8002, "echo"))
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let echoed: Value = response.json().await.unwrap();
    assert_eq!(echoed["length"], expected.len());
    let digest = sha256_hex(&expected);
    assert_eq!(echoed["sha256"], digest);

    // What the sandbox's server saw: no token, its own Host.
    let seen = service.get_json(&through(&id, 8002, "headers?x=1")).await;
    assert_eq!(seen["path"], "/headers?x=1");
    assert!(seen["headers"].get("authorization").is_none(), "{seen}");
    assert!(seen["headers"].get("x-sandboxd-client").is_none(), "{seen}");
    assert_eq!(seen["headers"]["host"], "127.0.0.1:8002");

    // Server-Sent Events: the first event arrives while the stream is held open.
    let mut events = service
        .get(&through(&id, 8002, "sse"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    let mut text = String::new();
    while !text.contains("data: one\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(30), events.chunk())
            .await
            .expect("the first event in time")
            .unwrap()
            .expect("the stream goes on");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(!text.contains("two"));
    let go = service
        .put(&format!("/v1/sessions/{id}/files/content?path=go"))
        .body("")
        .send()
        .await
        .unwrap();
    assert_eq!(go.status(), 200);
    while let Some(chunk) = events.chunk().await.unwrap() {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert_eq!(text, "event: tick\ndata: one\n\nevent: tick\ndata: two\n\n");

    // A WebSocket echo, upgraded end to end.
    let url = format!(
        "{}{}",
        service.url.replacen("http", "ws", 1),
        through(&id, 8002, "ws")
    );
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let (mut socket, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(response.status(), 101);
    for message in ["hello", &"x".repeat(100_000)] {
        socket.send(Message::text(message)).await.unwrap();
        let echoed = tokio::time::timeout(Duration::from_secs(30), socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(echoed.into_text().unwrap().as_str(), message);
    }
    socket.close(None).await.unwrap();
}

/// Makes a share link to `port` of the session; its path and id.
async fn share(service: &TestService, id: &str, port: u16, ttl_secs: u64) -> (String, String) {
    let response = service
        .post(&format!("/v1/sessions/{id}/ports/{port}/share"))
        .json(&json!({"ttl_secs": ttl_secs}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let link: Value = response.json().await.unwrap();
    let path = link["path"].as_str().unwrap().to_string();
    (path, link["id"].as_str().unwrap().to_string())
}

/// A request with no token at all, as a browser opening the link makes it.
async fn open_link(service: &TestService, path: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(service.url(path))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn share_links_reach_their_port_of_their_session_without_the_token_until_they_stop() {
    let service = TestService::start(&base_config(4, ""));
    let (a, b) = (serve_in(&service).await, serve_in(&service).await);
    for (id, text) in [(&a, "from a"), (&b, "from b")] {
        let written = service
            .put(&format!("/v1/sessions/{id}/files/content?path=who.txt"))
            .body(text)
            .send()
            .await
            .unwrap();
        assert_eq!(written.status(), 200);
    }
    let (link_a, share_a) = share(&service, &a, 8001, 600).await;
    let (link_b, _) = share(&service, &b, 8001, 600).await;

    let answer = open_link(&service, &format!("{link_a}who.txt")).await;
    assert_eq!(answer.status(), 200);
    let headers = answer.headers().clone();
    assert!(headers["content-security-policy"]
        .to_str()
        .unwrap()
        .starts_with("sandbox"));
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert!(headers.get("set-cookie").is_none());
    assert_eq!(answer.text().await.unwrap(), "from a");
    assert_eq!(
        open_link(&service, &format!("{link_b}who.txt"))
            .await
            .text()
            .await
            .unwrap(),
        "from b"
    );

    // The path goes to the sandbox's server as it is: it cannot climb out to the service.
    let climbing = open_link(&service, &format!("{link_a}%2e%2e/%2e%2e/v1/sessions")).await;
    assert_ne!(climbing.status(), 200);
    assert!(
        !climbing.text().await.unwrap().contains(&b),
        "no session list through a link"
    );

    // A link made for another port reaches that port only.
    let (link_8002, _) = share(&service, &a, 8002, 600).await;
    let seen: Value = open_link(&service, &format!("{link_8002}headers"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(seen["headers"]["host"], "127.0.0.1:8002");

    // The client's calls: the links listed without their capability, the ports listed.
    let client =
        sandboxd_client::Client::new(&service.url, TOKEN, sandboxd_client::Interface::Cli).unwrap();
    let shares = client.list_shares(&a).await.unwrap().shares;
    assert_eq!(shares.len(), 2);
    assert!(shares.iter().all(|s| s.path.is_none()));
    let listed = client.list_ports(&a).await.unwrap().ports;
    assert!(listed
        .iter()
        .any(|p| p.port == 8002 && p.program.as_deref() == Some("python3")));

    // Revoked: at once.
    let revoked = service
        .delete(&format!("/v1/sessions/{a}/shares/{share_a}"))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    assert_eq!(
        open_link(&service, &format!("{link_a}who.txt"))
            .await
            .status(),
        404
    );

    // Expired: a link of 5 s works, then (waited for) answers 404.
    let short = client
        .share_port(&b, 8001, Some(5))
        .await
        .unwrap()
        .path
        .unwrap();
    assert_eq!(
        open_link(&service, &format!("{short}who.txt"))
            .await
            .status(),
        200
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut status = reqwest::StatusCode::OK;
    while status == 200 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        status = open_link(&service, &format!("{short}who.txt"))
            .await
            .status();
    }
    assert_eq!(status, 404);

    // The session closed: its links stop, another session's go on.
    let closed = service
        .delete(&format!("/v1/sessions/{a}"))
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 200);
    assert_eq!(
        open_link(&service, &format!("{link_8002}headers"))
            .await
            .status(),
        404
    );
    assert_eq!(
        open_link(&service, &format!("{link_b}who.txt"))
            .await
            .status(),
        200
    );

    let activity = service
        .get_json(&format!("/v1/sessions/{b}/activity"))
        .await;
    let opened = activity["entries"].as_array().unwrap().iter();
    let opened: Vec<_> = opened.filter(|e| e["action"] == "share_open").collect();
    assert!(
        opened.len() >= 2 && opened.iter().all(|e| e["interface"] == "link"),
        "{activity}"
    );
}

fn sha256_hex(data: &[u8]) -> String {
    let output = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(data)?;
            child.wait_with_output()
        })
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_share_domain_gives_each_link_a_host_where_absolute_paths_work() {
    const DOMAIN: &str = "preview.sandboxd.test";
    let service = TestService::start(&base_config(
        4,
        &format!("\n[ports]\nshare_domain = \"{DOMAIN}\"\n"),
    ));
    let id = serve_in(&service).await;
    let script = "document.title = 'loaded';";
    for (path, body) in [
        ("index.html", "<script src=\"/static/app.js\"></script>"),
        ("static/app.js", script),
    ] {
        let written = service
            .put(&format!("/v1/sessions/{id}/files/content?path={path}"))
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(written.status(), 200);
    }
    let response = service
        .post(&format!("/v1/sessions/{id}/ports/8001/share"))
        .json(&json!({"ttl_secs": 600}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let link: Value = response.json().await.unwrap();
    let url = link["url"].as_str().unwrap();
    let host = url
        .strip_prefix("https://")
        .and_then(|rest| rest.strip_suffix('/'))
        .unwrap_or_else(|| panic!("not a host link: {link}"));
    let capability = host.strip_suffix(&format!(".{DOMAIN}")).unwrap();
    assert_eq!(capability.len(), 62, "{host}");
    assert_eq!(link["path"], format!("/p/{capability}/"));

    // As the operator's proxy passes it on: the link's Host, any path, no token.
    let by_host = |host: String, path: &'static str| {
        let url = service.url(path);
        async move {
            reqwest::Client::new()
                .get(url)
                .header("host", host)
                .send()
                .await
                .unwrap()
        }
    };
    let page = by_host(host.to_string(), "/").await;
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["referrer-policy"], "no-referrer");
    // Its own origin, not the opaque one of a path link: scripts, cookies and storage work.
    assert_eq!(
        page.headers()["content-security-policy"],
        "frame-ancestors 'self'"
    );
    let absolute = by_host(host.to_uppercase(), "/static/app.js").await;
    assert_eq!(absolute.status(), 200);
    assert_eq!(absolute.text().await.unwrap(), script);
    // The same absolute path from a path link's page goes to the service instead: what a
    // path link breaks.
    assert_eq!(open_link(&service, "/static/app.js").await.status(), 404);
    // Even the service's own routes, on a link's host, are the port's.
    let api = by_host(host.to_string(), "/v1/sessions").await;
    assert!(!api.text().await.unwrap().contains(&id));

    // A host naming no link is not found; a revoked link's host stops at once.
    let unknown = by_host(format!("{}.{DOMAIN}", "ab".repeat(31)), "/").await;
    assert_eq!(unknown.status(), 404);
    let share_id = link["id"].as_str().unwrap();
    let revoked = service
        .delete(&format!("/v1/sessions/{id}/shares/{share_id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    assert_eq!(by_host(host.to_string(), "/").await.status(), 404);
    // A name outside the domain is still refused by the Host guard.
    let outside = by_host(format!("{capability}.evil.test"), "/").await;
    assert_eq!(outside.status(), 403);
}

#[tokio::test]
async fn a_links_host_gets_only_the_cookies_its_own_server_set() {
    const DOMAIN: &str = "preview.sandboxd.test";
    let service = TestService::start(&base_config(
        4,
        &format!("\n[ports]\nshare_domain = \"{DOMAIN}\"\n"),
    ));
    let id = serve_in(&service).await;
    let mut hosts = Vec::new();
    for _ in 0..2 {
        let response = service
            .post(&format!("/v1/sessions/{id}/ports/8002/share"))
            .json(&json!({"ttl_secs": 600}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let link: Value = response.json().await.unwrap();
        let host = link["url"].as_str().unwrap();
        hosts.push(host["https://".len()..host.len() - 1].to_string());
    }
    let request = |host: &str, path: &str, cookie: Option<&str>| {
        let mut request = reqwest::Client::new()
            .get(service.url(path))
            .header("host", host);
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        request.send()
    };
    let set = request(&hosts[0], "/setcookie", None).await.unwrap();
    let lines: Vec<String> = set
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    assert_eq!(lines.len(), 2, "the cookie and its companion: {lines:?}");
    assert_eq!(lines[0], "sid=good; Path=/", "kept to the link's host");
    // What a browser holding both sends back, with a cookie another link's page set for the
    // whole share domain.
    let jar: Vec<&str> = lines
        .iter()
        .map(|line| line.split(';').next().unwrap())
        .collect();
    let sent = format!("{}; tossed=1; sid=evil", jar.join("; "));
    let seen: Value = request(&hosts[0], "/headers", Some(&sent))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(seen["headers"]["cookie"], "sid=good");
    // The same cookies sent to the other link: none of them is its own.
    let seen: Value = request(&hosts[1], "/headers", Some(&sent))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(seen["headers"]["cookie"], Value::Null, "{seen}");
    // A path link's page has no cookies: whatever the browser sends is the service host's.
    let (path, _) = share(&service, &id, 8002, 600).await;
    let seen: Value = reqwest::Client::new()
        .get(service.url(&format!("{path}headers")))
        .header("cookie", "service-host-cookie=1")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(seen["headers"]["cookie"], Value::Null, "{seen}");
}

#[tokio::test]
async fn a_port_switching_protocols_unasked_is_a_bad_gateway_not_a_dead_connection() {
    let (service, id) = serving().await;
    let client = reqwest::Client::new();
    let switched = client
        .get(service.url(&through(&id, 8002, "switch")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(switched.status(), 502);
    let body: Value = switched.json().await.unwrap();
    assert_eq!(body["error"]["code"], "upstream_error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("101 Switching Protocols"),
        "{body}"
    );
    // The client's connection still serves the next request.
    let next = client
        .get(service.url(&through(&id, 8002, "headers")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(next.status(), 200);
}
