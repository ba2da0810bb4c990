//! Controlling background processes: stdin, signals, killing every process, timeouts,
//! and `run`, which starts a process and streams it in one request.

use crate::common::{base_config, TestService};
use crate::helpers::{activity, start, try_start, OutputStream};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

async fn post_json(service: &TestService, path: &str, body: Value) -> (u16, Value) {
    let response = service.post(path).json(&body).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// Waits until exactly `count` `sleep` processes run in the sandbox.
async fn wait_for_sleeps(service: &TestService, id: &str, count: u32) {
    let give_up = Instant::now() + Duration::from_secs(5);
    let expected = format!("{count}\n");
    loop {
        let counted = service.sh(id, "ps -o comm | grep -c '^sleep$'").await;
        if counted["stdout"] == expected.as_str() {
            return;
        }
        assert!(Instant::now() < give_up, "{counted} sleeps, not {count}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn stdin_is_written_and_closed() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let cat = start(&service, &id, json!({"argv": ["cat"], "stdin": true})).await;
    assert_eq!(cat["stdin_open"], true);
    let pid = cat["id"].as_str().unwrap();
    let stdin = format!("/v1/sessions/{id}/processes/{pid}/stdin");
    let mut stream = OutputStream::open(&service, &id, pid, "").await;

    let raw = service
        .post(&stdin)
        .body("raw bytes\n")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 200);
    let written: Value = raw.json().await.unwrap();
    assert_eq!(written, json!({"bytes": 10, "closed": false}));
    let echoed = stream.next().await.unwrap();
    assert_eq!(echoed.data["text"], "raw bytes\n");

    let (status, written) = post_json(&service, &stdin, json!({"data": "json\n"})).await;
    assert_eq!((status, written["bytes"].as_u64()), (200, Some(5)));
    let (status, closed) = post_json(&service, &format!("{stdin}/close"), json!({})).await;
    assert_eq!(status, 200, "{closed}");
    assert_eq!(closed["closed"], true);
    let (text, exit, _) = stream.read_to_exit().await;
    assert_eq!(text, "json\n");
    assert_eq!(exit["exit_code"], 0);
    assert_eq!(exit["stdin_open"], false);

    let (status, refused) = post_json(&service, &stdin, json!({"data": "late"})).await;
    assert_eq!(status, 409);
    assert_eq!(refused["error"]["code"], "stdin_unavailable");
    let no_stdin = start(&service, &id, json!({"command": "sleep 30"})).await;
    let (status, refused) = post_json(
        &service,
        &format!(
            "/v1/sessions/{id}/processes/{}/stdin",
            no_stdin["id"].as_str().unwrap()
        ),
        json!({"data": "x"}),
    )
    .await;
    assert_eq!(status, 409, "{refused}");

    let entries = activity(&service, &id).await;
    let writes: Vec<&Value> = entries
        .iter()
        .filter(|e| e["action"] == "process_stdin" && e["status"] == "ok")
        .collect();
    assert_eq!(writes.len(), 2);
    assert!(writes.iter().all(|e| e["target"] == "cat"));
    assert!(writes.iter().any(|e| e["bytes"] == 10));
    assert!(entries
        .iter()
        .any(|e| e["action"] == "process_stdin_close" && e["status"] == "ok"));
}

#[tokio::test]
async fn signals_reach_the_process_group() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let sleeper = start(&service, &id, json!({"argv": ["sleep", "1000"]})).await;
    let sleeper_id = sleeper["id"].as_str().unwrap();
    let (status, signalled) = post_json(
        &service,
        &format!("/v1/sessions/{id}/processes/{sleeper_id}/signal"),
        json!({"signal": "TERM"}),
    )
    .await;
    assert_eq!(status, 200, "{signalled}");
    let mut stream = OutputStream::open(&service, &id, sleeper_id, "").await;
    let (_, exit, _) = stream.read_to_exit().await;
    assert_eq!(
        (exit["exit_code"].clone(), exit["signal"].clone()),
        (Value::Null, json!(15))
    );

    // KILL to a shell and its background child leaves neither.
    let group = start(&service, &id, json!({"command": "sleep 1000 & sleep 1000"})).await;
    let group_id = group["id"].as_str().unwrap();
    wait_for_sleeps(&service, &id, 2).await;
    let (status, _) = post_json(
        &service,
        &format!("/v1/sessions/{id}/processes/{group_id}/signal"),
        json!({"signal": 9}),
    )
    .await;
    assert_eq!(status, 200);
    wait_for_sleeps(&service, &id, 0).await;

    let (status, refused) = post_json(
        &service,
        &format!("/v1/sessions/{id}/processes/{group_id}/signal"),
        json!({"signal": "BOGUS"}),
    )
    .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (400, Some("invalid_signal"))
    );
    let entries = activity(&service, &id).await;
    assert!(entries
        .iter()
        .any(|e| e["action"] == "process_signal" && e["target"] == "sleep"));
}

