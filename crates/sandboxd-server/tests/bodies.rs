//! Request bodies against the service-wide budget (`policy.max_body_bytes_in_flight`), and
//! commands too large for the agent refused before they reach it.

mod common;

use axum::body::{Body, Bytes};
use axum::http::{header, Method, Request, StatusCode};
use common::*;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// A 64 KiB budget: one 40 KiB body fits, two do not.
fn small_budget() -> TestService {
    TestService::start(&config(
        4,
        0,
        "[policy]\nmax_body_bytes_in_flight = \"64k\"\n",
    ))
}

fn exec_body(stdin_len: usize) -> Value {
    json!({ "command": "cat", "stdin": "a".repeat(stdin_len) })
}

/// An exec request whose body arrives in chunks sent through the returned channel, with no
/// length known in advance.
fn streamed_exec(
    id: &str,
) -> (
    Request<Body>,
    tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    let (sender, receiver) = tokio::sync::mpsc::channel(4);
    let chunks = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    let request = Request::builder()
        .method(Method::POST)
        .uri(format!("/v1/sessions/{id}/exec"))
        .header(header::HOST, "localhost")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(chunks))
        .unwrap();
    (request, sender)
}

#[tokio::test]
async fn a_spent_budget_refuses_with_busy_until_the_holder_is_answered() {
    let service = small_budget();
    let id = service.open(None).await;
    let path = format!("/v1/sessions/{id}/exec");

    // A slow sender: 40 KiB of its body arrive, then nothing until it is told to finish.
    let (request, sender) = streamed_exec(&id);
    let holder = tokio::spawn(service.router.clone().oneshot(request));
    let head = format!(
        "{{\"command\": \"cat\", \"stdin\": \"{}",
        "a".repeat(40 << 10)
    );
    sender.send(Ok(Bytes::from(head))).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Its share leaves too little for another 40 KiB body: refused after a short wait.
    let started = Instant::now();
    let refused = service.post(&path, exec_body(40 << 10)).await;
    assert_error(&refused, StatusCode::SERVICE_UNAVAILABLE, "service_busy");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(10),
        "refused after {waited:?}"
    );
    let message = refused.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("max_body_bytes_in_flight"), "{message}");
    // A request without a body takes no share.
    let (status, _) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(status, StatusCode::OK);

    // The holder finishes and is answered; its share is released with the answer.
    sender.send(Ok(Bytes::from_static(b"\"}"))).await.unwrap();
    drop(sender);
    let answer = holder.await.unwrap().unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let body = answer.into_body().collect().await.unwrap().to_bytes();
    let result: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(result["stdout"].as_str().unwrap().len(), 40 << 10);

    let (status, result) = service.post(&path, exec_body(40 << 10)).await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["stdout"].as_str().unwrap().len(), 40 << 10);
}

#[tokio::test]
async fn a_slow_sender_given_up_on_releases_its_share() {
    let service = small_budget();
    let id = service.open(None).await;
    let (request, sender) = streamed_exec(&id);
    let holder = tokio::spawn(service.router.clone().oneshot(request));
    let head = format!(
        "{{\"command\": \"cat\", \"stdin\": \"{}",
        "a".repeat(40 << 10)
    );
    sender.send(Ok(Bytes::from(head))).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The client goes away mid-body (as when its connection drops).
    holder.abort();
    let _ = holder.await;
    let (status, result) = service
        .post(&format!("/v1/sessions/{id}/exec"), exec_body(40 << 10))
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
}

