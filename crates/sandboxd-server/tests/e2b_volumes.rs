//! E2B's volume routes on the real router over the fake platform, which keeps no volumes:
//! each answers in E2B's shape and says so, and the volume content
//! API wants the volume's own token. The official SDK drives them on real Docker in
//! tests/e2b/test_volumes.py.

mod common;

use axum::http::{Method, StatusCode};
use common::{config, TestService, TOKEN};
use serde_json::json;

#[tokio::test]
async fn without_volumes_on_the_backend_each_route_says_so_in_e2b_words() {
    let service = TestService::start(&config(4, 0, ""));
    let e2b = service.anonymous().with_api_key(TOKEN);
    let made = e2b
        .send(
            Method::POST,
            "/volumes",
            Some("application/json"),
            json!({"name": "data"}).to_string().into_bytes(),
        )
        .await;
    assert_eq!(made.status, StatusCode::BAD_REQUEST);
    let message = made.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(message.contains("keeps no volumes"), "{message}");
    assert_eq!(made.json()["code"], 400, "E2B's error shape");

    let mounted = e2b
        .send(
            Method::POST,
            "/sandboxes",
            Some("application/json"),
            json!({"templateID": "base", "volumeMounts": [{"name": "data", "path": "/workspace/data"}]})
                .to_string()
                .into_bytes(),
        )
        .await;
    assert_eq!(
        mounted.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        mounted.json()
    );
    assert_eq!(service.creates(), 0, "nothing was started");

    let listed = e2b.send(Method::GET, "/volumes", None, Vec::new()).await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(listed.json(), json!([]));
    let missing = e2b
        .send(Method::GET, "/volumes/data", None, Vec::new())
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let unkeyed = service
        .anonymous()
        .send(Method::GET, "/volumes", None, Vec::new())
        .await;
    assert_eq!(unkeyed.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_volume_content_api_wants_the_volumes_own_token() {
    let service = TestService::start(&config(4, 0, ""));
    for client in [
        service.anonymous(),
        // The service token is no volume's token, nor is a made-up one.
        service.admin(),
        service.client("0123.abcd"),
    ] {
        for (method, path) in [
            (Method::GET, "/volumecontent/data/file?path=a.txt"),
            (Method::PUT, "/volumecontent/data/file?path=a.txt"),
            (Method::GET, "/volumecontent/data/dir?path=/"),
            (Method::DELETE, "/volumecontent/data/path?path=a.txt"),
            (Method::PATCH, "/volumecontent/data/path?path=a.txt"),
        ] {
            let answer = client.send(method.clone(), path, None, b"x".to_vec()).await;
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{method} {path}");
            let message = answer.json()["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            assert!(message.contains("volume token"), "{message}");
        }
    }
}
