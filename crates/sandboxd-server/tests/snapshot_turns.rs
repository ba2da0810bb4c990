//! Snapshots of different sessions do not wait on each other, and one that cannot finish in
//! its time is cancelled and leaves nothing, over the fake platform, whose agent's archives
//! can be held as a starved agent's are.

mod common;

use axum::http::StatusCode;
use common::*;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[tokio::test]
async fn a_slow_snapshot_keeps_no_other_session_waiting() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let beta = service.client(BETA_TOKEN);
    let slow = alpha.open(None).await;
    let quick = beta.open(None).await;
    let held = service.backend.hold_archives(&slow);
    let slow_snapshot = tokio::spawn({
        let alpha = alpha.clone();
        let slow = slow.clone();
        async move { snapshot(&alpha, &slow, "slow").await }
    });
    let waiting = || service.backend.archives_waiting.load(Ordering::SeqCst) == 1;
    assert!(
        eventually(Duration::from_secs(10), waiting).await,
        "the slow snapshot reads its sandbox"
    );

    // Another tenant's snapshot, and another session's of the same tenant, finish meanwhile.
    let (status, body) = snapshot(&beta, &quick, "quick").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let other = alpha.open(None).await;
    let (status, body) = snapshot(&alpha, &other, "other").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(
        !slow_snapshot.is_finished(),
        "the slow snapshot was still being taken when the others finished"
    );

    drop(held);
    let (status, body) = slow_snapshot.await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, listed) = service.get("/v1/snapshots").await;
    assert_eq!(listed["snapshots"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn a_snapshot_past_its_time_is_cancelled_and_leaves_nothing() {
    let policy = "[policy]\ndefault_timeout_secs = 1\nmax_timeout_secs = 1\n";
    let service = TestService::start(&config(4, 0, policy));
    let id = service.open(None).await;
    let held = service.backend.hold_archives(&id);
    let answer = snapshot(&service.admin(), &id, "never").await;
    assert_error(&answer, StatusCode::TOO_MANY_REQUESTS, "snapshot_timeout");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("did not finish within 1 s") && message.contains("nothing was kept"),
        "{message}"
    );
    let (_, listed) = service.get("/v1/snapshots").await;
    assert_eq!(listed["snapshots"], json!([]));
    assert_eq!(kept(&service), 0, "no partial files are left");
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    assert_eq!(log["entries"][0]["action"], "snapshot");
    assert!(log["entries"][0]["error"].is_string(), "{log}");

    // The session's turn is free again: the next snapshot is taken once the agent answers.
    drop(held);
    let (status, body) = snapshot(&service.admin(), &id, "now").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn snapshots_in_flight_count_against_the_quota() {
    let policy = "[policy]\nsnapshot_quota_count = 1\n";
    let service = TestService::start(&config(4, 0, policy));
    let (first, second) = (service.open(None).await, service.open(None).await);
    let held = service.backend.hold_archives(&first);
    let taking = tokio::spawn({
        let admin = service.admin();
        async move { snapshot(&admin, &first, "first").await }
    });
    let waiting = || service.backend.archives_waiting.load(Ordering::SeqCst) == 1;
    assert!(eventually(Duration::from_secs(10), waiting).await);
    let refused = snapshot(&service.admin(), &second, "second").await;
    assert_error(&refused, StatusCode::TOO_MANY_REQUESTS, "snapshot_quota");
    drop(held);
    let (status, body) = taking.await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "{body}");
}
