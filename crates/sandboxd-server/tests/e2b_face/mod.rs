//! What the E2B face's tests share: a request to the real router over the fake platform, a
//! sandbox made through the control plane, and a service with the E2B domain.

#![allow(dead_code)] // each test binary uses a different part of it

use crate::common::{config, two_tenants, TestService, TOKEN};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

pub const DOMAIN: &str = "e2b.example.com";

pub struct Answer {
    pub status: StatusCode,
    pub content_type: String,
    pub headers: axum::http::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

pub async fn send(
    service: &TestService,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Answer {
    let mut request = Request::builder().method(method).uri(path);
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request = request.header("host", "localhost");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = service
        .router
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Answer {
        status,
        content_type,
        headers,
        body,
    }
}

/// Creates a sandbox with `key`; answers its id and access token.
pub async fn create(service: &TestService, key: &str, host: &str) -> (String, String) {
    let answer = send(
        service,
        Method::POST,
        "/v2/sandboxes",
        &[
            ("x-api-key", key),
            ("host", host),
            ("content-type", "application/json"),
        ],
        json!({"templateID": "base", "metadata": {"k": "v"}, "timeout": 60})
            .to_string()
            .into(),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.json());
    let created = answer.json();
    assert_eq!(created["templateID"], "sh");
    assert!(created["envdVersion"].as_str().unwrap() >= "0.4.0");
    (
        created["sandboxID"].as_str().unwrap().to_string(),
        created["envdAccessToken"].as_str().unwrap().to_string(),
    )
}

pub fn with_domain() -> TestService {
    TestService::start(&config(
        4,
        0,
        &format!("{}[e2b]\ndomain = \"{DOMAIN}\"\n", two_tenants()),
    ))
}

/// `method path` with the service token and a JSON body.
pub async fn call(service: &TestService, method: Method, path: &str, body: Value) -> Answer {
    let headers = [("x-api-key", TOKEN), ("content-type", "application/json")];
    send(service, method, path, &headers, body.to_string().into()).await
}
