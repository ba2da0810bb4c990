//! Every route of the API against a real service and a real Docker engine (or, from
//! scripts/test.sh's kubernetes step, a real cluster).

mod common;

use common::{base_config, idle_processes, image_missing_remedy, TestService, TOKEN};
use serde_json::{json, Value};

#[tokio::test]
async fn health_needs_no_token_everything_else_does() {
    let service = TestService::start(&base_config(4, ""));
    let health = service.healthz().await;
    assert_eq!(health.status(), 200);
    assert_eq!(health.json::<Value>().await.unwrap()["status"], "ok");

    for path in [
        "/v1/runtimes",
        "/v1/policy",
        "/v1/config",
        "/v1/stats",
        "/v1/sessions",
        "/metrics",
    ] {
        let missing = service.client.get(service.url(path)).send().await.unwrap();
        assert_eq!(missing.status(), 401, "{path} without a token");
        assert_eq!(missing.headers()["www-authenticate"], "Bearer");
        let missing_body: Value = missing.json().await.unwrap();
        assert_eq!(missing_body["error"]["code"], "unauthorized");

        let wrong = service
            .client
            .get(service.url(path))
            .bearer_auth("test-token-0123456789abcdeX")
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 401, "{path} with a wrong token");
        let wrong_body: Value = wrong.json().await.unwrap();
        assert_eq!(
            wrong_body, missing_body,
            "a wrong and a missing token are answered alike"
        );

        let right = service.get(path).send().await.unwrap();
        assert_eq!(right.status(), 200, "{path} with the token");
    }
    let exec = service
        .client
        .post(service.url("/v1/sessions/whatever/exec"))
        .json(&json!({"command": "true"}))
        .send()
        .await
        .unwrap();
    assert_eq!(exec.status(), 401);
}

#[tokio::test]
async fn runtimes_policy_config_and_stats() {
    let service = TestService::start(&base_config(4, ""));
    let runtimes: Value = service.get_json("/v1/runtimes").await;
    assert_eq!(runtimes["default_runtime"], "sh");
    let names: Vec<&str> = runtimes["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ghost", "python", "recipe", "sh"]);
    let python = runtimes["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "python")
        .unwrap();
    assert_eq!(python["mem_limit_bytes"], 256 << 20);
    assert_eq!(python["cpus"], 0.5, "inherits the service-wide default");
    assert_eq!(python["pids_limit"], 64);
    assert_eq!(python["network_mode"], "none");
    assert_eq!(python["interpreter"], json!(["python3"]));

    let policy: Value = service.get_json("/v1/policy").await;
    assert_eq!(policy["max_timeout_secs"], 60);
    assert_eq!(policy["default_timeout_secs"], 20);
    assert_eq!(policy["max_output_bytes"], 64 << 10);
    assert_eq!(policy["max_sessions"], 4);

    let config = service
        .get("/v1/config")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !config.contains(TOKEN),
        "the config view must not reveal the token"
    );
    let config: Value = serde_json::from_str(&config).unwrap();
    assert_eq!(config["token"], "<redacted>");
    assert_eq!(config["defaults"]["mem_limit_bytes"], 128 << 20);
    assert_eq!(config["runtimes"]["recipe"]["recipe"], "python-datascience");

    let stats: Value = service.get_json("/v1/stats").await;
    assert_eq!(
        stats,
        json!({"sessions": 0, "pooled": 0, "max_sessions": 4, "memory_bytes": 0, "processes": 0, "runtimes_allowed": 4})
    );

    let id = service.open("sh").await;
    service.sh(&id, "sleep 30 >/dev/null 2>&1 &").await;
    service.session_with_usage(&id).await;
    let stats: Value = service.get_json("/v1/stats").await;
    assert_eq!(stats["sessions"], 1);
    assert!(
        stats["memory_bytes"].as_u64().unwrap() > 0,
        "memory in use is read from the sandbox's platform: {stats}"
    );
    assert!(
        stats["processes"].as_u64().unwrap() > idle_processes(),
        "the idle sandbox's processes and the sleep: {stats}"
    );

    let metrics = service.get("/metrics").send().await.unwrap();
    assert!(metrics.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/openmetrics-text; version=1.0.0"));
    let metrics = metrics.text().await.unwrap();
    assert!(metrics.contains("sandboxd_sessions 1"), "{metrics}");
    assert!(metrics.contains("sandboxd_runtimes_allowed 4"));
    assert!(metrics.contains("sandboxd_http_requests_total{method=\"POST\",route=\"/v1/sessions/{id}/exec\",status=\"200\"} 1"), "{metrics}");
    assert!(
        metrics.contains(
            "sandboxd_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/stats\"} 2"
        ),
        "{metrics}"
    );
    assert!(metrics.contains("sandboxd_http_request_duration_seconds_bucket{le=\"+Inf\",method=\"GET\",route=\"/v1/stats\"} 2"), "{metrics}");
    assert!(metrics.ends_with("# EOF\n"), "{metrics}");
}