#[tokio::test]
async fn a_body_larger_than_the_whole_budget_is_too_large_not_busy() {
    let service = small_budget();
    let id = service.open(None).await;
    let path = format!("/v1/sessions/{id}/exec");
    // Its length known up front: refused before it is read.
    let answer = service.post(&path, exec_body(100 << 10)).await;
    assert_error(&answer, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("max_body_bytes_in_flight"), "{message}");

    // Its length unknown: refused once what arrived outgrows the budget.
    let (request, sender) = streamed_exec(&id);
    let pending = tokio::spawn(service.router.clone().oneshot(request));
    let head = format!(
        "{{\"command\": \"cat\", \"stdin\": \"{}",
        "a".repeat(8 << 10)
    );
    sender.send(Ok(Bytes::from(head))).await.unwrap();
    for _ in 0..12 {
        if sender
            .send(Ok(Bytes::from("a".repeat(8 << 10))))
            .await
            .is_err()
        {
            break;
        }
    }
    drop(sender);
    let answer = pending.await.unwrap().unwrap();
    assert_eq!(answer.status(), StatusCode::PAYLOAD_TOO_LARGE);

    // Nothing is left held.
    let (status, result) = service.post(&path, exec_body(40 << 10)).await;
    assert_eq!(status, StatusCode::OK, "{result}");
}

#[tokio::test]
async fn the_policy_shows_the_budget() {
    let (status, policy) = small_budget().get("/v1/policy").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(policy["max_body_bytes_in_flight"], 64 << 10);
    let (_, policy) = TestService::default_service().get("/v1/policy").await;
    assert_eq!(policy["max_body_bytes_in_flight"], 256 << 20);
}

#[tokio::test]
async fn a_command_too_large_for_the_agent_is_refused_before_it_reaches_it() {
    let service = TestService::default_service();
    let id = service.open(None).await;

    let huge = "x".repeat(3 << 20);
    let answer = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({ "argv": ["echo", huge] }),
        )
        .await;
    assert_error(&answer, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("stdin"),
        "says what to do instead: {message}"
    );

    // The same for the environment, and for a background process (its body limit is 1 MiB).
    let answer = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({ "command": "true", "env": { "BIG": "y".repeat(600 << 10) } }),
        )
        .await;
    assert_error(&answer, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    let answer = service
        .post(
            &format!("/v1/sessions/{id}/processes"),
            json!({ "argv": ["echo", "z".repeat(600 << 10)] }),
        )
        .await;
    assert_error(&answer, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");

    // None reached the agent: nothing was recorded as run.
    let (_, activity) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let entries = activity["entries"].as_array().expect("an activity log");
    assert!(
        !entries
            .iter()
            .any(|e| e["action"] == "exec" || e["action"] == "process_start"),
        "{activity}"
    );

    // A large command under the limit still runs.
    let (status, result) = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({ "argv": ["echo", "w".repeat(100 << 10)] }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
}

/// Sends `request` on `stream` and reads one answer whole (its head and a `Content-Length` body).
async fn exchange(stream: &mut tokio::net::TcpStream, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        assert!(
            read > 0,
            "the connection closed: {:?}",
            String::from_utf8_lossy(&answer)
        );
        answer.extend_from_slice(&chunk[..read]);
        let text = String::from_utf8_lossy(&answer).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|line| {
                    line.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(str::to_string)
                })
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
    }
}

#[tokio::test]
async fn a_body_refused_unread_is_drained_so_the_connection_lives_on() {
    let service = TestService::default_service();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = service.router.clone();
    tokio::spawn(async move {
        let app = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
        axum::serve(listener, app).await
    });
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let oversized = 70_000;
    // Refused on its Content-Length alone (413), then without a token (401): neither handler
    // reads the body, and the next request on the same connection must still be answered.
    for (token, status) in [(Some(TOKEN), "413"), (None, "401")] {
        let mut request = format!(
            "POST /v1/sessions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {oversized}\r\n{}\r\n",
            token.map_or(String::new(), |token| format!("authorization: Bearer {token}\r\n"))
        )
        .into_bytes();
        request.extend(std::iter::repeat_n(b' ', oversized));
        let answer = exchange(&mut stream, &request).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{answer}"
        );
    }
    let health = exchange(
        &mut stream,
        b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n",
    )
    .await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
}
