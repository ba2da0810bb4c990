//! The E2B-compatible face on the real router over the fake platform: how requests find the
//! control plane or a sandbox's envd (the `E2b-Sandbox-Id` header, or the `e2b.domain` host
//! names, which the Host guard then accepts), keys and per-sandbox access tokens, tenants,
//! the Connect framing of envd's answers, and the errors the SDKs read. The official SDKs
//! drive the same face against real Docker in tests/e2b.

mod common;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use common::{config, tenant, two_tenants, TestService, ALPHA_TOKEN, BETA_TOKEN, PY_IMAGE, TOKEN};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

const DOMAIN: &str = "e2b.example.com";

struct Answer {
    status: StatusCode,
    content_type: String,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

async fn send(
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
async fn create(service: &TestService, key: &str, host: &str) -> (String, String) {
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

fn with_domain() -> TestService {
    TestService::start(&config(
        4,
        0,
        &format!("{}[e2b]\ndomain = \"{DOMAIN}\"\n", two_tenants()),
    ))
}

#[tokio::test]
async fn a_sandbox_is_a_session_with_its_labels_timeout_and_access_token() {
    let service = TestService::default_service();
    let (id, token) = create(&service, TOKEN, "localhost").await;
    let (status, session) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(session["labels"], json!({"k": "v"}));
    assert_eq!(session["idle_timeout_secs"], 60);

    let detail = send(
        &service,
        Method::GET,
        &format!("/sandboxes/{id}"),
        &[("x-api-key", TOKEN)],
        vec![],
    )
    .await;
    assert_eq!(detail.json()["envdAccessToken"], token.as_str());
    assert_eq!(detail.json()["state"], "running");

    // envd, by header, with and without the sandbox's token.
    let health = |token: &'static str| {
        let id = id.clone();
        let service = &service;
        async move {
            send(
                service,
                Method::GET,
                "/health",
                &[("e2b-sandbox-id", &id), ("x-access-token", token)],
                vec![],
            )
            .await
            .status
        }
    };
    let token: &'static str = Box::leak(token.into_boxed_str());
    assert_eq!(health(token).await, StatusCode::NO_CONTENT);
    assert_eq!(health("0000").await, StatusCode::UNAUTHORIZED);

    let activity = service.core.activity(
        &sandboxd_core::Caller::new(
            sandboxd_core::Principal::Admin,
            sandboxd_core::Interface::Api,
        ),
        &id,
    );
    let entries = serde_json::to_value(activity.unwrap()).unwrap();
    assert!(entries["entries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["interface"] == "e2b" && e["action"] == "open"));

    let killed = send(
        &service,
        Method::DELETE,
        &format!("/sandboxes/{id}"),
        &[("x-api-key", TOKEN)],
        vec![],
    )
    .await;
    assert_eq!(killed.status, StatusCode::NO_CONTENT);
    let gone = send(
        &service,
        Method::GET,
        &format!("/sandboxes/{id}"),
        &[("x-api-key", TOKEN)],
        vec![],
    )
    .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert_eq!(gone.json()["code"], 404);
    // The SDKs read an ended sandbox from these words.
    let after = send(
        &service,
        Method::GET,
        "/health",
        &[("e2b-sandbox-id", &id), ("x-access-token", token)],
        vec![],
    )
    .await;
    assert_eq!(after.status, StatusCode::BAD_GATEWAY);
    assert!(after.json()["message"]
        .as_str()
        .unwrap()
        .contains("was not found"));
}

#[tokio::test]
async fn keys_are_checked_and_tenants_see_only_their_own() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let wrong = send(
        &service,
        Method::GET,
        "/v2/sandboxes",
        &[("x-api-key", "e2b_00")],
        vec![],
    )
    .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    let (id, _) = create(&service, ALPHA_TOKEN, "localhost").await;
    let theirs = send(
        &service,
        Method::GET,
        &format!("/sandboxes/{id}"),
        &[("x-api-key", BETA_TOKEN)],
        vec![],
    )
    .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND);
    let listed = send(
        &service,
        Method::GET,
        "/v2/sandboxes",
        &[("x-api-key", BETA_TOKEN)],
        vec![],
    )
    .await;
    assert_eq!(listed.json(), json!([]));
    let mine = send(
        &service,
        Method::GET,
        "/v2/sandboxes?metadata=k%3Dv",
        &[("x-api-key", ALPHA_TOKEN)],
        vec![],
    )
    .await;
    assert_eq!(mine.json()[0]["sandboxID"], id.as_str());
}

#[tokio::test]
async fn the_domain_routes_by_host_and_the_guard_accepts_its_names() {
    let service = with_domain();
    let api = format!("api.{DOMAIN}");
    let (id, token) = create(&service, TOKEN, &api).await;
    let created = send(
        &service,
        Method::GET,
        &format!("/sandboxes/{id}"),
        &[("x-api-key", TOKEN), ("host", &api)],
        vec![],
    )
    .await;
    assert_eq!(created.json()["domain"], DOMAIN);

    let envd_host = format!("49983-{id}.{DOMAIN}");
    let health = send(
        &service,
        Method::GET,
        "/health",
        &[("host", &envd_host), ("x-access-token", &token)],
        vec![],
    )
    .await;
    assert_eq!(health.status, StatusCode::NO_CONTENT);
    // Another port is the sandbox's own server, for the sandbox's token only.
    let other_port = format!("8080-{id}.{DOMAIN}");
    let refused = send(
        &service,
        Method::GET,
        "/app",
        &[("host", &other_port)],
        vec![],
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(refused.json()["message"]
        .as_str()
        .unwrap()
        .contains("port 8080"));
    let proxied = send(
        &service,
        Method::GET,
        "/app",
        &[("host", &other_port), ("e2b-traffic-access-token", &token)],
        vec![],
    )
    .await;
    assert!(
        ![StatusCode::UNAUTHORIZED, StatusCode::NOT_IMPLEMENTED].contains(&proxied.status),
        "{:?}",
        proxied.status
    );

    // A name outside the domain is still refused (DNS rebinding).
    let evil = send(
        &service,
        Method::GET,
        "/health",
        &[("host", "49983-x.evil.example")],
        vec![],
    )
    .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    // Without the domain configured, its names are refused too.
    let plain = TestService::default_service();
    let refused = send(
        &plain,
        Method::GET,
        "/v2/sandboxes",
        &[("host", &api), ("x-api-key", TOKEN)],
        vec![],
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn envd_speaks_connect_with_json() {
    let service = TestService::default_service();
    let (id, token) = create(&service, TOKEN, "localhost").await;
    let envd = [
        ("e2b-sandbox-id", id.as_str()),
        ("x-access-token", token.as_str()),
        ("content-type", "application/json"),
    ];

    let missing = send(
        &service,
        Method::POST,
        "/filesystem.Filesystem/Stat",
        &envd,
        br#"{"path":"nothing"}"#.to_vec(),
    )
    .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.json()["code"], "not_found");

    let unknown = send(
        &service,
        Method::POST,
        "/process.Process/Nothing",
        &envd,
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(unknown.json()["code"], "unimplemented");

    // A server stream answers 200 with envelopes, its error in the end-of-stream one.
    let stream = [
        ("e2b-sandbox-id", id.as_str()),
        ("x-access-token", token.as_str()),
        ("content-type", "application/connect+json"),
    ];
    let message = br#"{"process":{"pid":4242}}"#;
    let mut framed = vec![0u8];
    framed.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    framed.extend_from_slice(message);
    let answer = send(
        &service,
        Method::POST,
        "/process.Process/Connect",
        &stream,
        framed,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.content_type, "application/connect+json");
    assert_eq!(answer.body[0], 0x02, "one end-of-stream envelope");
    let length = u32::from_be_bytes(answer.body[1..5].try_into().unwrap()) as usize;
    let trailer: Value = serde_json::from_slice(&answer.body[5..5 + length]).unwrap();
    assert_eq!(trailer["error"]["code"], "not_found");
    assert_eq!(answer.body.len(), 5 + length);

    let not_ours = send(&service, Method::GET, "/no/such/route", &[], vec![]).await;
    assert_eq!(not_ours.status, StatusCode::NOT_FOUND);
    assert!(not_ours.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("/v1"));
}

#[tokio::test]
async fn what_is_not_offered_says_so() {
    let service = TestService::default_service();
    for (method, path, body) in [
        (
            Method::POST,
            "/v2/sandboxes",
            json!({"templateID": "base", "autoPause": true, "autoResume": {"enabled": false}}),
        ),
        (
            Method::POST,
            "/v2/sandboxes",
            json!({"templateID": "base", "network": {"egressProxy": {"address": "proxy.test:1080"}}}),
        ),
        (
            Method::POST,
            "/v2/sandboxes",
            json!({"templateID": "base", "autoPause": true, "autoPauseMemory": false}),
        ),
        (Method::GET, "/sandboxes/x/metrics", json!({})),
        (Method::GET, "/templates", json!({})),
    ] {
        let answer = send(
            &service,
            method,
            path,
            &[("x-api-key", TOKEN), ("content-type", "application/json")],
            body.to_string().into(),
        )
        .await;
        assert_eq!(answer.status, StatusCode::NOT_IMPLEMENTED, "{path}");
        assert!(
            answer.json()["message"]
                .as_str()
                .unwrap()
                .contains("not offered"),
            "{path}"
        );
    }
    assert!(service
        .core
        .list_sessions(
            &sandboxd_core::Caller::new(
                sandboxd_core::Principal::Admin,
                sandboxd_core::Interface::Api
            ),
            false
        )
        .await
        .unwrap()
        .sessions
        .is_empty());
}

#[tokio::test]
async fn pause_connect_and_the_paused_state() {
    let service = TestService::default_service();
    let (id, _) = create(&service, TOKEN, "localhost").await;
    let key = [("x-api-key", TOKEN), ("content-type", "application/json")];
    let call = |method: Method, path: String| {
        let service = &service;
        async move { send(service, method, &path, &key, b"{}".to_vec()).await }
    };
    let state = |answer: Answer| answer.json()["state"].as_str().unwrap_or("").to_string();

    let paused = call(Method::POST, format!("/sandboxes/{id}/pause")).await;
    assert_eq!(paused.status, StatusCode::NO_CONTENT);
    let again = call(Method::POST, format!("/sandboxes/{id}/pause")).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "already paused");
    assert_eq!(
        state(call(Method::GET, format!("/sandboxes/{id}")).await),
        "paused"
    );
    let listed = call(Method::GET, "/v2/sandboxes?state=paused".into()).await;
    assert_eq!(listed.json()[0]["sandboxID"], id.as_str());
    let running = call(Method::GET, "/v2/sandboxes?state=running".into()).await;
    assert_eq!(running.json(), json!([]));

    let resumed = call(Method::POST, format!("/v2/sandboxes/{id}/connect")).await;
    assert_eq!(
        resumed.status,
        StatusCode::CREATED,
        "a paused sandbox is resumed"
    );
    assert_eq!(resumed.json()["sandboxID"], id.as_str());
    let connected = call(Method::POST, format!("/v2/sandboxes/{id}/connect")).await;
    assert_eq!(
        connected.status,
        StatusCode::OK,
        "a running one is only connected"
    );
    let resume = call(Method::POST, format!("/sandboxes/{id}/resume")).await;
    assert_eq!(resume.status, StatusCode::CONFLICT, "already running");
    assert_eq!(
        state(call(Method::GET, format!("/sandboxes/{id}")).await),
        "running"
    );
}

/// E2B's connect only ever extends a running sandbox's life: a shorter timeout leaves its idle
/// timeout as it was, a longer one sets it.
#[tokio::test]
async fn connect_to_a_running_sandbox_never_shortens_its_timeout() {
    let service = TestService::default_service();
    let (id, _) = create(&service, TOKEN, "localhost").await;

    let connect = format!("/v2/sandboxes/{id}/connect");
    let shorter = call(&service, Method::POST, &connect, json!({"timeout": 10})).await;
    assert_eq!(shorter.status, StatusCode::OK);
    let (_, session) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(
        session["idle_timeout_secs"], 60,
        "connect(timeout=10) shortened it"
    );

    let longer = call(&service, Method::POST, &connect, json!({"timeout": 600})).await;
    assert_eq!(longer.status, StatusCode::OK);
    let (_, session) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(session["idle_timeout_secs"], 600);
}

/// The sandbox IDs of a listing's page, and its next page's token.
async fn listing(service: &TestService, query: &str) -> (Vec<String>, Option<String>) {
    let path = format!("/v2/sandboxes?{query}");
    let answer = call(service, Method::GET, &path, json!({})).await;
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "{query}: {:?}",
        answer.json()
    );
    let page = answer.json();
    let ids = page.as_array().unwrap().iter();
    let ids = ids.map(|s| s["sandboxID"].as_str().unwrap().to_string());
    let next = answer.headers.get("x-next-token");
    (ids.collect(), next.map(|v| v.to_str().unwrap().to_string()))
}

/// E2B lists newest first (`order=asc` oldest first) in pages of `limit`, and filters by
/// `template`, `startedAfter`, `state` and `metadata`; a parameter or value it cannot honour is
/// a 400 that names it.
#[tokio::test]
async fn listing_pages_newest_first_and_refuses_what_it_cannot_honour() {
    let service = TestService::default_service();
    let mut opened = Vec::new();
    for template in ["base", "py", "base"] {
        let body = json!({"templateID": template, "metadata": {"n": opened.len().to_string()}});
        let answer = call(&service, Method::POST, "/v2/sandboxes", body).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.json());
        opened.push(answer.json()["sandboxID"].as_str().unwrap().to_string());
    }
    let (first, next) = listing(&service, "limit=1").await;
    assert_eq!(first, [opened[2].clone()], "limit=1 is the newest");
    let next = next.expect("a next page");
    let (second, _) = listing(&service, &format!("limit=1&nextToken={next}")).await;
    assert_eq!(second, [opened[1].clone()]);
    let (oldest, _) = listing(&service, "limit=1&order=asc").await;
    assert_eq!(oldest, [opened[0].clone()]);
    let (py, _) = listing(&service, "template=py").await;
    assert_eq!(py, [opened[1].clone()]);
    let (base, _) = listing(&service, "template=base&order=asc").await;
    assert_eq!(base, [opened[0].clone(), opened[2].clone()]);
    let (none, _) = listing(&service, "template=nothing-of-that-name").await;
    assert!(none.is_empty());
    let (later, _) = listing(&service, "startedAfter=2999-01-01T00%3A00%3A00%2B00%3A00").await;
    assert!(later.is_empty(), "started after the year 2999");
    let (earlier, _) = listing(&service, "startedAfter=2000-01-01T00%3A00%3A00Z").await;
    assert_eq!(earlier.len(), 3);
    let (one, _) = listing(&service, "metadata=n%3D1&state=running%2Cpaused").await;
    assert_eq!(one, [opened[1].clone()]);

    for (query, named) in [
        ("order=sideways", "order"),
        ("startedAfter=yesterday", "startedAfter"),
        ("state=stopped", "state"),
        ("sortBy=name", "sortBy"),
    ] {
        let path = format!("/v2/sandboxes?{query}");
        let answer = call(&service, Method::GET, &path, json!({})).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{query}");
        let message = answer.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains(named), "{query}: {message}");
    }
}

/// A template ID names a runtime through `e2b.templates`, a runtime alias or `base`; anything
/// else is a 404 that lists the templates, and opens nothing.
#[tokio::test]
async fn templates_name_runtimes_and_an_unknown_one_lists_them() {
    let service = TestService::start(&config(
        4,
        0,
        "[e2b.templates]\n\"code-interpreter-v1\" = \"py\"\n",
    ));
    let answer = call(
        &service,
        Method::POST,
        "/v2/sandboxes",
        json!({"templateID": "code-interpreter-v1"}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.json());
    assert_eq!(answer.json()["templateID"], "py");

    let unknown = call(
        &service,
        Method::POST,
        "/v2/sandboxes",
        json!({"templateID": "desktop"}),
    )
    .await;
    assert_eq!(
        unknown.status,
        StatusCode::NOT_FOUND,
        "{:?}",
        unknown.json()
    );
    let message = unknown.json()["message"].as_str().unwrap().to_string();
    for name in ["\"desktop\"", "base", "code-interpreter-v1", "py", "sh"] {
        assert!(message.contains(name), "{name}: {message}");
    }
    let (listed, _) = listing(&service, "").await;
    assert_eq!(listed.len(), 1, "the unknown template opened nothing");
}

/// A pause keeps the memory: one asking to keep only the files, or to check the guest agent
/// first, is refused and the sandbox runs on.
#[tokio::test]
async fn a_pause_without_memory_is_refused_not_ignored() {
    let service = TestService::default_service();
    let (id, _) = create(&service, TOKEN, "localhost").await;
    let path = format!("/sandboxes/{id}/pause");
    for (body, says) in [
        (json!({"memory": false}), "memory false"),
        (json!({"requireHealthyGuest": true}), "requireHealthyGuest"),
    ] {
        let answer = call(&service, Method::POST, &path, body).await;
        assert_eq!(answer.status, StatusCode::NOT_IMPLEMENTED, "{says}");
        let message = answer.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains(says), "{message}");
    }
    let info = call(
        &service,
        Method::GET,
        &format!("/sandboxes/{id}"),
        json!({}),
    )
    .await;
    assert_eq!(info.json()["state"], "running");
    let kept = call(&service, Method::POST, &path, json!({"memory": true})).await;
    assert_eq!(kept.status, StatusCode::NO_CONTENT);
}

/// A signed file URL as the SDKs make it (`download_url`, `upload_url`): no header, the
/// signature over `path:operation:user:token[:expiration]`.
fn signed_url(path: &str, operation: &str, token: &str, expiration: Option<i64>) -> String {
    use base64::Engine;
    use sha2::Digest;
    let mut raw = format!("{path}:{operation}::{token}");
    if let Some(at) = expiration {
        raw.push_str(&format!(":{at}"));
    }
    let digest = sha2::Sha256::digest(raw.as_bytes());
    let signature = base64::engine::general_purpose::STANDARD_NO_PAD.encode(digest);
    let signature = signature.replace('+', "%2B").replace('/', "%2F");
    let mut url = format!("/files?path={path}&signature=v1_{signature}");
    if let Some(at) = expiration {
        url.push_str(&format!("&signature_expiration={at}"));
    }
    url
}

/// A signed URL reads (GET) or writes (POST) the file it names in the sandbox whose token
/// signed it, found without any header; a wrong operation, path, token or an expired one is
/// 401, and it reaches nothing.
#[tokio::test]
async fn signed_file_urls_are_checked_and_find_their_sandbox() {
    let service = TestService::default_service();
    let (_, other_token) = create(&service, TOKEN, "localhost").await;
    let (id, token) = create(&service, TOKEN, "localhost").await;
    let (status, _) = service
        .admin()
        .put_bytes(
            &format!("/v1/sessions/{id}/files/content?path=signed.txt"),
            b"signed",
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let get = |path: String, headers: Vec<(&'static str, String)>| {
        let service = &service;
        async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            send(service, Method::GET, &path, &headers, vec![]).await
        }
    };

    let read = get(signed_url("signed.txt", "read", &token, None), vec![]).await;
    assert_eq!(read.status, StatusCode::OK, "{:?}", read.json());
    assert_eq!(read.body, b"signed");
    let later = chrono_free_now() + 60;
    let read = get(
        signed_url("signed.txt", "read", &token, Some(later)),
        vec![],
    )
    .await;
    assert_eq!(read.body, b"signed", "with an expiry ahead");
    let by_header = get(
        signed_url("signed.txt", "read", &token, None),
        vec![("e2b-sandbox-id", id.clone())],
    )
    .await;
    assert_eq!(by_header.body, b"signed");

    for (url, says) in [
        (
            signed_url("signed.txt", "write", &token, None),
            "does not match",
        ),
        (
            signed_url("other.txt", "read", &token, None).replace("other.txt&", "signed.txt&"),
            "does not match",
        ),
        (
            signed_url("signed.txt", "read", &token, Some(chrono_free_now() - 1)),
            "expired",
        ),
        ("/files?path=signed.txt&signature=v2_x".to_string(), "v1_"),
    ] {
        let refused = get(url.clone(), vec![]).await;
        assert_eq!(
            refused.status,
            StatusCode::UNAUTHORIZED,
            "{url}: {:?}",
            refused.json()
        );
        let message = refused.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains(says), "{url}: {message}");
    }
    // Signed by the other sandbox's token: its own file, never this one's.
    let theirs = get(signed_url("signed.txt", "read", &other_token, None), vec![]).await;
    assert_eq!(
        theirs.status,
        StatusCode::NOT_FOUND,
        "the other sandbox has no such file"
    );
    // Signed by the other sandbox's token, but sent to this one.
    let elsewhere = get(
        signed_url("signed.txt", "read", &other_token, None),
        vec![("e2b-sandbox-id", id.clone())],
    )
    .await;
    assert_eq!(elsewhere.status, StatusCode::UNAUTHORIZED);
}

