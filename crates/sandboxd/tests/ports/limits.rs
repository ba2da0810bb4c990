//! The limits on a session's ports, from the policy: share links per session, connections per
//! session and per tenant, and the bytes per second they carry.

use super::{base_config, serving_with, share, through, TestService, TOKEN};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// A session's share links stop at `policy.max_shares_per_session`, in the words of the policy;
/// a revoked one gives its place back. (The per-tenant and service-wide counts are the same
/// check over more links.)
#[tokio::test]
async fn share_links_per_session_are_capped_by_policy() {
    let service = TestService::start(&base_config(2, "max_shares_per_session = 2"));
    let id = service.open("sh").await;
    let (_, first) = share(&service, &id, 8001, 600).await;
    share(&service, &id, 8002, 600).await;
    let refused = service
        .post(&format!("/v1/sessions/{id}/ports/8003/share"))
        .json(&json!({"ttl_secs": 600}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 429);
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["error"]["code"], "too_many_shares", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("2 a session") && message.contains("policy.max_shares_per_session"),
        "{message}"
    );
    let revoked = service
        .delete(&format!("/v1/sessions/{id}/shares/{first}"))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    share(&service, &id, 8003, 600).await;
}

/// A WebSocket held open to the test server's port 8002 of `id`: one port connection.
async fn held_connection(
    service: &TestService,
    id: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let url = format!(
        "{}{}",
        service.url.replacen("http", "ws", 1),
        through(id, 8002, "ws")
    );
    let mut request = url.into_client_request().unwrap();
    let bearer = format!("Bearer {TOKEN}").parse().unwrap();
    request.headers_mut().insert("authorization", bearer);
    tokio_tungstenite::connect_async(request).await.unwrap().0
}

/// With two connections held and a cap of two, a third is refused; closing one frees a place.
/// The refusal's message.
async fn third_refused_until_one_closes(service: &TestService, id: &str) -> String {
    let first = held_connection(service, id).await;
    let _second = held_connection(service, id).await;
    let refused = service.get(&through(id, 8001, "")).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    let error: Value = refused.json().await.unwrap();
    assert_eq!(
        error["error"]["code"], "too_many_port_connections",
        "{error}"
    );
    drop(first);
    let mut freed = false;
    for _ in 0..100 {
        let status = service
            .get(&through(id, 8001, ""))
            .send()
            .await
            .unwrap()
            .status();
        if status == 200 {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(freed, "a closed connection frees its place");
    error["error"]["message"].as_str().unwrap().to_string()
}

/// The administrator's sessions count as one tenant: its connections to ports, all sessions
/// together, stop at `policy.max_port_connections_per_tenant` while the session has room.
#[tokio::test]
async fn connections_per_tenant_are_capped_by_policy() {
    let (service, id) =
        serving_with("max_port_connections = 3\nmax_port_connections_per_tenant = 2").await;
    let message = third_refused_until_one_closes(&service, &id).await;
    assert!(
        message.contains("the administrator has 2")
            && message.contains("policy.max_port_connections_per_tenant"),
        "{message}"
    );
}

#[tokio::test]
async fn connections_per_session_and_bytes_per_second_are_capped_by_policy() {
    let (service, id) = serving_with("max_port_connections = 2\nport_bytes_per_sec = \"1m\"").await;
    let message = third_refused_until_one_closes(&service, &id).await;
    assert!(
        message.contains("(policy.max_port_connections)"),
        "{message}"
    );

    // 3 MB at 1 MB a second cannot come in much less than 3 s.
    let written = service
        .put(&format!("/v1/sessions/{id}/files/content?path=three.bin"))
        .body(vec![7u8; 3 << 20])
        .send()
        .await
        .unwrap();
    assert_eq!(written.status(), 200);
    let started = std::time::Instant::now();
    let body = service
        .get(&through(&id, 8001, "three.bin"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(body.len(), 3 << 20);
    assert!(
        started.elapsed() >= Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
}
