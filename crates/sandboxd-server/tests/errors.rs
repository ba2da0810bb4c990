//! Every error code of the REST API with its HTTP status, as a client meets it.

mod common;

use axum::http::{header, Method, StatusCode};
use common::*;
use serde_json::json;
use std::sync::atomic::Ordering;

#[tokio::test]
async fn no_token_is_unauthorized_with_a_challenge() {
    let service = TestService::default_service();
    let answer = service
        .anonymous()
        .send(Method::GET, "/v1/sessions", None, Vec::new())
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.headers[header::WWW_AUTHENTICATE], "Bearer");
    assert_eq!(answer.json()["error"]["code"], "unauthorized");
}

#[tokio::test]
async fn a_wrong_token_is_unauthorized_and_opens_nothing() {
    let service = TestService::default_service();
    let intruder = service.client("not-the-token-at-all-0000");
    let answer = intruder
        .send(
            Method::POST,
            "/v1/sessions",
            Some("application/json"),
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.headers[header::WWW_AUTHENTICATE], "Bearer");
    assert_eq!(answer.json()["error"]["code"], "unauthorized");
    assert_eq!(service.creates(), 0);
    // The health check needs no token.
    let (status, body) = service.anonymous().get("/healthz").await;
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ok"})));
}

#[tokio::test]
async fn repeated_failures_are_throttled_but_the_right_token_is_always_served() {
    let service = TestService::start(&config(4, 0, "[policy]\nauth_failures_per_minute = 3\n"));
    let peer = "192.0.2.7:50000".parse().unwrap();
    let intruder = service.client("guessed-token-000000000").at_peer(peer);
    for _ in 0..3 {
        assert_error(
            &intruder.get("/v1/sessions").await,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        );
    }
    assert_error(
        &intruder.get("/v1/sessions").await,
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_attempts",
    );
    // Whoever else shares the address (the dashboard, the CLI, an MCP bridge) is still served.
    let same_address_right_token = service.admin().at_peer(peer);
    assert_eq!(
        same_address_right_token.get("/v1/sessions").await.0,
        StatusCode::OK
    );
    // Another address is not throttled yet.
    let other = service
        .client("guessed-token-000000000")
        .at_peer("192.0.2.8:50000".parse().unwrap());
    assert_error(
        &other.get("/v1/sessions").await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
}

#[tokio::test]
async fn rotating_addresses_meets_the_overall_budget() {
    // 3 per address, 30 across all addresses in a minute: 30 addresses fail once each.
    let service = TestService::start(&config(4, 0, "[policy]\nauth_failures_per_minute = 3\n"));
    for n in 0..30u16 {
        let peer =
            std::net::SocketAddr::from(([127, 0, 0, 10 + u8::try_from(n).unwrap()], 40000 + n));
        let guess = service.client("guessed-token-000000000").at_peer(peer);
        assert_error(
            &guess.get("/v1/sessions").await,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        );
    }
    let fresh = service
        .client("guessed-token-000000000")
        .at_peer("127.0.0.99:50000".parse().unwrap());
    assert_error(
        &fresh.get("/v1/sessions").await,
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_attempts",
    );
    let right = service.admin().at_peer("127.0.0.99:50001".parse().unwrap());
    assert_eq!(right.get("/v1/sessions").await.0, StatusCode::OK);
}

#[tokio::test]
async fn unknown_routes_and_sessions_are_not_found() {
    let service = TestService::default_service();
    assert_error(
        &service.get("/v1/no-such-thing").await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &service.get("/v1/sessions/0123456789abcdef01234567").await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    let exec = service.admin().exec("nope", "echo hi").await;
    assert_error(&exec, StatusCode::NOT_FOUND, "not_found");
    assert_error(
        &service.delete("/v1/sessions/nope").await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
}

#[tokio::test]
async fn a_create_naming_container_settings_is_refused_by_field() {
    let service = TestService::default_service();
    let answer = service
        .post(
            "/v1/sessions",
            json!({"runtime": "sh", "image": "evil/root", "privileged": true}),
        )
        .await;
    assert_error(&answer, StatusCode::BAD_REQUEST, "forbidden_field");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("image") && message.contains("privileged"),
        "{message}"
    );
    assert_eq!(service.creates(), 0);
}

#[tokio::test]
async fn a_create_body_that_is_not_json_is_invalid_json() {
    let service = TestService::default_service();
    let answer = service
        .admin()
        .send(
            Method::POST,
            "/v1/sessions",
            Some("application/json"),
            b"{\"runtime\": ".to_vec(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["error"]["code"], "invalid_json");
    // JSON of the wrong shape is an invalid request.
    assert_error(
        &service.post("/v1/sessions", json!(["sh"])).await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
}

#[tokio::test]
async fn an_unknown_runtime_is_refused_with_the_allowed_ones() {
    let service = TestService::default_service();
    let answer = service.admin().create(Some("cobol")).await;
    assert_error(&answer, StatusCode::BAD_REQUEST, "unknown_runtime");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("sh") && message.contains("py"),
        "{message}"
    );
}

#[tokio::test]
async fn a_create_body_over_64_kib_is_payload_too_large() {
    let service = TestService::default_service();
    let labels: serde_json::Map<String, serde_json::Value> = (0..400)
        .map(|i| (format!("k{i}"), json!("v".repeat(200))))
        .collect();
    let body = serde_json::to_vec(&json!({ "labels": labels })).unwrap();
    assert!(body.len() > 64 << 10);
    let answer = service
        .admin()
        .send(Method::POST, "/v1/sessions", Some("application/json"), body)
        .await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(answer.json()["error"]["code"], "payload_too_large");
    assert_eq!(service.creates(), 0);
}

#[tokio::test]
async fn a_full_service_is_service_full() {
    let service = TestService::start(&config(1, 0, ""));
    service.open(None).await;
    assert_error(
        &service.admin().create(None).await,
        StatusCode::TOO_MANY_REQUESTS,
        "service_full",
    );
    assert_eq!(service.creates(), 1);
}

#[tokio::test]
async fn exec_after_close_is_session_ended() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    assert_eq!(
        service.delete(&format!("/v1/sessions/{id}")).await.0,
        StatusCode::OK
    );
    let answer = service.admin().exec(&id, "echo hi").await;
    assert_error(&answer, StatusCode::CONFLICT, "session_ended");
    let answer = service
        .admin()
        .put_bytes(&format!("/v1/sessions/{id}/files/content?path=a"), b"x")
        .await;
    assert_error(&answer, StatusCode::CONFLICT, "session_ended");
}

#[tokio::test]
async fn a_tenant_over_its_quota_is_tenant_quota() {
    let service = TestService::start(&config(4, 0, &tenant("solo", ALPHA_TOKEN, 1, None)));
    let solo = service.client(ALPHA_TOKEN);
    solo.open(None).await;
    assert_error(
        &solo.create(None).await,
        StatusCode::TOO_MANY_REQUESTS,
        "tenant_quota",
    );
    // The service itself is not full: the administrator still opens one.
    service.open(None).await;
}

#[tokio::test]
async fn administrator_routes_are_admin_only_for_a_tenant() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    service
        .core
        .set_engine_report(json!({"engine_version": "fake"}));
    let alpha = service.client(ALPHA_TOKEN);
    for path in ["/v1/config", "/v1/engine", "/metrics"] {
        assert_error(&alpha.get(path).await, StatusCode::FORBIDDEN, "admin_only");
    }
    assert_error(
        &alpha.post("/v1/runtimes/sh/build", json!(null)).await,
        StatusCode::FORBIDDEN,
        "admin_only",
    );
    // The administrator reads them.
    let (status, config) = service.get("/v1/config").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(config["token"], "<redacted>");
    assert!(!config.to_string().contains(TOKEN));
    assert_eq!(
        service.get("/v1/engine").await,
        (StatusCode::OK, json!({"engine_version": "fake"}))
    );
    let metrics = service
        .admin()
        .send(Method::GET, "/metrics", None, Vec::new())
        .await;
    assert_eq!(metrics.status, StatusCode::OK);
}

#[tokio::test]
async fn a_runtime_whose_image_is_missing_is_image_missing() {
    let service = TestService::default_service();
    assert_error(
        &service.admin().create(Some("ghost")).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "image_missing",
    );
    assert_eq!(service.backend.running(), 0);
}

#[tokio::test]
async fn a_failing_engine_is_engine_error() {
    let service = TestService::default_service();
    service.backend.failing_creates.store(1, Ordering::SeqCst);
    assert_error(
        &service.admin().create(None).await,
        StatusCode::BAD_GATEWAY,
        "engine_error",
    );
}

#[tokio::test]
async fn file_paths_are_checked() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    for path in [
        format!("/v1/sessions/{id}/files/content"),
        format!("/v1/sessions/{id}/files/content?path="),
        format!("/v1/sessions/{id}/files/content?path=a%00b"),
    ] {
        assert_error(
            &service.get(&path).await,
            StatusCode::BAD_REQUEST,
            "invalid_path",
        );
    }
}

