//! The `/mcp` face in process, over the fake platform: command output cut to the policy's
//! budget (head and tail, a marker, the whole in a file of the session), and errors worded
//! with the tools' names, never a route. The real thing (the MCP SDK, Docker) is `tests/mcp`.

mod common;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use common::*;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::time::Duration;
use tower::ServiceExt;

/// An MCP client of the in-process service: one MCP session, opened with the handshake.
struct Mcp<'a> {
    service: &'a TestService,
    token: &'static str,
    session: String,
    next_id: u64,
}

impl<'a> Mcp<'a> {
    async fn connect(service: &'a TestService) -> Mcp<'a> {
        Mcp::connect_as(service, TOKEN).await
    }

    async fn connect_as(service: &'a TestService, token: &'static str) -> Mcp<'a> {
        let mut mcp = Mcp {
            service,
            token,
            session: String::new(),
            next_id: 1,
        };
        let (status, headers, _) = mcp
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "in-process", "version": "1"}}}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        mcp.session = headers["mcp-session-id"].to_str().unwrap().to_string();
        mcp.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        mcp
    }

    async fn post(&self, message: Value) -> (StatusCode, axum::http::HeaderMap, Vec<Value>) {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            .header(header::HOST, "localhost")
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if !self.session.is_empty() {
            request = request.header("mcp-session-id", &self.session);
        }
        let request = request.body(Body::from(message.to_string())).unwrap();
        let answer = async {
            let response = self.service.router.clone().oneshot(request).await.unwrap();
            let (parts, body) = response.into_parts();
            let body = body.collect().await.unwrap().to_bytes();
            (parts.status, parts.headers, body)
        };
        let (status, headers, body) = tokio::time::timeout(Duration::from_secs(20), answer)
            .await
            .expect("/mcp answers within 20 s");
        let text = String::from_utf8_lossy(&body);
        let messages = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect();
        (status, headers, messages)
    }

    /// A tool's result (`structuredContent`, `content`, `isError`).
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.next_id += 1;
        let (_, _, messages) = self
            .post(
                json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}),
            )
            .await;
        let answer = messages
            .into_iter()
            .find(|m| m["id"] == self.next_id)
            .expect("an answer to the call");
        answer["result"].clone()
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn long_output_keeps_its_head_and_tail_and_the_whole_is_in_a_file() {
    let service = TestService::start(&config(
        2,
        0,
        "[policy]\nmax_output_bytes = \"4m\"\nmcp_output_bytes = \"8k\"",
    ));
    let mut mcp = Mcp::connect(&service).await;
    let id = service.open(None).await;
    let result = mcp
        .call(
            "run_command",
            json!({"session_id": id, "command": "seq 100000"}),
        )
        .await;
    let ran = &result["structuredContent"];
    assert_eq!(ran["exit_code"], 0, "{result}");
    let expected: String = (1..=100_000).map(|n| format!("{n}\n")).collect();
    assert_eq!(ran["stdout_bytes"], expected.len(), "{ran}");
    assert_eq!(ran["stdout_kept_bytes"], expected.len(), "{ran}");
    assert_eq!(ran["stdout_cut"], true);
    // The output is in the text only: the structured content holds the facts.
    assert!(ran.get("stdout").is_none(), "{ran}");
    assert!(ran.to_string().len() < 1024, "{ran}");
    // The text content reads as text, not as JSON, within the budget.
    let stdout = text(&result);
    assert!(stdout.len() <= 8192 + 1024, "{}", stdout.len());
    let header = format!(
        " ms\n--- stdout: {} bytes; its head and tail below ---\n1\n2\n3\n",
        expected.len()
    );
    assert!(stdout.starts_with("exit code 0 after ") && stdout.contains(&header));
    assert!(stdout.ends_with("99999\n100000\n"));
    let file = ran["stdout_file"].as_str().unwrap();
    assert!(file.starts_with(sandboxd_mcp::OUTPUT_DIR), "{file}");
    let marker = stdout.lines().find(|l| l.starts_with("[...")).unwrap();
    assert!(marker.contains("lines) of stdout left out") && marker.contains(file));
    assert!(marker.contains(&format!(
        "all {} bytes of stdout are in {file}",
        expected.len()
    )));
    // The whole output, as the service kept it, is in the session's file.
    let whole = service
        .admin()
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/files/content?path={file}"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(whole.status, StatusCode::OK);
    assert_eq!(whole.body, expected.as_bytes());

    // Output within the budget comes whole, with no file.
    let small = mcp
        .call("run_command", json!({"session_id": id, "command": "seq 3"}))
        .await;
    assert!(
        text(&small).ends_with("--- stdout: 6 bytes ---\n1\n2\n3\n"),
        "{small}"
    );
    assert_eq!(small["structuredContent"]["stdout_bytes"], 6);
    assert!(small["structuredContent"].get("stdout_file").is_none());
}

