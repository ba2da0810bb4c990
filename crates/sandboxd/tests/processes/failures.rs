//! When something outside a process fails: its agent killed, the service restarted, its
//! sandbox removed behind the service's back.

use crate::common::{self, base_config, TestService};
use crate::helpers::{start, OutputStream};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_killed_agent_fails_its_session_clearly_and_nothing_else() {
    let service = TestService::start(&base_config(2, ""));
    let victim = service.open("sh").await;
    let bystander = service.open("sh").await;
    start(&service, &victim, json!({"command": "sleep 1000"})).await;

    // The shell's parent is the agent, which runs as the same user.
    let (status, _) = service
        .exec(&victim, json!({"command": "kill -9 $PPID; sleep 5"}))
        .await;
    assert_eq!(status, 502, "the exec loses its agent");

    let asked = Instant::now();
    let response = service
        .get(&format!("/v1/sessions/{victim}/processes"))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    println!("answered {status} after {:?}: {body}", asked.elapsed());
    assert!(asked.elapsed() < Duration::from_secs(10));
    assert!(
        matches!(
            body["error"]["code"].as_str(),
            Some("agent_unavailable" | "session_ended" | "sandbox_gone")
        ),
        "{status} {body}"
    );

    let health = service.healthz().await;
    assert_eq!(health.status(), 200);
    assert_eq!(
        service.sh(&bystander, "echo alive").await["stdout"],
        "alive\n"
    );
    start(&service, &bystander, json!({"command": "true"})).await;
}

#[tokio::test]
async fn processes_outlive_a_service_restart() {
    let mut service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let process = start(
        &service,
        &id,
        json!({"command": "echo before; sleep 4; echo after"}),
    )
    .await;
    let pid = process["id"].as_str().unwrap();
    let mut stream = OutputStream::open(&service, &id, pid, "").await;
    let before = stream.next().await.unwrap();
    assert_eq!(before.data["text"], "before\n");
    drop(stream);

    service.crash_and_restart();

    // The agent dials the new service; the process ran on meanwhile.
    let resume_at = before.id.unwrap();
    let mut stream = OutputStream::open(&service, &id, pid, &format!("?since={resume_at}")).await;
    let (rest, exit, _) = stream.read_to_exit().await;
    assert_eq!(
        (rest.as_str(), exit["exit_code"].as_i64()),
        ("after\n", Some(0))
    );
}

#[tokio::test]
async fn events_say_at_once_that_a_session_ended_outside() {
    let service = TestService::start(&base_config(2, ""));
    let response = service.get("/v1/events").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let mut events = OutputStream {
        response,
        buffer: Vec::new(),
    };
    let id = service.open("sh").await;
    let opened = events.next().await.unwrap();
    assert_eq!(
        (
            opened.event.as_str(),
            &opened.data["id"],
            &opened.data["state"]
        ),
        ("session", &json!(id), &json!("running"))
    );
    let removed = Instant::now();
    common::remove_sandbox_outside(&id);
    let ended = events.next().await.unwrap();
    let took = removed.elapsed();
    assert_eq!(ended.data["id"], json!(id));
    assert_eq!(ended.data["state"], "ended");
    assert!(
        ended.data["end_reason"]
            .as_str()
            .unwrap()
            .contains("its sandbox stopped"),
        "{ended:?}"
    );
    assert!(took < Duration::from_secs(5), "noticed after {took:?}");
}