/// Also the test of the service as `sandboxd serve` assembles it (`sandboxd_server::assemble`),
/// here inside the test process: its sandboxes run commands.
#[tokio::test]
async fn session_lifecycle() {
    let service = TestService::start_in_process(&base_config(4, ""));
    let created = service
        .post("/v1/sessions")
        .json(&json!({"runtime": "sh", "tenant": "team-a", "labels": {"task": "t1"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["runtime"], "sh");
    assert_eq!(created["tenant"], "team-a");
    assert_eq!(created["labels"]["task"], "t1");
    assert_eq!(created["state"], "running");
    assert!(created["created_at"].as_str().unwrap().ends_with('Z'));
    let ran = service.sh(&id, "echo \"$((6 * 7))\"").await;
    assert_eq!(ran["stdout"], "42\n", "{ran}");
    assert_eq!(ran["exit_code"], 0, "{ran}");

    // No body at all opens the default runtime.
    let default = service.post("/v1/sessions").send().await.unwrap();
    assert_eq!(default.status(), 201);
    let default: Value = default.json().await.unwrap();
    assert_eq!(default["runtime"], "sh");

    let listed: Value = service.get_json("/v1/sessions").await;
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 2);

    let one: Value = service.session_with_usage(&id).await;
    assert_eq!(one["id"], id.as_str());
    assert!(one["idle_secs"].as_u64().is_some());
    assert!(
        one["process_count"].as_u64().unwrap() >= idle_processes(),
        "init and agent, or the agent alone in a pod: {one}"
    );
    assert!(one["memory_bytes"].as_u64().unwrap() > 0);

    let started = std::time::Instant::now();
    let closed = service
        .delete(&format!("/v1/sessions/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 200);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "close uses no grace period"
    );
    let closed: Value = closed.json().await.unwrap();
    assert_eq!(closed["state"], "ended");
    assert_eq!(closed["end_reason"], "closed by the client");
    assert!(closed["ended_at"].is_string());

    let after: Value = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(after["state"], "ended", "the record outlives the sandbox");
    let (status, body) = service.exec(&id, json!({"command": "true"})).await;
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "session_ended");
    assert_eq!(
        service.sandbox_count(),
        1,
        "only the default session's sandbox is left"
    );

    let missing = service.get("/v1/sessions/nope").send().await.unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.json::<Value>().await.unwrap()["error"]["code"],
        "not_found"
    );
}

#[tokio::test]
async fn create_refuses_anything_but_an_alias() {
    let service = TestService::start(&base_config(4, ""));
    // Refused before its body is read, so the service closes the connection after: it is not
    // one for the next request to reuse.
    let oversized = service
        .post("/v1/sessions")
        .header("connection", "close")
        .header("content-type", "application/json")
        .body(vec![b' '; 70_000])
        .send()
        .await
        .unwrap();
    assert_eq!(oversized.status(), 413);
    let error: Value = oversized.json().await.unwrap();
    assert_eq!(
        error["error"]["code"], "payload_too_large",
        "a JSON error, like every other"
    );
    for body in [
        json!({"image": "alpine"}),
        json!({"runtime": "sh", "mounts": ["/:/host"]}),
        json!({"runtime": "sh", "privileged": true}),
        json!({"runtime": "sh", "mem_limit": "64g"}),
        json!({"runtime": "sh", "network_mode": "host"}),
    ] {
        let response = service
            .post("/v1/sessions")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["code"], "forbidden_field", "{body}");
        let field = body
            .as_object()
            .unwrap()
            .keys()
            .find(|k| *k != "runtime")
            .unwrap();
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains(field.as_str()),
            "{error}"
        );
    }
    let unknown = service
        .post("/v1/sessions")
        .json(&json!({"runtime": "alpine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 400);
    let error: Value = unknown.json().await.unwrap();
    assert_eq!(error["error"]["code"], "unknown_runtime");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ghost, python, recipe, sh"),
        "{error}"
    );

    let garbage = service
        .post("/v1/sessions")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), 400);
    assert_eq!(
        garbage.json::<Value>().await.unwrap()["error"]["code"],
        "invalid_json"
    );

    let missing_image = service
        .post("/v1/sessions")
        .json(&json!({"runtime": "ghost"}))
        .send()
        .await
        .unwrap();
    assert_eq!(missing_image.status(), 503);
    let error: Value = missing_image.json().await.unwrap();
    assert_eq!(error["error"]["code"], "image_missing");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("sandboxd/does-not-exist:never")
            && message.contains(image_missing_remedy()),
        "{message}"
    );

    let recipe = service
        .post("/v1/sessions")
        .json(&json!({"runtime": "recipe"}))
        .send()
        .await
        .unwrap();
    assert_eq!(recipe.status(), 503);
    assert_eq!(
        recipe.json::<Value>().await.unwrap()["error"]["code"],
        "runtime_unavailable"
    );

    assert_eq!(
        service.sandbox_count(),
        0,
        "no refused or failed create leaves a sandbox"
    );
    let stats: Value = service.get_json("/v1/stats").await;
    assert_eq!(stats["sessions"], 0, "failed creates release their slot");
}

