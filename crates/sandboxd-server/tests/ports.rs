//! A session's ports through the REST face, over the fake agent (nothing listens in a fake
//! sandbox); the proxy itself is tested against real servers in the sandboxd crate.

mod common;

use axum::http::{Method, StatusCode};
use common::*;
use serde_json::json;

#[tokio::test]
async fn ports_are_listed_and_a_closed_port_is_a_bad_gateway_logged_by_number() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (status, list) = service.get(&format!("/v1/sessions/{id}/ports")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list, json!({"ports": []}));
    let answer = service
        .admin()
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/ports/8000/api?x=1"),
            None,
            b"body".to_vec(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_GATEWAY);
    assert_eq!(answer.json()["error"]["code"], "port_closed");
    for bad in ["0", "65536", "http"] {
        assert_error(
            &service
                .get(&format!("/v1/sessions/{id}/ports/{bad}/"))
                .await,
            StatusCode::BAD_REQUEST,
            "invalid_port",
        );
    }
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let newest = &log["entries"][0];
    assert_eq!(
        (&newest["action"], &newest["target"]),
        (&json!("port_connect"), &json!("8000"))
    );
    assert_eq!(newest["status"], "error");
    assert!(
        !log.to_string().contains("api?x=1"),
        "the path is not logged: {log}"
    );
}

#[tokio::test]
async fn the_proxy_needs_the_token() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let answer = service
        .anonymous()
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/ports/8000/"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}
