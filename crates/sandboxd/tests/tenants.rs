//! Tenant tokens: each tenant sees and touches only its own sessions, within its runtimes and
//! quota; the service token stays the administrator's; failed authentication is answered
//! identically and rate-limited.

mod common;

use common::{base_config, sandboxd_bin, tenant_token, TestService, TOKEN};
use serde_json::{json, Value};

struct Tenants {
    service: TestService,
    a: String,
    b: String,
}

fn start() -> Tenants {
    let (a, a_config) = tenant_token("team-a");
    let (b, b_config) = tenant_token("team-b");
    // The tenant tables go after the [policy] table that base_config ends with.
    let config = format!(
        "{}{a_config}runtimes = [\"sh\"]\nmax_sessions = 1\n{b_config}",
        base_config(6, "")
    );
    Tenants {
        service: TestService::start(&config),
        a,
        b,
    }
}

impl Tenants {
    async fn call(
        &self,
        token: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.service.call_as(token, method, path, body).await
    }

    async fn open(&self, token: &str, body: Value) -> (u16, Value) {
        self.call(token, reqwest::Method::POST, "/v1/sessions", Some(body))
            .await
    }
}

#[tokio::test]
async fn tenants_see_only_their_own_sessions() {
    let t = start();
    let (status, a_session) = t
        .open(&t.a, json!({"runtime": "sh", "tenant": "someone-else"}))
        .await;
    assert_eq!(status, 201, "{a_session}");
    assert_eq!(
        a_session["tenant"], "team-a",
        "the tenant's name, whatever the request says"
    );
    let a_id = a_session["id"].as_str().unwrap();
    let (_, b_session) = t.open(&t.b, json!({"runtime": "python"})).await;
    let b_id = b_session["id"].as_str().unwrap();

    let (_, a_list) = t
        .call(&t.a, reqwest::Method::GET, "/v1/sessions", None)
        .await;
    let a_ids: Vec<&str> = a_list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(a_ids, [a_id]);
    let admin_list = t.service.get_json("/v1/sessions").await;
    assert_eq!(
        admin_list["sessions"].as_array().unwrap().len(),
        2,
        "the administrator sees all"
    );

    // Another tenant's session does not exist for b: every route answers 404 alike.
    let (missing_status, missing) = t
        .call(&t.b, reqwest::Method::GET, "/v1/sessions/no-such-id", None)
        .await;
    assert_eq!(missing_status, 404);
    for (method, path, body) in [
        (reqwest::Method::GET, format!("/v1/sessions/{a_id}"), None),
        (
            reqwest::Method::POST,
            format!("/v1/sessions/{a_id}/exec"),
            Some(json!({"command": "id"})),
        ),
        (
            reqwest::Method::GET,
            format!("/v1/sessions/{a_id}/activity"),
            None,
        ),
        (
            reqwest::Method::GET,
            format!("/v1/sessions/{a_id}/files?path=."),
            None,
        ),
        (
            reqwest::Method::GET,
            format!("/v1/sessions/{a_id}/processes"),
            None,
        ),
        (
            reqwest::Method::DELETE,
            format!("/v1/sessions/{a_id}"),
            None,
        ),
    ] {
        let (status, body) = t.call(&t.b, method.clone(), &path, body).await;
        assert_eq!(status, 404, "{method} {path}: {body}");
        assert_eq!(body["error"]["code"], missing["error"]["code"]);
    }
    let (status, _) = t
        .call(
            &t.a,
            reqwest::Method::GET,
            &format!("/v1/sessions/{b_id}"),
            None,
        )
        .await;
    assert_eq!(status, 404);

    // Its own session works, and the log names the tenant.
    let (status, ran) = t
        .call(
            &t.a,
            reqwest::Method::POST,
            &format!("/v1/sessions/{a_id}/exec"),
            Some(json!({"command": "echo mine"})),
        )
        .await;
    assert_eq!((status, ran["stdout"].as_str()), (200, Some("mine\n")));
    let (_, log) = t
        .call(
            &t.a,
            reqwest::Method::GET,
            &format!("/v1/sessions/{a_id}/activity"),
            None,
        )
        .await;
    assert_eq!(log["entries"][0]["principal"], "tenant:team-a");
    assert_eq!(
        t.service.containers().len(),
        2,
        "b's attempts touched nothing"
    );
}

#[tokio::test]
async fn tenants_keep_to_their_runtimes_and_quota_and_cannot_read_the_config() {
    let t = start();
    let (status, refused) = t.open(&t.a, json!({"runtime": "python"})).await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], "unknown_runtime");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("allowed: sh; GET /v1/runtimes shows each allowed runtime and its limits"),
        "{refused}"
    );
    let (_, runtimes) = t
        .call(&t.a, reqwest::Method::GET, "/v1/runtimes", None)
        .await;
    let names: Vec<&str> = runtimes["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sh"]);

    let (first, second) = tokio::join!(
        t.open(&t.a, json!({"runtime": "sh"})),
        t.open(&t.a, json!({"runtime": "sh"}))
    );
    let mut statuses = [first.0, second.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [201, 429],
        "a quota of one holds under concurrent creates"
    );
    let over = if first.0 == 429 { first.1 } else { second.1 };
    assert_eq!(over["error"]["code"], "tenant_quota");
    let (status, _) = t.open(&t.b, json!({"runtime": "sh"})).await;
    assert_eq!(status, 201, "another tenant's quota is its own");

    for path in ["/v1/config", "/metrics"] {
        let (status, body) = t.call(&t.a, reqwest::Method::GET, path, None).await;
        assert_eq!(status, 403, "{path}");
        assert_eq!(body["error"]["code"], "admin_only");
    }
    let config = t
        .service
        .get("/v1/config")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !config.contains(&t.a) && config.contains("team-a"),
        "the config shows tenants, never tokens"
    );
    let (_, stats) = t.call(&t.a, reqwest::Method::GET, "/v1/stats", None).await;
    assert_eq!(
        stats["sessions"], 1,
        "a tenant's figures count its own sessions"
    );
}

