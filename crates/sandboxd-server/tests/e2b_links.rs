//! The E2B-compatible face, continued (see e2b.rs): signed file URLs, a sandbox's port owning
//! every path, the network options of a sandbox's create, and the watch limits.

mod common;
mod e2b_face;

use axum::http::{Method, StatusCode};
use common::{config, tenant, TestService, ALPHA_TOKEN, BETA_TOKEN, PY_IMAGE, TOKEN};
use e2b_face::{call, create, send, with_domain, Answer, DOMAIN};
use serde_json::{json, Value};

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
