//! Errors with a remedy: the REST face words it with the route that helps and names its key;
//! the core's own message names no route, so other faces can word it their way.

mod common;

use axum::http::StatusCode;
use common::*;
use sandboxd_api::{without_rest_wording, Remedy};
use serde_json::{json, Value};

/// The message and the remedy's key of an error answer, checked against the remedy's
/// REST wording, and the message without it.
fn remedied(answer: &(StatusCode, Value), remedy: Remedy) -> String {
    let error = &answer.1["error"];
    assert_eq!(error["remedy"], remedy.key(), "{answer:?}");
    let message = error["message"].as_str().unwrap();
    assert!(message.ends_with(remedy.rest_wording()), "{message}");
    let core = without_rest_wording(message, remedy);
    assert!(
        !core.contains("/v1"),
        "the core's message names a route: {core}"
    );
    core.to_string()
}

#[tokio::test]
async fn each_remedy_is_worded_with_a_route_and_keyed() {
    let service = TestService::start(&config(1, 0, ""));
    let missing = service.get("/v1/sessions/no-such-session").await;
    assert_error(&missing, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(
        remedied(&missing, Remedy::ListSessions),
        "no session with id \"no-such-session\""
    );

    let unknown = service.admin().create(Some("cobol")).await;
    assert_error(&unknown, StatusCode::BAD_REQUEST, "unknown_runtime");
    assert!(remedied(&unknown, Remedy::ListRuntimes).contains("allowed: "));

    let id = service.open(None).await;
    let full = service.admin().create(None).await;
    assert_error(&full, StatusCode::TOO_MANY_REQUESTS, "service_full");
    remedied(&full, Remedy::CloseSession);

    let no_process = service
        .get(&format!("/v1/sessions/{id}/processes/p999"))
        .await;
    assert_error(&no_process, StatusCode::NOT_FOUND, "not_found");
    remedied(&no_process, Remedy::ListProcesses);

    service.delete(&format!("/v1/sessions/{id}")).await;
    let ended = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({"command": "true"}),
        )
        .await;
    assert_error(&ended, StatusCode::CONFLICT, "session_ended");
    assert!(remedied(&ended, Remedy::OpenSession).contains("has ended"));
}

#[tokio::test]
async fn an_error_without_a_remedy_has_no_remedy_field() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let answer = service
        .post(
            &format!("/v1/sessions/{id}/exec"),
            json!({"command": "true", "timeout_secs": 0}),
        )
        .await;
    assert_error(&answer, StatusCode::BAD_REQUEST, "invalid_timeout");
    assert!(answer.1["error"].get("remedy").is_none(), "{answer:?}");
}