#[tokio::test]
async fn errors_name_tools_not_routes() {
    let service = TestService::start(&config(1, 0, ""));
    let mut mcp = Mcp::connect(&service).await;
    let missing = mcp
        .call(
            "run_command",
            json!({"session_id": "nope", "command": "true"}),
        )
        .await;
    assert_eq!(missing["isError"], true);
    assert!(
        text(&missing).ends_with("; list_sessions lists the open ones"),
        "{missing}"
    );

    let unknown = mcp.call("open_session", json!({"runtime": "cobol"})).await;
    assert!(text(&unknown).contains("list_runtimes shows"), "{unknown}");

    let id = service.open(None).await;
    let full = mcp.call("open_session", json!({})).await;
    assert!(text(&full).contains("close_session"), "{full}");
    service.delete(&format!("/v1/sessions/{id}")).await;
    let ended = mcp
        .call("run_command", json!({"session_id": id, "command": "true"}))
        .await;
    assert!(text(&ended).contains("open_session"), "{ended}");
    for result in [&missing, &unknown, &full, &ended] {
        assert!(!text(result).contains("/v1"), "{result}");
    }
}

#[tokio::test]
async fn an_oom_kill_counted_by_the_platform_is_reported() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (status, killed) = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({"command": "oom"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(killed["oom_killed"], true, "{killed}");
    assert_eq!(killed["exit_code"], 137);
    let (_, calm) = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({"command": "echo hi"}),
        )
        .await;
    assert_eq!(calm["oom_killed"], false, "{calm}");
}

/// A POST to `/mcp` with the service token, `Origin` when given; the status and the body.
async fn post_raw(
    service: &TestService,
    origin: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header(header::HOST, "localhost")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(origin) = origin {
        request = request.header(header::ORIGIN, origin);
    }
    let response = service
        .router
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_body_over_the_upload_cap_is_a_json_rpc_error_naming_it() {
    let service = TestService::start(&config(1, 0, "[policy]\nmax_upload_bytes = 4096"));
    let content = "x".repeat(8192);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "write_file", "arguments": {"session_id": "s", "path": "f", "content": content}}});
    let (status, answer) = post_raw(&service, None, call.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("4096") && message.contains("max_upload_bytes"),
        "{message}"
    );
}

#[tokio::test]
async fn an_extra_origin_reaches_mcp_and_nothing_else() {
    let inspector = "http://localhost:6274";
    // A top-level key, so before the tables.
    let service = TestService::start(&format!(
        "extra_allowed_origins = [\"{inspector}\"]\n{}",
        config(1, 0, "")
    ));
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    let body = initialize.to_string().into_bytes();
    let (allowed, _) = post_raw(&service, Some(inspector), body.clone()).await;
    assert_eq!(allowed, StatusCode::OK);
    let (other, answer) = post_raw(&service, Some("http://localhost:6275"), body).await;
    assert_eq!(other, StatusCode::FORBIDDEN, "{answer}");
    // The same origin on the REST API is refused: the setting is for /mcp alone.
    let request = Request::builder()
        .method(Method::GET)
        .uri("/v1/sessions")
        .header(header::HOST, "localhost")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::ORIGIN, inspector);
    let response = service
        .router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn an_mcp_session_answers_only_the_token_that_opened_it() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let mut alpha = Mcp::connect_as(&service, ALPHA_TOKEN).await;
    let listed = alpha.call("list_sessions", json!({})).await;
    assert_ne!(listed["isError"], true, "{listed}");
    // Another tenant's token naming alpha's session is told there is no such session.
    let intruder = Mcp {
        service: &service,
        token: BETA_TOKEN,
        session: alpha.session.clone(),
        next_id: 1,
    };
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    let (status, _, _) = intruder.post(ping.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = alpha.post(ping).await;
    assert_eq!(status, StatusCode::OK, "the owner is still served");
}

#[tokio::test]
async fn runtime_descriptions_reach_rest_the_runtime_listing_and_open_sessions_description() {
    let service = TestService::start(&config(
        2,
        0,
        "[recipes.tiny]\ndescription = \"a tiny recipe\"\nbase = \"test/base:1\"\n\
         [runtimes.tiny]\nruntime = \"tiny\"\n\
         [runtimes.plots]\nimage = \"test/plots:1\"\ndescription = \"returns plots as images\"\n",
    ));
    let (status, listed) = service.get("/v1/runtimes").await;
    assert_eq!(status, StatusCode::OK);
    let description = |list: &Value, name: &str| {
        list["runtimes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {list}"))
            .get("description")
            .cloned()
    };
    assert_eq!(
        description(&listed, "plots"),
        Some(json!("returns plots as images"))
    );
    assert_eq!(
        description(&listed, "tiny"),
        Some(json!("a tiny recipe")),
        "inherited"
    );
    assert_eq!(description(&listed, "sh"), None, "left out when empty");

    let mut mcp = Mcp::connect(&service).await;
    let runtimes = mcp.call("list_runtimes", json!({})).await;
    let runtimes = &runtimes["structuredContent"];
    assert_eq!(
        description(runtimes, "plots"),
        Some(json!("returns plots as images"))
    );

    let (_, _, messages) = mcp
        .post(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {}}))
        .await;
    let tools = messages[0]["result"]["tools"].as_array().unwrap().clone();
    let open = tools.iter().find(|t| t["name"] == "open_session").unwrap();
    let open = open["description"].as_str().unwrap();
    assert!(
        open.contains("\"plots\": returns plots as images"),
        "{open}"
    );
    assert!(open.contains("\"tiny\": a tiny recipe"), "{open}");
    assert!(open.contains("\"sh\" (the default)"), "{open}");
    assert!(!open.contains("{runtimes}"), "{open}");
}
