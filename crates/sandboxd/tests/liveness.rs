//! The service notices an agent that stopped answering: a session whose agent is frozen from
//! inside its sandbox is ended with the reason, against a real service and Docker, while a
//! healthy idle session lives on.

mod common;

use common::{base_config, TestService};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_session_whose_agent_is_frozen_is_ended_and_a_healthy_one_is_not() {
    let service = TestService::start(&base_config(2, ""));
    let frozen = service.open("sh").await;
    let healthy = service.open("sh").await;

    // The agent runs as the sandbox's uid, so anything in the sandbox can stop it; this
    // command does so once it was answered.
    let stop = "(sleep 1; kill -STOP $(pidof .sandboxd-agent)) >/dev/null 2>&1 &";
    service.sh(&frozen, stop).await;

    // A request meanwhile waits at most until the session is ended, then fails clearly. Asked
    // until the agent has stopped (a loaded machine may take a while to run the stop), so the
    // answer measured is the first one the frozen agent cannot give.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (started, status, body) = loop {
        let started = Instant::now();
        let (status, body) = service
            .exec(&frozen, json!({"command": "echo alive", "timeout_secs": 1}))
            .await;
        if status != 200 || Instant::now() > deadline {
            break (started, status, body);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let waited = started.elapsed();
    assert_eq!(
        (status, &body["error"]["code"]),
        (502, &json!("agent_unavailable")),
        "{body}"
    );
    assert!(
        waited < Duration::from_secs(16),
        "answered after {waited:?}"
    );
    println!(
        "a request to the frozen agent: {status} {} after {:.1} s",
        body["error"]["code"],
        waited.as_secs_f64()
    );

    let ended = service.wait_for_end(&frozen, Duration::from_secs(40)).await;
    let elapsed = started.elapsed();
    assert_eq!(
        ended["state"], "ended",
        "not ended after {elapsed:?}: {ended}"
    );
    let reason = ended["end_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("its agent stopped answering"),
        "{reason}"
    );
    println!("ended after {:.1} s: {reason}", elapsed.as_secs_f64());

    // The end is logged once the sandbox is removed, shortly after the record says so.
    let logged_end = async {
        loop {
            let activity = service
                .get_json(&format!("/v1/sessions/{frozen}/activity"))
                .await;
            let entries = activity["entries"].as_array().unwrap();
            if let Some(end) = entries.iter().find(|e| e["action"] == "end") {
                return end.clone();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let end = tokio::time::timeout(Duration::from_secs(15), logged_end)
        .await
        .expect("no end in the activity log");
    assert_eq!(end["error"], reason);

    let info = service.get_json(&format!("/v1/sessions/{healthy}")).await;
    assert_eq!(info["state"], "running", "{info}");
    assert_eq!(
        service.sh(&healthy, "echo alive").await["stdout"],
        "alive\n"
    );
    assert!(
        service.containers().len() == 1,
        "the frozen sandbox was not removed"
    );
}