#[tokio::test]
async fn failed_authentication_is_answered_alike_and_throttled_without_locking_out_the_right_token()
{
    let t = start();
    let url = t.service.url("/v1/sessions");
    let mut answers = Vec::new();
    for header in [
        None,
        Some("Bearer wrong-token-0123456789"),
        Some("Basic abc"),
        Some("Bearer "),
    ] {
        let mut request = t.service.client.get(&url);
        if let Some(value) = header {
            request = request.header("authorization", value);
        }
        let response = request.send().await.unwrap();
        answers.push((response.status().as_u16(), response.text().await.unwrap()));
    }
    assert!(
        answers.iter().all(|a| a == &answers[0] && a.0 == 401),
        "{answers:?}"
    );
    // A 300-request wrong-token attack from 127.0.0.1, interleaved with the right token from the
    // same address: the attacker is throttled, the right token is always served.
    let mut throttled = 0;
    for round in 0..300 {
        let guess = t
            .service
            .client
            .get(&url)
            .bearer_auth("guess-0123456789abcdef")
            .send()
            .await
            .unwrap();
        match guess.status().as_u16() {
            401 => {}
            429 => {
                throttled += 1;
                let body: Value = guess.json().await.unwrap();
                assert_eq!(body["error"]["code"], "too_many_attempts");
            }
            other => panic!("a wrong token got {other}"),
        }
        if round % 25 == 0 {
            let right = t
                .service
                .client
                .get(&url)
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap();
            assert_eq!(right.status(), 200, "the right token during the attack");
        }
    }
    assert!(
        throttled >= 250,
        "the attacker was throttled {throttled} times of 300"
    );
    let health = t.service.healthz().await;
    assert_eq!(health.status(), 200);
}

/// A tenant probing another's session is answered as for an unknown id, and the administrator
/// (alone) finds each attempt in the audit log, also with `sandboxd audit`. The real agent's
/// refusal of a missing cwd quotes it to the caller, never into the activity log.
#[tokio::test]
async fn cross_tenant_probes_are_audited_and_the_activity_log_keeps_no_arguments() {
    let t = start();
    let (_, a_session) = t.open(&t.a, json!({"runtime": "sh"})).await;
    let a_id = a_session["id"].as_str().unwrap();
    for (method, path, body) in [
        (reqwest::Method::GET, format!("/v1/sessions/{a_id}"), None),
        (
            reqwest::Method::POST,
            format!("/v1/sessions/{a_id}/exec"),
            Some(json!({"command": "id"})),
        ),
        (
            reqwest::Method::GET,
            format!("/v1/sessions/{a_id}/files"),
            None,
        ),
    ] {
        let (status, body) = t.call(&t.b, method, &path, body).await;
        assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")));
    }
    let (status, refused) = t.call(&t.a, reqwest::Method::GET, "/v1/audit", None).await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (403, &json!("admin_only"))
    );

    let audit = t.service.get_json("/v1/audit").await;
    let entries = audit["entries"].as_array().unwrap();
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["list_files", "exec", "get_session"], "{audit}");
    for entry in entries {
        assert_eq!(entry["principal"], "tenant:team-b");
        assert_eq!(entry["session_id"], a_id);
        assert_eq!(entry["outcome"], "denied");
    }
    let cli = std::process::Command::new(sandboxd_bin())
        .arg("audit")
        .env("SANDBOXD_URL", t.service.url(""))
        .env("SANDBOXD_TOKEN", TOKEN)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&cli.stdout);
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    assert!(table.starts_with("AT"), "{table}");
    assert_eq!(table.matches("tenant:team-b").count(), 3, "{table}");
    assert!(
        table.contains(a_id) && table.contains("list_files"),
        "{table}"
    );

    let exec = format!("/v1/sessions/{a_id}/exec");
    let post = reqwest::Method::POST;
    let (status, failed) = t
        .call(
            &t.a,
            post.clone(),
            &exec,
            Some(json!({"command": "echo x", "cwd": "/secret-dir"})),
        )
        .await;
    assert_eq!(status, 400, "{failed}");
    assert!(failed.to_string().contains("secret-dir"), "{failed}");
    let (status, _) = t
        .call(
            &t.a,
            post,
            &exec,
            Some(json!({"command": "T=secret true${IFS}secret"})),
        )
        .await;
    assert_eq!(status, 200);
    let log_path = format!("/v1/sessions/{a_id}/activity");
    let (_, log) = t.call(&t.a, reqwest::Method::GET, &log_path, None).await;
    assert!(!log.to_string().contains("secret"), "{log}");
    assert_eq!(log["entries"][0]["target"], "shell", "{log}");
    assert_eq!(log["entries"][1]["target"], "echo", "{log}");
    assert!(
        log["entries"][1]["error"]
            .as_str()
            .unwrap()
            .starts_with("spawn_failed"),
        "{log}"
    );
}
