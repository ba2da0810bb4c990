//! Warm pools: ready sandboxes handed out on create, refilled in the background, counted
//! against max_sessions and shown in stats.

mod common;

use common::{python_image, TestService, TOKEN};
use serde_json::{json, Value};
use std::time::Duration;

fn config() -> String {
    format!(
        r#"
token = "{TOKEN}"
default_runtime = "sh"
max_sessions = 3
mem_limit = "128m"
pids_limit = 64
tmpfs_size = "16m"

[runtimes.sh]
image = "{busybox}"
pool_size = 2

[runtimes.python]
image = "{python}"
"#,
        busybox = common::busybox_image(),
        python = python_image(),
    )
}

async fn stats(service: &TestService) -> Value {
    service.get_json("/v1/stats").await
}

async fn wait_for_pooled(service: &TestService, pooled: u64) {
    for _ in 0..60 {
        if stats(service).await["pooled"] == pooled {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("the pool did not reach {pooled}: {}", stats(service).await);
}

fn pooled_session_ids(service: &TestService) -> Vec<String> {
    service.sandbox_session_ids()
}

#[tokio::test]
async fn pools_hand_out_ready_sandboxes_and_count_against_the_limit() {
    let service = TestService::start(&config());
    wait_for_pooled(&service, 2).await;
    let ready = pooled_session_ids(&service);
    assert_eq!(ready.len(), 2);

    let id = service.open("sh").await;
    assert!(ready.contains(&id), "the session got a pooled sandbox");
    assert_eq!(service.sh(&id, "echo pooled").await["stdout"], "pooled\n");

    // One session and a refilled pool of two fill the service's three slots.
    wait_for_pooled(&service, 2).await;
    let figures = stats(&service).await;
    assert_eq!(figures["sessions"], 1);
    assert_eq!(service.sandbox_session_ids().len(), 3, "{figures}");

    // A runtime without a pool still gets a slot: a pooled sandbox gives way.
    let python = service
        .post("/v1/sessions")
        .json(&json!({"runtime": "python"}))
        .send()
        .await
        .unwrap();
    assert_eq!(python.status(), 201);
    let figures = stats(&service).await;
    assert_eq!(
        (figures["sessions"].as_u64(), figures["pooled"].as_u64()),
        (Some(2), Some(1)),
        "{figures}"
    );

    service.open("sh").await;
    let full = service
        .post("/v1/sessions")
        .json(&json!({"runtime": "python"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        full.status(),
        429,
        "three sessions and no pooled sandbox left to give way"
    );
    let figures = stats(&service).await;
    assert_eq!(
        (figures["sessions"].as_u64(), figures["pooled"].as_u64()),
        (Some(3), Some(0)),
        "{figures}"
    );
    // Removed in the background: waited for, within a deadline a loaded machine meets.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while service.sandbox_session_ids().len() != 3 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        service.sandbox_session_ids().len(),
        3,
        "evicted pooled sandboxes are removed"
    );
}
