//! Sessions through the REST face: open, read, list, close, run commands, and the activity log
//! each operation leaves.

mod common;

use axum::http::{header, Method, StatusCode};
use base64::Engine;
use common::*;
use serde_json::{json, Value};

#[tokio::test]
async fn create_opens_the_default_runtime() {
    let service = TestService::default_service();
    let (status, info) = service.admin().create(None).await;
    assert_eq!(status, StatusCode::CREATED, "{info}");
    assert_eq!(info["runtime"], "sh");
    assert_eq!(info["state"], "running");
    assert!(info["end_reason"].is_null());
    let id = info["id"].as_str().unwrap();
    assert_eq!(id.len(), 24, "{id}");
    assert_eq!(service.backend.running(), 1);
    assert_eq!(service.creates(), 1);
    // An empty body opens the default runtime too.
    let answer = service
        .admin()
        .send(axum::http::Method::POST, "/v1/sessions", None, Vec::new())
        .await;
    assert_eq!(answer.status, StatusCode::CREATED);
    assert_eq!(answer.json()["runtime"], "sh");
}

#[tokio::test]
async fn create_opens_a_named_runtime_with_labels() {
    let service = TestService::default_service();
    let (status, info) = service
        .post(
            "/v1/sessions",
            json!({"runtime": "py", "labels": {"task": "t-42"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{info}");
    assert_eq!(info["runtime"], "py");
    assert_eq!(info["labels"], json!({"task": "t-42"}));
}

#[tokio::test]
async fn get_answers_the_session_as_created() {
    let service = TestService::default_service();
    let id = service.open(Some("py")).await;
    let (status, info) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(info["id"], id.as_str());
    assert_eq!(info["runtime"], "py");
    assert_eq!(info["state"], "running");
    // The fake platform reports 1 MiB and one process per sandbox.
    assert_eq!(info["memory_bytes"], 1 << 20);
    assert_eq!(info["process_count"], 1);
}

fn ids(list: &Value) -> Vec<String> {
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn list_shows_running_sessions_and_ended_ones_on_request() {
    let service = TestService::default_service();
    let first = service.open(None).await;
    let second = service.open(Some("py")).await;
    service.delete(&format!("/v1/sessions/{first}")).await;

    let (status, running) = service.get("/v1/sessions").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&running), vec![second.clone()]);

    let (status, all) = service.get("/v1/sessions?include_ended=true").await;
    assert_eq!(status, StatusCode::OK);
    let listed = ids(&all);
    assert_eq!(listed.len(), 2, "{all}");
    assert!(listed.contains(&first) && listed.contains(&second));
    let ended = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == first.as_str())
        .unwrap();
    assert_eq!(ended["state"], "ended");
}

#[tokio::test]
async fn close_ends_the_session_and_is_idempotent() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let path = format!("/v1/sessions/{id}");
    let (status, closed) = service.delete(&path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(closed["state"], "ended");
    assert_eq!(closed["end_reason"], "closed by the client");
    assert!(closed["ended_at"].is_string());
    assert_eq!(service.backend.running(), 0);

    let (status, again) = service.delete(&path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["state"], "ended");
    assert_eq!(again["ended_at"], closed["ended_at"]);

    let (_, info) = service.get(&path).await;
    assert_eq!(info["state"], "ended");
    assert_eq!(info["end_reason"], "closed by the client");
    // The slot is free again: the service of 4 opens 4 more.
    for _ in 0..4 {
        service.open(None).await;
    }
}

#[tokio::test]
async fn exec_answers_the_output_and_exit_code() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (status, result) = service.admin().exec(&id, "echo hello-world").await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["stdout"], "hello-world\n");
    assert_eq!(result["stderr"], "");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["timed_out"], false);

    let (status, result) = service.admin().exec(&id, "exit 3").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(result["exit_code"], 3);
    assert_eq!(result["stdout"], "");

    // argv runs without a shell; the fake echoes its last argument.
    let (status, result) = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({"argv": ["printf", "%s", "via-argv"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(result["stdout"], "via-argv\n");
}

/// The events of a Server-Sent Events body: (name, data as JSON).
fn events(body: &[u8]) -> Vec<(String, Value)> {
    let text = String::from_utf8_lossy(body);
    text.split("\n\n")
        .filter_map(|block| {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                match line.split_once(':') {
                    Some(("event", value)) => name = Some(value.trim().to_string()),
                    Some(("data", value)) => data += value.strip_prefix(' ').unwrap_or(value),
                    _ => {}
                }
            }
            Some((name?, serde_json::from_str(&data).unwrap()))
        })
        .collect()
}

#[tokio::test]
async fn exec_streams_its_output_then_the_same_result_when_asked() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let path = format!("/v1/sessions/{id}/exec");
    let body = serde_json::to_vec(&json!({"command": "seq 3"})).unwrap();
    let (_, plain) = service.post(&path, json!({"command": "seq 3"})).await;
    let streamed = service
        .admin()
        .accepting("text/event-stream")
        .send(Method::POST, &path, Some("application/json"), body)
        .await;
    assert_eq!(streamed.status, StatusCode::OK);
    assert!(streamed.headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let events = events(&streamed.body);
    let (last, result) = events.last().unwrap();
    assert_eq!(last, "result", "{events:?}");
    let output: Vec<u8> = events
        .iter()
        .filter(|(name, _)| name == "output")
        .flat_map(|(_, chunk)| {
            base64::engine::general_purpose::STANDARD
                .decode(chunk["base64"].as_str().unwrap())
                .unwrap()
        })
        .collect();
    assert_eq!(output, b"1\n2\n3\n", "{events:?}");
    let without_duration = |mut v: Value| {
        v["duration_ms"] = Value::Null;
        v
    };
    assert_eq!(without_duration(result.clone()), without_duration(plain));

    // Refused before it starts: an ordinary error answer, with its status.
    let unknown = service
        .admin()
        .accepting("text/event-stream")
        .send(
            Method::POST,
            "/v1/sessions/nope/exec",
            Some("application/json"),
            br#"{"command": "true"}"#.to_vec(),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.json()["error"]["code"], "not_found");
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    assert_eq!(log["entries"][0]["action"], "exec");
}

#[tokio::test]
async fn exec_passes_stdin() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (status, result) = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({"command": "cat", "stdin": "line one\nline two\n"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["stdout"], "line one\nline two\n");
    assert_eq!(result["exit_code"], 0);
}

#[tokio::test]
async fn exec_reports_a_timeout() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let started = std::time::Instant::now();
    let (status, result) = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({"command": "sleep 100", "timeout_secs": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["timed_out"], true);
    assert!(result["exit_code"].is_null());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    assert_eq!(log["entries"][0]["action"], "exec");
    assert_eq!(log["entries"][0]["status"], "error");
    assert_eq!(log["entries"][0]["error"], "timed out");
}

/// The entries of a session's log, oldest first, as (principal, interface, action, target).
async fn activity(client: &Client, id: &str) -> (Value, Vec<(String, String, String, String)>) {
    let (status, log) = client.get(&format!("/v1/sessions/{id}/activity")).await;
    assert_eq!(status, StatusCode::OK, "{log}");
    let mut entries: Vec<_> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let field = |name: &str| e[name].as_str().unwrap_or_default().to_string();
            (
                field("principal"),
                field("interface"),
                field("action"),
                field("target"),
            )
        })
        .collect();
    entries.reverse();
    (log, entries)
}

