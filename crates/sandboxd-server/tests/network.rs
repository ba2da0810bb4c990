//! A session's egress allow-list over the fake platform: narrowed at create and while it
//! runs, never widened beyond its runtime's, kept across a restart, and each change logged.

mod common;

use axum::http::{Method, StatusCode};
use common::*;
use serde_json::{json, Value};

fn egress_config() -> String {
    config(
        4,
        0,
        &format!(
            "[runtimes.web]\nimage = \"{PY_IMAGE}\"\nnetwork_mode = \"egress\"\negress = [\"pypi.org\", \"*.github.com\", \"api.example.com:8443\"]\n"
        ),
    )
}

async fn put_network(service: &TestService, id: &str, body: Value) -> (StatusCode, Value) {
    let answer = service
        .admin()
        .send(
            Method::PUT,
            &format!("/v1/sessions/{id}/network"),
            Some("application/json"),
            body.to_string().into_bytes(),
        )
        .await;
    (answer.status, answer.json())
}

#[tokio::test]
async fn a_session_narrows_its_runtimes_list_and_never_widens_it() {
    let config_toml = egress_config();
    let service = TestService::start(&config_toml);
    let (status, body) = service
        .post(
            "/v1/sessions",
            json!({"runtime": "web", "egress": ["pypi.org", "evil.example"]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "egress_widened");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"evil.example\""),
        "{body}"
    );
    let (status, body) = service
        .post(
            "/v1/sessions",
            json!({"runtime": "web", "egress": ["10.0.0.1"]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let (status, body) = service
        .post(
            "/v1/sessions",
            json!({"runtime": "web", "egress": ["pypi.org", "api.github.com"]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["id"].as_str().unwrap().to_string();
    let (status, network) = service.get(&format!("/v1/sessions/{id}/network")).await;
    assert_eq!(
        (status, &network),
        (
            StatusCode::OK,
            &json!({"egress": ["pypi.org", "api.github.com"]})
        )
    );

    // While it runs: narrower again is fine, back up to the runtime's too, beyond it is not.
    let (status, body) =
        put_network(&service, &id, json!({"egress": ["api.github.com:443"]})).await;
    assert_eq!(
        (status, &body),
        (StatusCode::OK, &json!({"egress": ["api.github.com:443"]}))
    );
    let (status, body) = put_network(&service, &id, json!({"egress": ["github.com"]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "egress_widened");
    let (_, network) = service.get(&format!("/v1/sessions/{id}/network")).await;
    assert_eq!(network, json!({"egress": ["api.github.com:443"]}));
    assert_eq!(
        service
            .core
            .session_egress(&id)
            .unwrap()
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>(),
        ["api.github.com:443"]
    );

    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let changes: Vec<(&str, &str)> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "set_network")
        .map(|e| (e["status"].as_str().unwrap(), e["target"].as_str().unwrap()))
        .collect();
    assert_eq!(changes, [("error", ""), ("ok", "api.github.com:443")]);

    // A restart keeps the narrowed list: the session does not fall back to the runtime's.
    let (dir, backend) = service.shut_down();
    let service = TestService::over(&config_toml, dir, backend);
    service.core.restore().await.unwrap();
    let (_, network) = service.get(&format!("/v1/sessions/{id}/network")).await;
    assert_eq!(network, json!({"egress": ["api.github.com:443"]}));

    // A session that narrowed nothing has its runtime's list.
    let (_, body) = service
        .post("/v1/sessions", json!({"runtime": "web"}))
        .await;
    let whole = body["id"].as_str().unwrap();
    let (_, network) = service.get(&format!("/v1/sessions/{whole}/network")).await;
    assert_eq!(
        network,
        json!({"egress": ["pypi.org", "*.github.com", "api.example.com:8443"]})
    );
}

#[tokio::test]
async fn only_egress_sessions_have_a_list() {
    let service = TestService::start(&egress_config());
    let id = service.open(Some("sh")).await;
    let (status, body) = service.get(&format!("/v1/sessions/{id}/network")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "egress_not_available");
    let (status, body) = service
        .post(
            "/v1/sessions",
            json!({"runtime": "sh", "egress": ["pypi.org"]}),
        )
        .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::BAD_REQUEST, &json!("egress_not_available"))
    );
    let (status, body) = put_network(&service, &id, json!({"egress": "pypi.org"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}