fn chrono_free_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A request naming a sandbox's port reaches the sandbox's server whatever its path, the
/// service's own routes (dashboard, `/healthz`, `/v1`, `/mcp`, `/metrics`, share links)
/// included: here nothing listens in the fake sandbox, so each is its closed port's 502.
#[tokio::test]
async fn a_sandbox_port_owns_every_path_even_the_services_own() {
    let service = with_domain();
    let (id, token) = create(&service, TOKEN, "localhost").await;
    let host = format!("8000-{id}.{DOMAIN}");
    for path in [
        "/",
        "/assets/app.js",
        "/healthz",
        "/v1/runtimes",
        "/mcp",
        "/metrics",
        "/p/00ff/",
    ] {
        for headers in [
            vec![
                ("e2b-sandbox-id", id.as_str()),
                ("e2b-sandbox-port", "8000"),
                ("x-access-token", token.as_str()),
            ],
            vec![("host", host.as_str()), ("x-access-token", token.as_str())],
        ] {
            let answer = send(&service, Method::GET, path, &headers, vec![]).await;
            assert_eq!(answer.status, StatusCode::BAD_GATEWAY, "{path} {headers:?}");
            assert_eq!(answer.json()["error"]["code"], "port_closed", "{path}");
        }
    }
    // Without the sandbox's token, its port refuses, and the service's route is not a way round.
    let refused = send(
        &service,
        Method::GET,
        "/healthz",
        &[("e2b-sandbox-id", &id), ("e2b-sandbox-port", "8000")],
        vec![],
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    // Without a sandbox named, the service's own routes answer as ever.
    let own = send(&service, Method::GET, "/healthz", &[], vec![]).await;
    assert_eq!(own.json()["status"], "ok");
}

/// `method path` with the service token and a JSON body.
async fn call(service: &TestService, method: Method, path: &str, body: Value) -> Answer {
    let headers = [("x-api-key", TOKEN), ("content-type", "application/json")];
    send(service, method, path, &headers, body.to_string().into()).await
}

async fn create_with_network(service: &TestService, template: &str, network: Value) -> Answer {
    let body = json!({"templateID": template, "network": network});
    call(service, Method::POST, "/v2/sandboxes", body).await
}

/// The `network` of a sandbox's info.
async fn network_of(service: &TestService, id: &str) -> Value {
    let answer = call(service, Method::GET, &format!("/sandboxes/{id}"), json!({})).await;
    assert_eq!(answer.status, StatusCode::OK);
    answer.json()["network"].clone()
}

/// E2B's `network` as the session's egress list: `allowOut` narrows the template's, `denyOut`
/// takes out names or denies all, an update replaces it; widening and what names cannot
/// express are 400s naming the entry, and a template without egress says so.
#[tokio::test]
async fn network_options_narrow_an_egress_templates_list() {
    let service = TestService::start(&config(
        4,
        0,
        &format!(
            "[runtimes.web]\nimage = \"{PY_IMAGE}\"\nnetwork_mode = \"egress\"\negress = [\"pypi.org\", \"*.github.com\", \"api.example.com:8443\"]\n"
        ),
    ));
    let service = &service;
    let answer = create_with_network(
        service,
        "web",
        json!({"allowOut": ["api.github.com"], "denyOut": ["0.0.0.0/0"]}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.json());
    let id = answer.json()["sandboxID"].as_str().unwrap().to_string();
    assert_eq!(
        network_of(service, &id).await,
        json!({"allowOut": ["api.github.com"], "denyOut": ["0.0.0.0/0"], "allowPublicTraffic": false})
    );
    let answer = create_with_network(service, "web", json!({"denyOut": ["pypi.org"]})).await;
    let other = answer.json()["sandboxID"].as_str().unwrap().to_string();
    assert_eq!(
        network_of(service, &other).await["allowOut"],
        json!(["*.github.com", "api.example.com:8443"])
    );

    // At run time, replaced whole: an empty update is the template's list again.
    let path = format!("/sandboxes/{id}/network");
    let body = json!({"allowOut": ["pypi.org"], "denyOut": ["0.0.0.0/0"]});
    let answer = call(service, Method::PUT, &path, body).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert_eq!(
        network_of(service, &id).await["allowOut"],
        json!(["pypi.org"])
    );
    let answer = call(service, Method::PUT, &path, json!({})).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert_eq!(
        network_of(service, &id).await["allowOut"],
        json!(["pypi.org", "*.github.com", "api.example.com:8443"])
    );
    let answer = call(
        service,
        Method::PUT,
        &path,
        json!({"allowOut": ["evil.example"]}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.json()["message"]
        .as_str()
        .unwrap()
        .contains("\"evil.example\" is not on the egress list of template \"web\""));

    for (template, network, says) in [
        (
            "web",
            json!({"allowOut": ["evil.example"]}),
            "\"evil.example\" is not on the egress list",
        ),
        (
            "web",
            json!({"allowOut": ["10.0.0.0/8"]}),
            "never addresses",
        ),
        (
            "web",
            json!({"denyOut": ["10.0.0.0/8"]}),
            "cannot be expressed",
        ),
        (
            "web",
            json!({"denyOut": ["api.github.com"]}),
            "falls under \"*.github.com\"",
        ),
        ("base", json!({"allowOut": ["pypi.org"]}), "not \"egress\""),
        (
            "web",
            json!({"allowOut": vec!["pypi.org"; 257]}),
            "at most 256 entries",
        ),
    ] {
        let answer = create_with_network(service, template, network).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{says}");
        let message = answer.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains(says), "{message}");
    }
}

/// What older SDK releases send on every create (`allow_internet_access: true` up to 2.50,
/// `allowPublicTraffic: true` with any network option before 2.60) is "what the runtime
/// allows", and the info says what that is; an explicit `false` is honoured where the runtime
/// can, refused where it cannot.
#[tokio::test]
async fn old_sdk_defaults_open_the_runtimes_own_network_and_the_info_says_it() {
    let service = TestService::start(&config(
        4,
        0,
        &format!(
            "[runtimes.web]\nimage = \"{PY_IMAGE}\"\nnetwork_mode = \"egress\"\negress = [\"pypi.org\"]\n[runtimes.open]\nimage = \"{PY_IMAGE}\"\nnetwork_mode = \"bridge\"\n"
        ),
    ));
    let created = |template: &str, body: Value| {
        let mut body = body;
        body["templateID"] = template.into();
        let service = &service;
        async move { call(service, Method::POST, "/v2/sandboxes", body).await }
    };
    let info = |id: String| {
        let service = &service;
        async move {
            let path = format!("/sandboxes/{id}");
            call(service, Method::GET, &path, json!({})).await.json()
        }
    };
    let id = |answer: &Answer| answer.json()["sandboxID"].as_str().unwrap().to_string();

    let closed = created("sh", json!({"allow_internet_access": true})).await;
    assert_eq!(closed.status, StatusCode::CREATED, "{:?}", closed.json());
    let detail = info(id(&closed)).await;
    assert_eq!(detail["allowInternetAccess"], false);
    assert_eq!(
        detail["network"],
        json!({"allowOut": [], "denyOut": ["0.0.0.0/0"], "allowPublicTraffic": false})
    );
    // Release 2.40 also sends `autoResume: {enabled: false}` without any auto-pause.
    let body = json!({"allow_internet_access": false, "autoPause": false, "autoResume": {"enabled": false}});
    let denied = created("sh", body).await;
    assert_eq!(denied.status, StatusCode::CREATED, "{:?}", denied.json());

    let body = json!({"allow_internet_access": true, "network": {"allowPublicTraffic": true, "allowOut": ["pypi.org"]}});
    let narrowed = created("web", body).await;
    assert_eq!(
        narrowed.status,
        StatusCode::CREATED,
        "{:?}",
        narrowed.json()
    );
    let detail = info(id(&narrowed)).await;
    assert_eq!(detail["allowInternetAccess"], true);
    assert_eq!(detail["network"]["allowOut"], json!(["pypi.org"]));
    assert_eq!(detail["network"]["allowPublicTraffic"], false);

    let refused = created("open", json!({"allow_internet_access": false})).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let message = refused.json()["message"].as_str().unwrap().to_string();
    assert!(message.contains("allow_internet_access false"), "{message}");
}

/// The E2B face's watch limits (crates/sandboxd-e2b/src/watch_limits.rs).
const WATCHES_PER_SANDBOX: usize = sandboxd_api::DEFAULT_MAX_WATCHES_PER_SESSION as usize;
const WATCHES_PER_TENANT: usize = sandboxd_api::DEFAULT_MAX_WATCHES_PER_TENANT as usize;

/// CreateWatcher on a sandbox's working directory.
async fn create_watcher(service: &TestService, (id, token): &(String, String)) -> Answer {
    send(
        service,
        Method::POST,
        "/filesystem.Filesystem/CreateWatcher",
        &[
            ("e2b-sandbox-id", id),
            ("x-access-token", token),
            ("content-type", "application/json"),
        ],
        br#"{"path":".","recursive":true}"#.to_vec(),
    )
    .await
}

#[tokio::test]
async fn watchers_are_bounded_per_sandbox_and_tenant_and_freed_when_their_sandbox_ends() {
    let sandboxes = u32::try_from(WATCHES_PER_TENANT / WATCHES_PER_SANDBOX + 1).unwrap();
    let tenants = format!(
        "{}{}",
        tenant("alpha", ALPHA_TOKEN, sandboxes, None),
        tenant("beta", BETA_TOKEN, 1, None)
    );
    let service = TestService::start(&config(sandboxes + 1, 0, &tenants));
    let mut alpha = Vec::new();
    for _ in 0..sandboxes {
        alpha.push(create(&service, ALPHA_TOKEN, "localhost").await);
    }
    let refused = |answer: &Answer, words: &str| {
        assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(answer.json()["code"], "resource_exhausted");
        let message = answer.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains(words), "{message}");
    };
    let (fresh, full) = alpha.split_last().unwrap();
    for sandbox in full {
        for _ in 0..WATCHES_PER_SANDBOX {
            let answer = create_watcher(&service, sandbox).await;
            assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
            assert!(answer.json()["watcherId"].is_string());
        }
    }
    refused(
        &create_watcher(&service, &full[0]).await,
        "as many as one session may",
    );
    refused(
        &create_watcher(&service, fresh).await,
        "tenant alpha has 256",
    );
    // Another tenant is not held up by alpha's watchers.
    let beta = create(&service, BETA_TOKEN, "localhost").await;
    assert_eq!(create_watcher(&service, &beta).await.status, StatusCode::OK);

    // Killing a sandbox frees its watchers for the tenant's others at once.
    let killed = send(
        &service,
        Method::DELETE,
        &format!("/sandboxes/{}", full[0].0),
        &[("x-api-key", ALPHA_TOKEN)],
        vec![],
    )
    .await;
    assert_eq!(killed.status, StatusCode::NO_CONTENT);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let answer = create_watcher(&service, fresh).await;
        if answer.status == StatusCode::OK {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the killed sandbox's watchers were not freed: {:?}",
            answer.json()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