fn entry(
    principal: &str,
    interface: &str,
    action: &str,
    target: &str,
) -> (String, String, String, String) {
    (
        principal.into(),
        interface.into(),
        action.into(),
        target.into(),
    )
}

#[tokio::test]
async fn every_exec_is_in_the_activity_read_right_after_it() {
    // Entries are written off the request path; a read must still see each one.
    let service = TestService::default_service();
    let id = service.open(None).await;
    for round in 1..=20 {
        let (status, _) = service.admin().exec(&id, &format!("exit {round}")).await;
        assert_eq!(status, StatusCode::OK);
        let (log, entries) = activity(&service.admin(), &id).await;
        assert_eq!(entries.len(), 1 + round, "{log}");
        assert_eq!(log["entries"][0]["action"], "exec");
        assert_eq!(log["entries"][0]["exit_code"], round);
    }
}

#[tokio::test]
async fn activity_records_who_did_what_through_which_interface() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let cli = service.admin().via("cli");
    let id = cli.open(Some("py")).await;
    let (status, _) = service.admin().via("mcp").exec(&id, "exit 2").await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = service
        .admin()
        .via("dashboard")
        .delete(&format!("/v1/sessions/{id}"))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (log, entries) = activity(&service.admin(), &id).await;
    assert_eq!(
        entries,
        vec![
            entry("admin", "cli", "open", "py"),
            entry("admin", "mcp", "exec", "exit"),
            entry("admin", "dashboard", "close", "py"),
        ],
        "{log}"
    );
    assert_eq!(log["entries"][1]["exit_code"], 2);
    assert_eq!(log["entries"][2]["status"], "ok");

    // A tenant's operations name the tenant; an unknown client name is the plain API.
    let alpha = service.client(ALPHA_TOKEN).via("something-else");
    let id = alpha.open(None).await;
    alpha.exec(&id, "echo x").await;
    let (_, entries) = activity(&alpha, &id).await;
    assert_eq!(
        entries,
        vec![
            entry("tenant:alpha", "api", "open", "sh"),
            entry("tenant:alpha", "api", "exec", "echo"),
        ]
    );
}