#[tokio::test]
async fn exec_timeouts_are_checked_against_the_policy() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let path = format!("/v1/sessions/{id}/exec");
    assert_error(
        &service
            .post(&path, json!({"command": "echo hi", "timeout_secs": 0}))
            .await,
        StatusCode::BAD_REQUEST,
        "invalid_timeout",
    );
    let answer = service
        .post(&path, json!({"command": "echo hi", "timeout_secs": 100000}))
        .await;
    assert_error(&answer, StatusCode::BAD_REQUEST, "timeout_too_large");
    assert!(answer.1["error"]["message"]
        .as_str()
        .unwrap()
        .contains("600"));
}

#[tokio::test]
async fn malformed_queries_and_bodies_are_invalid_requests() {
    let service = TestService::default_service();
    assert_error(
        &service.get("/v1/sessions?include_ended=maybe").await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
    let id = service.open(None).await;
    assert_error(
        &service
            .get(&format!("/v1/sessions/{id}/files?path=.&colour=red"))
            .await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
    let exec = format!("/v1/sessions/{id}/exec");
    for body in [
        json!({}),
        json!({"command": "echo", "argv": ["echo"]}),
        json!({"command": "   "}),
        json!({"command": 42}),
    ] {
        assert_error(
            &service.post(&exec, body).await,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        );
    }
}
