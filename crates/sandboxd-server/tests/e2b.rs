//! The E2B-compatible face on the real router over the fake platform: how requests find the
//! control plane or a sandbox's envd (the `E2b-Sandbox-Id` header, or the `e2b.domain` host
//! names, which the Host guard then accepts), keys and per-sandbox access tokens, tenants,
//! the Connect framing of envd's answers, and the errors the SDKs read. The official SDKs
//! drive the same face against real Docker in tests/e2b. Signed URLs, ports, network options
//! and watch limits are in e2b_links.rs.

mod common;
mod e2b_face;

use axum::http::{Method, StatusCode};
use common::{config, two_tenants, TestService, ALPHA_TOKEN, BETA_TOKEN, TOKEN};
use e2b_face::{call, create, send, with_domain, Answer, DOMAIN};
use serde_json::{json, Value};

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