#[tokio::test]
async fn activity_never_holds_a_payload() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (_, result) = service.admin().exec(&id, "echo secret-value").await;
    assert_eq!(result["stdout"], "secret-value\n");
    service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({"command": "cat", "stdin": "stdin-secret", "env": {"KEY": "env-secret"}}),
        )
        .await;
    let (status, _) = service
        .admin()
        .put_bytes(
            &format!("/v1/sessions/{id}/files/content?path=notes.txt"),
            b"file-secret",
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (log, entries) = activity(&service.admin(), &id).await;
    assert_eq!(entries[1], entry("admin", "api", "exec", "echo"));
    assert_eq!(entries[2], entry("admin", "api", "exec", "cat"));
    assert_eq!(
        entries[3],
        entry("admin", "api", "write_file", "/workspace/notes.txt")
    );
    assert_eq!(log["entries"][0]["bytes"], 11);
    let text = log.to_string();
    for secret in ["secret-value", "stdin-secret", "env-secret", "file-secret"] {
        assert!(!text.contains(secret), "{secret} in the log: {text}");
    }
}

#[tokio::test]
async fn runtimes_policy_and_stats_answer() {
    let service = TestService::default_service();
    let (status, runtimes) = service.get("/v1/runtimes").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(runtimes["default_runtime"], "sh");
    let states: Vec<(String, String)> = runtimes["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        states.contains(&("sh".into(), "ready".into())),
        "{runtimes}"
    );
    assert!(
        states.contains(&("py".into(), "ready".into())),
        "{runtimes}"
    );
    assert_eq!(states.len(), 3, "{runtimes}");

    let (status, policy) = service.get("/v1/policy").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(policy["max_timeout_secs"], 600);
    assert_eq!(policy["max_sessions"], 4);

    service.open(None).await;
    service.open(None).await;
    let (status, stats) = service.get("/v1/stats").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(stats["sessions"], 2);
    assert_eq!(stats["max_sessions"], 4);
    assert_eq!(stats["memory_bytes"], 2 << 20);
    assert_eq!(stats["runtimes_allowed"], 3);
}

#[tokio::test]
async fn a_command_the_agent_refuses_leaves_its_connection_for_the_next_request() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let exec = format!("/v1/sessions/{id}/exec");
    let reused = || {
        service
            .backend
            .reused
            .load(std::sync::atomic::Ordering::SeqCst)
    };
    let before = reused();
    let refused = service
        .post(&exec, json!({"command": "true", "cwd": "/no-such-dir"}))
        .await;
    assert_error(&refused, StatusCode::BAD_REQUEST, "spawn_failed");
    // The agent's refusal ended the exchange cleanly: on Kubernetes a new connection is a
    // port-forward through the API server, so the one that was refused is handed back.
    assert_eq!(
        reused(),
        before + 1,
        "the refused exec's connection was kept"
    );
    let ran = service.post(&exec, json!({"command": "echo ok"})).await;
    assert_eq!(ran.0, StatusCode::OK, "{}", ran.1);
    assert_eq!(reused(), before + 2);
}