#[tokio::test]
async fn max_sessions_is_enforced() {
    let service = TestService::start(&base_config(2, ""));
    let (first, second, third) = tokio::join!(
        service.post("/v1/sessions").send(),
        service.post("/v1/sessions").send(),
        service.post("/v1/sessions").send(),
    );
    let mut statuses: Vec<u16> = [first, second, third]
        .into_iter()
        .map(|r| r.unwrap().status().as_u16())
        .collect();
    statuses.sort();
    assert_eq!(
        statuses,
        [201, 201, 429],
        "concurrent creates cannot overshoot the limit"
    );
    let full = service.post("/v1/sessions").send().await.unwrap();
    assert_eq!(full.status(), 429);
    let error: Value = full.json().await.unwrap();
    assert_eq!(error["error"]["code"], "service_full");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("2 of 2"));

    let listed: Value = service.get_json("/v1/sessions").await;
    let id = listed["sessions"][0]["id"].as_str().unwrap();
    service
        .delete(&format!("/v1/sessions/{id}"))
        .send()
        .await
        .unwrap();
    let again = service.post("/v1/sessions").send().await.unwrap();
    assert_eq!(again.status(), 201, "closing a session frees its slot");
}

#[tokio::test]
async fn unknown_route_is_a_json_404() {
    let service = TestService::start(&base_config(1, ""));
    let response = service.get("/v1/nothing-here").send().await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.json::<Value>().await.unwrap()["error"]["code"],
        "not_found"
    );
}
