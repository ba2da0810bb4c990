//! The OpenAPI document covers every route the server answers: the router's own route table
//! (its paths, and for each path the methods it answers) is compared with the paths and
//! operations of the document the router serves at `/v1/openapi.json`.

mod common;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use common::{TestService, TOKEN};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tower::ServiceExt;

/// The service's router, as `sandboxd serve` builds it, over the fake platform.
fn router() -> (TestService, Router) {
    let service = TestService::default_service();
    let router = service.router.clone();
    (service, router)
}

/// The paths the router routes, read from its `Debug` form (axum has no other way to list
/// them), in OpenAPI's notation: `{*path}` becomes `{path}`.
fn routed_paths(router: &Router) -> BTreeSet<String> {
    let debug = format!("{router:?}");
    let path_router = debug
        .split_once("path_router:")
        .and_then(|(_, rest)| rest.split_once("fallback_router:"))
        .map(|(paths, _)| paths)
        .expect("axum's Router shows its path router");
    let paths: BTreeSet<String> = path_router
        .split("RouteId(")
        .filter_map(|part| part.split_once("): \"")?.1.split_once('"'))
        .map(|(path, _)| path.replace("{*", "{"))
        .collect();
    assert!(
        paths.len() > 5,
        "the router's Debug form lists no routes; has axum changed it? {debug:.500}"
    );
    paths
}

/// A request for a path template, with every parameter filled in.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "x"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

async fn send(router: &Router, method: Method, path: &str) -> axum::response::Response {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, "127.0.0.1:7717")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    router.clone().oneshot(request).await.unwrap()
}

/// The methods a path answers, from the `Allow` header of the 405 a method nobody routes gets.
async fn routed_methods(router: &Router, path: &str) -> BTreeSet<String> {
    let response = send(router, Method::TRACE, &concrete(path)).await;
    assert_eq!(
        response.status(),
        StatusCode::METHOD_NOT_ALLOWED,
        "TRACE {path} should be refused by the router"
    );
    let allow = response.headers()[header::ALLOW].to_str().unwrap();
    allow
        .split(',')
        .map(|m| m.trim().to_ascii_lowercase())
        // axum answers HEAD wherever it answers GET.
        .filter(|m| !m.is_empty() && m != "head")
        .collect()
}

#[tokio::test]
async fn every_route_the_server_answers_is_in_the_document() {
    let (_service, router) = router();

    let response = send(&router, Method::GET, "/v1/openapi.json").await;
    assert_eq!(response.status(), StatusCode::OK);
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let document: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    let documented: BTreeMap<String, BTreeSet<String>> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(path, item)| {
            let methods = item
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| {
                    ["get", "put", "post", "delete", "patch", "options", "trace"]
                        .contains(&k.as_str())
                })
                .cloned()
                .collect();
            (path.clone(), methods)
        })
        .collect();

    let routed = routed_paths(&router);
    let documented_paths: BTreeSet<String> = documented.keys().cloned().collect();
    assert_eq!(
        routed.difference(&documented_paths).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "routes the server answers that the document does not describe"
    );
    assert_eq!(
        documented_paths.difference(&routed).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "paths the document describes that the server does not answer"
    );
    for path in &routed {
        assert_eq!(
            routed_methods(&router, path).await,
            documented[path],
            "the methods of {path}: answered (left) and documented (right)"
        );
    }

    // Each operation says what it answers, errors included.
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            assert!(
                // 101: the terminal's switch to a WebSocket.
                responses
                    .keys()
                    .any(|status| status.starts_with('2') || status == "101"),
                "{method} {path} documents no success"
            );
            assert!(
                responses.contains_key("403"),
                "{method} {path} does not document the guard's 403"
            );
        }
    }
}

#[tokio::test]
async fn the_document_needs_the_token() {
    let (_service, router) = router();
    let request = Request::get("/v1/openapi.json")
        .body(Body::empty())
        .unwrap();
    let response = router.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn shared_error_sets_document_every_session_and_file_operation() {
    let service = TestService::default_service();
    let (status, document) = service.get("/v1/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let answers = |path: &str, method: &str| -> BTreeSet<String> {
        document["paths"][path][method]["responses"]
            .as_object()
            .unwrap_or_else(|| panic!("{method} {path} has no responses"))
            .keys()
            .cloned()
            .collect()
    };
    for (path, method) in [
        ("/v1/sessions/{id}/exec", "post"),
        ("/v1/sessions/{id}/processes", "delete"),
        ("/v1/sessions/{id}/processes/{process_id}/signal", "post"),
        ("/v1/sessions/{id}/processes/{process_id}/stream", "get"),
        ("/v1/sessions/{id}/pty", "get"),
    ] {
        let codes = answers(path, method);
        for code in ["404", "409", "502"] {
            assert!(
                codes.contains(code),
                "{method} {path} lacks {code}: {codes:?}"
            );
        }
    }
    for method in ["get", "put"] {
        let codes = answers("/v1/sessions/{id}/files/content", method);
        for code in ["400", "403", "404", "409", "502"] {
            assert!(
                codes.contains(code),
                "{method} files/content lacks {code}: {codes:?}"
            );
        }
    }
    // A route's own answers stay beside the shared ones.
    assert!(answers("/v1/sessions/{id}/files/content", "put").contains("507"));
}