#[tokio::test]
async fn killing_every_process_reaches_what_left_its_group_and_keeps_the_session() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let background = start(&service, &id, json!({"argv": ["sleep", "1000"]})).await;
    let background_id = background["id"].as_str().unwrap();
    // A command that leaves a process behind in a session of its own, out of reach of the
    // command's process group.
    let escaped = service
        .sh(
            &id,
            "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo started",
        )
        .await;
    assert_eq!(escaped["stdout"], "started\n", "{escaped}");
    wait_for_sleeps(&service, &id, 2).await;

    service.kill_all_processes(&id, 2).await;
    wait_for_sleeps(&service, &id, 0).await;

    // The tracked process reports the kill; the session and its files carry on.
    let mut stream = OutputStream::open(&service, &id, background_id, "").await;
    let (_, exit, _) = stream.read_to_exit().await;
    assert_eq!(exit["signal"], 9, "{exit}");
    let after = service.sh(&id, "echo still here").await;
    assert_eq!(after["stdout"], "still here\n");
    let entries = activity(&service, &id).await;
    assert!(entries
        .iter()
        .any(|e| e["action"] == "process_kill_all" && e["status"] == "ok"));

    let missing = service
        .delete("/v1/sessions/no-such-session/processes")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn timeouts_kill_the_group_and_are_capped_by_policy() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let process = start(
        &service,
        &id,
        json!({"command": "sleep 1000 & sleep 1000", "timeout_secs": 1}),
    )
    .await;
    let mut stream = OutputStream::open(&service, &id, process["id"].as_str().unwrap(), "").await;
    let (_, exit, _) = stream.read_to_exit().await;
    assert_eq!(exit["timed_out"], true);
    assert_eq!(exit["signal"], 9);
    wait_for_sleeps(&service, &id, 0).await;

    let (status, refused) = try_start(
        &service,
        &id,
        json!({"command": "true", "timeout_secs": 61}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], "timeout_too_large");
    for (body, code) in [
        (json!({}), "invalid_request"),
        (json!({"command": "true", "image": "x"}), "invalid_request"),
        (json!({"command": "true", "cols": 80}), "invalid_request"),
        (json!({"argv": ["/no/such/program"]}), "spawn_failed"),
    ] {
        let (status, refused) = try_start(&service, &id, body.clone()).await;
        assert_eq!(
            (status, refused["error"]["code"].as_str()),
            (400, Some(code)),
            "{body}"
        );
    }
}

/// Starts `body` with `POST .../processes/run` and returns its event stream.
async fn run(service: &TestService, id: &str, body: Value) -> OutputStream {
    let response = service
        .post(&format!("/v1/sessions/{id}/processes/run"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    OutputStream {
        response,
        buffer: Vec::new(),
    }
}

#[tokio::test]
async fn run_is_one_operation_with_one_entry_and_the_policy_timeout() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    // The source on stdin, as the dashboard's Source pane gives it.
    let mut stream = run(
        &service,
        &id,
        json!({"argv": ["sh", "-"], "input": "cd /tmp && echo from-input $(pwd)\n"}),
    )
    .await;
    let start = stream.next().await.unwrap();
    assert_eq!(start.event, "start");
    // One timeout rule: naming none gets policy.default_timeout_secs (20 here), not the cap.
    assert_eq!(start.data["timeout_secs"], 20);
    let (text, exit, _) = stream.read_to_exit().await;
    assert_eq!(text, "from-input /tmp\n");
    assert_eq!(exit["exit_code"], 0);

    // Stopped with SIGINT, as Stop and Ctrl+C do: interrupted.
    let mut stream = run(
        &service,
        &id,
        json!({"command": "for i in 1 2 3; do sleep 30; done"}),
    )
    .await;
    let start = stream.next().await.unwrap();
    let process = start.data["id"].as_str().unwrap().to_string();
    let (status, _) = post_json(
        &service,
        &format!("/v1/sessions/{id}/processes/{process}/signal"),
        json!({"signal": "INT"}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, exit, _) = stream.read_to_exit().await;
    assert_eq!(exit["signal"], 2, "{exit}");

    let entries = activity(&service, &id).await;
    // Sorted: the interrupted run's entry is recorded when it exits, which the signal causes,
    // so it may land just before the signal's own entry.
    let mut commands: Vec<(String, String, String)> = entries
        .iter()
        .filter(|e| e["action"].as_str().unwrap().starts_with("process"))
        .map(|e| {
            let field = |name: &str| e[name].as_str().unwrap().to_string();
            (field("action"), field("target"), field("status"))
        })
        .collect();
    commands.sort();
    let entry = |action: &str, target: &str, status: &str| {
        (action.to_string(), target.to_string(), status.to_string())
    };
    assert_eq!(
        commands,
        [
            entry("process_signal", "sleep", "ok"),
            entry("process_start", "sh", "ok"),
            entry("process_start", "sleep", "interrupted"),
        ],
        "one entry per command (no stream or stdin entries), named after `for`"
    );

    // A plain background start follows the same rule.
    let process = start_process_without_timeout(&service, &id).await;
    assert_eq!(process["timeout_secs"], 20);
}

async fn start_process_without_timeout(service: &TestService, id: &str) -> Value {
    start(service, id, json!({"command": "true"})).await
}
