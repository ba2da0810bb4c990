//! Slots under `max_sessions`: taken honestly by concurrent creates, given back when a create
//! fails, and shared with the warm pools.

mod common;

use axum::http::StatusCode;
use common::*;
use futures_util::future::join_all;
use sandboxd_backend::Backend;
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_take_exactly_the_free_slots() {
    let service = TestService::start(&config(3, 0, ""));
    service.set_create_delay(Duration::from_millis(150));
    let admin = service.admin();
    let answers = join_all((0..8).map(|_| {
        let admin = admin.clone();
        tokio::spawn(async move { admin.create(None).await })
    }))
    .await;
    let answers: Vec<_> = answers.into_iter().map(Result::unwrap).collect();
    let created: Vec<String> = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .map(|(_, b)| b["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(created.len(), 3, "max_sessions is 3");
    for answer in answers.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
        assert_error(answer, StatusCode::TOO_MANY_REQUESTS, "service_full");
    }
    // The refused ones started nothing.
    assert_eq!(service.creates(), 3);
    assert_eq!(service.backend.running(), 3);

    // Closing frees the slots.
    for id in &created {
        assert_eq!(
            service.delete(&format!("/v1/sessions/{id}")).await.0,
            StatusCode::OK
        );
    }
    service.set_create_delay(Duration::ZERO);
    for _ in 0..3 {
        service.open(None).await;
    }
    assert_error(
        &admin.create(None).await,
        StatusCode::TOO_MANY_REQUESTS,
        "service_full",
    );
}

#[tokio::test]
async fn a_failed_create_gives_its_slot_back_and_leaves_no_sandbox() {
    let service = TestService::start(&config(1, 0, ""));
    service.backend.failing_creates.store(2, Ordering::SeqCst);
    for _ in 0..2 {
        assert_error(
            &service.admin().create(None).await,
            StatusCode::BAD_GATEWAY,
            "engine_error",
        );
    }
    assert_eq!(service.backend.running(), 0);
    let (_, stats) = service.get("/v1/stats").await;
    assert_eq!(stats["sessions"], 0);
    let (_, list) = service.get("/v1/sessions?include_ended=true").await;
    assert_eq!(list["sessions"], serde_json::json!([]));
    // The one slot is free: the next create succeeds.
    service.open(None).await;
    assert_eq!(service.backend.running(), 1);
    assert_eq!(service.creates(), 3);
}

#[tokio::test]
async fn a_tenants_failed_create_gives_its_quota_back() {
    let service = TestService::start(&config(4, 0, &tenant("solo", ALPHA_TOKEN, 1, None)));
    service.backend.failing_creates.store(1, Ordering::SeqCst);
    let solo = service.client(ALPHA_TOKEN);
    assert_error(
        &solo.create(None).await,
        StatusCode::BAD_GATEWAY,
        "engine_error",
    );
    solo.open(None).await;
    assert_eq!(service.backend.running(), 1);
}

/// The ids of the sandboxes the fake platform runs.
async fn sandbox_ids(service: &TestService) -> HashSet<String> {
    service
        .backend
        .list()
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.running)
        .map(|s| s.sandbox.session_id)
        .collect()
}

#[tokio::test]
async fn the_warm_pool_fills_hands_out_and_refills() {
    let service = TestService::start(&config(4, 2, ""));
    let maintenance = tokio::spawn(service.core.clone().maintain());
    assert!(
        eventually(Duration::from_secs(2), || service.backend.running() == 2).await,
        "the pool of 2 did not fill"
    );
    assert_eq!(service.creates(), 2);
    let (_, stats) = service.get("/v1/stats").await;
    assert_eq!(stats["pooled"], 2);
    assert_eq!(stats["sessions"], 0);
    let pooled = sandbox_ids(&service).await;

    let id = service.open(Some("sh")).await;
    assert!(
        pooled.contains(&id),
        "the session did not take a pooled sandbox"
    );
    // The pool is topped up by one create, the session made none of its own.
    assert!(
        eventually(Duration::from_secs(2), || service.backend.running() == 3).await,
        "the pool was not refilled"
    );
    assert_eq!(service.creates(), 3);
    let (_, stats) = service.get("/v1/stats").await;
    assert_eq!(
        (stats["pooled"].clone(), stats["sessions"].clone()),
        (2.into(), 1.into())
    );
    let (status, result) = service.admin().exec(&id, "echo pooled").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(result["stdout"], "pooled\n");

    // Another runtime is never handed a pooled sandbox.
    let py = service.open(Some("py")).await;
    assert!(!pooled.contains(&py));
    assert_eq!(service.creates(), 4);
    maintenance.abort();

    service.core.drain_pools().await;
    assert_eq!(
        service.backend.running(),
        2,
        "draining removes pooled sandboxes only"
    );
}

#[tokio::test]
async fn a_pool_create_in_flight_at_shutdown_leaves_no_sandbox() {
    let service = TestService::start(&config(4, 2, ""));
    service.set_create_delay(Duration::from_millis(300));
    let maintenance = tokio::spawn(service.core.clone().maintain());
    // The first of the pool's two creates is under way, none done.
    assert!(
        eventually(Duration::from_secs(2), || service.creates() == 1).await,
        "the pool did not start filling"
    );
    assert_eq!(service.backend.running(), 0);
    maintenance.abort();

    service.core.drain_pools().await;
    // Past the end of the create that was in flight (a service that stopped now would have
    // left its sandbox behind).
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        service.backend.running(),
        0,
        "the create that was in flight left its sandbox running"
    );
    assert_eq!(
        service.creates(),
        1,
        "a drained pool starts no more sandboxes"
    );
}

#[tokio::test]
async fn a_full_service_evicts_a_pooled_sandbox_for_another_runtime() {
    let service = TestService::start(&config(2, 2, ""));
    let maintenance = tokio::spawn(service.core.clone().maintain());
    assert!(
        eventually(Duration::from_secs(2), || service.backend.running() == 2).await,
        "the pool of 2 did not fill"
    );
    let pooled = sandbox_ids(&service).await;
    // Every slot is held by the pool, yet a session of another runtime opens.
    let py = service.open(Some("py")).await;
    assert!(!pooled.contains(&py));
    assert!(
        eventually(Duration::from_secs(2), || service.backend.running() == 2).await,
        "the evicted sandbox was not removed"
    );
    let (_, stats) = service.get("/v1/stats").await;
    assert_eq!(stats["pooled"], 1, "{stats}");
    assert_eq!(stats["sessions"], 1, "{stats}");
    // The pool stays short while the service is full: nothing over max_sessions runs.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(service.backend.running(), 2);
    // The last slot goes to a session of the pooled runtime, from the pool.
    let sh = service.open(Some("sh")).await;
    assert!(pooled.contains(&sh));
    assert_error(
        &service.admin().create(Some("py")).await,
        StatusCode::TOO_MANY_REQUESTS,
        "service_full",
    );
    maintenance.abort();
}
