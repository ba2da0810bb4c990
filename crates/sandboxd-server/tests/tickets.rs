//! Connection tickets: a single-use, short-lived credential for one terminal WebSocket or one
//! output stream of one session, as the caller that asked for it. A WebSocket upgrade cannot
//! complete through `oneshot`, so the terminal's answer `400 not_a_websocket` shows the ticket
//! passed the token check; `401` shows it did not.

mod common;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{header, Request, StatusCode};
use common::*;
use http_body_util::BodyExt;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tower::ServiceExt;

/// A GET with the given headers and no `Authorization`, from `peer`.
async fn get_with(
    service: &TestService,
    path: &str,
    headers: &[(&str, &str)],
    peer: SocketAddr,
) -> (StatusCode, Value) {
    let mut request = Request::get(path).header(header::HOST, "localhost");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut request = request.body(Body::empty()).unwrap();
    request.extensions_mut().insert(ConnectInfo(peer));
    let response = service.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

fn peer() -> SocketAddr {
    "192.0.2.7:50000".parse().unwrap()
}

/// Offers `ticket` on the session's terminal WebSocket, as the dashboard does.
async fn terminal_with(service: &TestService, session: &str, ticket: &str) -> (StatusCode, Value) {
    let protocols = format!("sandboxd, ticket.{ticket}");
    get_with(
        service,
        &format!("/v1/sessions/{session}/pty"),
        &[
            ("upgrade", "websocket"),
            ("connection", "upgrade"),
            ("sec-websocket-version", "13"),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("sec-websocket-protocol", &protocols),
        ],
        peer(),
    )
    .await
}

async fn ticket(client: &Client, session: &str) -> String {
    let (status, body) = client
        .post(&format!("/v1/sessions/{session}/tickets"), Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["ticket"].as_str().unwrap().to_string()
}

#[track_caller]
fn assert_passed(answer: &(StatusCode, Value)) {
    assert_error(answer, StatusCode::BAD_REQUEST, "not_a_websocket");
}

#[tokio::test]
async fn a_ticket_opens_one_terminal_of_its_session() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let other = service.open(None).await;

    let (status, body) = service
        .post(&format!("/v1/sessions/{id}/tickets"), Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let first = body["ticket"].as_str().unwrap();
    assert_eq!(first.len(), 64);
    assert_eq!(body["expires_in_secs"], 30);
    let expires = body["expires_at"].as_str().unwrap();
    assert!(expires.ends_with('Z') && expires.contains('T'), "{expires}");

    assert_passed(&terminal_with(&service, &id, first).await);
    // Spent.
    assert_error(
        &terminal_with(&service, &id, first).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
    // Another session's terminal does not take it, and that spends it too.
    let second = ticket(&service.admin(), &id).await;
    assert_error(
        &terminal_with(&service, &other, &second).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
    assert_error(
        &terminal_with(&service, &id, &second).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
    // Nor does a made-up one, or the long-lived token offered as a ticket.
    let made_up = "0".repeat(64);
    for wrong in [made_up.as_str(), TOKEN, ""] {
        assert_error(
            &terminal_with(&service, &id, wrong).await,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        );
    }
}

#[tokio::test]
async fn tickets_expire() {
    let service = TestService::default_service();
    service.core.set_ticket_lifetime(Duration::from_millis(50));
    let id = service.open(None).await;
    let ticket = ticket(&service.admin(), &id).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_error(
        &terminal_with(&service, &id, &ticket).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
}

#[tokio::test]
async fn a_ticket_opens_an_output_stream_and_nothing_else() {
    let service = TestService::default_service();
    let id = service.open(None).await;

    // The ticket passes the token check and leaves the query (which takes no `ticket`): the
    // fake agent then has no such process, which a real one would stream.
    let ticket = ticket(&service.admin(), &id).await;
    let stream = format!("/v1/sessions/{id}/processes/p1/stream");
    let answer = get_with(
        &service,
        &format!("{stream}?since=0&ticket={ticket}"),
        &[],
        peer(),
    )
    .await;
    assert_error(&answer, StatusCode::NOT_FOUND, "not_found");
    let again = get_with(&service, &format!("{stream}?ticket={ticket}"), &[], peer()).await;
    assert_error(&again, StatusCode::UNAUTHORIZED, "unauthorized");

    // Any other route: 401, in the query or as a subprotocol.
    for path in [
        format!("/v1/sessions/{id}"),
        format!("/v1/sessions/{id}/processes"),
        format!("/v1/sessions/{id}/processes/p1"),
        "/v1/sessions".to_string(),
    ] {
        let ticket = self::ticket(&service.admin(), &id).await;
        let answer = get_with(&service, &format!("{path}?ticket={ticket}"), &[], peer()).await;
        assert_error(&answer, StatusCode::UNAUTHORIZED, "unauthorized");
        let protocols = format!("sandboxd, ticket.{ticket}");
        let answer = get_with(
            &service,
            &path,
            &[
                ("upgrade", "websocket"),
                ("sec-websocket-protocol", &protocols),
            ],
            peer(),
        )
        .await;
        assert_error(&answer, StatusCode::UNAUTHORIZED, "unauthorized");
    }
    // Not even the route that issues tickets.
    let ticket = self::ticket(&service.admin(), &id).await;
    let (status, _) = service
        .anonymous()
        .post(
            &format!("/v1/sessions/{id}/tickets?ticket={ticket}"),
            Value::Null,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn tickets_are_scoped_to_the_tenant_that_asked() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let beta = service.client(BETA_TOKEN);
    let id = alpha.open(None).await;

    assert_error(
        &beta
            .post(&format!("/v1/sessions/{id}/tickets"), Value::Null)
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    // A ticket acts as the tenant it was issued to: beta's ticket for its own session does
    // not reach alpha's, and alpha's opens alpha's terminal.
    let betas = beta.open(None).await;
    let beta_ticket = ticket(&beta, &betas).await;
    assert_error(
        &terminal_with(&service, &id, &beta_ticket).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
    let alpha_ticket = ticket(&alpha, &id).await;
    assert_passed(&terminal_with(&service, &id, &alpha_ticket).await);
    // Without a token no ticket is issued.
    let (status, _) = service
        .anonymous()
        .post(&format!("/v1/sessions/{id}/tickets"), Value::Null)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn wrong_tickets_count_as_failed_attempts() {
    let service = TestService::start(&config(4, 0, "[policy]\nauth_failures_per_minute = 3\n"));
    let id = service.open(None).await;
    let made_up = "f".repeat(64);
    for _ in 0..3 {
        assert_error(
            &terminal_with(&service, &id, &made_up).await,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        );
    }
    assert_error(
        &terminal_with(&service, &id, &made_up).await,
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_attempts",
    );
    // A right ticket is still served.
    let ticket = ticket(&service.admin(), &id).await;
    assert_passed(&terminal_with(&service, &id, &ticket).await);
}
