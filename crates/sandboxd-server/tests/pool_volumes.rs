//! Sessions with volumes from the warm pool, over the fake platform (which mounts into started
//! sandboxes, as Docker's runc does): the pooled sandbox takes the session's volumes; one that
//! refuses them is replaced by a sandbox started with them, under the same session id; a mount
//! plan the service refuses hands the pooled sandbox back to its pool. On real Docker:
//! `crates/sandboxd/tests/volumes/pooled.rs`.

mod common;

use axum::http::StatusCode;
use common::*;
use sandboxd_backend::Backend;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::task::JoinHandle;

const PATH: &str = "/workspace/data";

/// A service with a pool of one `sh` sandbox, full, and a volume `data`; with the maintenance
/// task that fills the pool.
async fn pool_of_one_and_a_volume() -> (TestService, JoinHandle<()>) {
    let service = TestService::start(&config(4, 1, ""));
    service.backend.volumes.store(true, Ordering::SeqCst);
    let maintenance = tokio::spawn(service.core.clone().maintain());
    assert!(
        eventually(Duration::from_secs(5), || service.backend.running() == 1).await,
        "the pool of 1 did not fill"
    );
    let (status, body) = service
        .post("/v1/volumes", json!({"name": "data", "size": "32m"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (service, maintenance)
}

async fn running_ids(service: &TestService) -> HashSet<String> {
    let listed = service.backend.list().await.unwrap();
    listed
        .into_iter()
        .filter(|s| s.running)
        .map(|s| s.sandbox.session_id)
        .collect()
}

async fn open_with_data(service: &TestService, read_only: bool) -> (StatusCode, Value) {
    service
        .post(
            "/v1/sessions",
            json!({"runtime": "sh", "volumes": [{"name": "data", "path": PATH, "read_only": read_only}]}),
        )
        .await
}

/// Opens a session with `data` mounted, which must succeed; its id.
async fn opened_with_data(service: &TestService, read_only: bool) -> String {
    let (status, body) = open_with_data(service, read_only).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_pooled_sandbox_takes_the_volumes_of_its_session() {
    let (service, maintenance) = pool_of_one_and_a_volume().await;
    let pooled = running_ids(&service).await;

    let id = opened_with_data(&service, false).await;
    assert!(
        pooled.contains(&id),
        "the session did not take the pooled sandbox"
    );
    assert_eq!(service.backend.mounted(&id), [PATH]);
    // The session made no create of its own: the only other one refills the pool.
    assert!(
        eventually(Duration::from_secs(5), || service.backend.running() == 2).await,
        "the pool was not refilled"
    );
    assert_eq!(service.creates(), 2);
    maintenance.abort();
}

#[tokio::test]
async fn a_pooled_sandbox_that_refuses_the_mount_is_replaced_by_one_started_with_it() {
    let (service, maintenance) = pool_of_one_and_a_volume().await;
    let pooled = running_ids(&service).await;
    service.backend.failing_mounts.store(1, Ordering::SeqCst);

    let id = opened_with_data(&service, false).await;
    // Same session id, but a sandbox of its own created with the volume in its spec.
    assert!(pooled.contains(&id));
    assert_eq!(service.backend.mounted(&id), [PATH]);
    assert_eq!(service.backend.failing_mounts.load(Ordering::SeqCst), 0);
    assert!(
        eventually(Duration::from_secs(5), || service.backend.running() == 2).await,
        "the pool was not refilled"
    );
    assert_eq!(
        service.creates(),
        3,
        "the pool's first sandbox, the session's replacement and the refill"
    );
    let (status, result) = service.admin().exec(&id, "echo replaced").await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["stdout"], "replaced\n");
    maintenance.abort();
}

#[tokio::test]
async fn a_refused_mount_plan_hands_the_pooled_sandbox_back() {
    let (service, maintenance) = pool_of_one_and_a_volume().await;
    let writer = opened_with_data(&service, false).await;
    assert!(
        eventually(Duration::from_secs(5), || service.backend.running() == 2).await,
        "the pool was not refilled"
    );
    let refilled: HashSet<String> = running_ids(&service)
        .await
        .into_iter()
        .filter(|id| *id != writer)
        .collect();
    let creates = service.creates();

    // One writer at a time (the default policy): a second writable mount is refused.
    let refused = open_with_data(&service, false).await;
    assert_error(&refused, StatusCode::CONFLICT, "volume_busy");
    let (_, stats) = service.get("/v1/stats").await;
    assert_eq!(
        (stats["pooled"].clone(), stats["sessions"].clone()),
        (1.into(), 1.into()),
        "the pooled sandbox is back in its pool"
    );
    assert_eq!(
        service.creates(),
        creates,
        "nothing was created or replaced"
    );
    assert!(service
        .backend
        .mounted(refilled.iter().next().unwrap())
        .is_empty());

    // The same pooled sandbox serves the next open, read-only.
    let reader = opened_with_data(&service, true).await;
    assert!(
        refilled.contains(&reader),
        "the reader did not get the pooled sandbox back"
    );
    assert_eq!(service.backend.mounted(&reader), [PATH]);
    maintenance.abort();
}
