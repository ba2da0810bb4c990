//! Pausing and resuming over the fake platform: the state, the automatic resume before an
//! operation, tenants, the idle policy, and a restart with a paused session.

mod common;

use axum::http::StatusCode;
use common::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn pause_resume_and_an_operation_resume_with_entries() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (status, info) = service
        .post(&format!("/v1/sessions/{id}/pause"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["state"], "paused");
    assert!(service.backend.is_paused(&id));
    let (_, listed) = service.get("/v1/sessions").await;
    assert_eq!(listed["sessions"][0]["state"], "paused");

    // Reading the record does not resume it; an exec does, first.
    let (_, info) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "paused");
    let (status, result) = service.admin().exec(&id, "echo back").await;
    assert_eq!(
        (status, &result["stdout"]),
        (StatusCode::OK, &json!("back\n"))
    );
    assert!(!service.backend.is_paused(&id));
    let (_, info) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "running");
    assert!(info.get("paused_at").is_none(), "{info}");
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let actions: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["exec", "resume", "pause", "open"]);
    assert_eq!(log["entries"][1]["interface"], "service");

    // An explicit resume, and both on a running session, are no error.
    let (status, info) = service
        .post(&format!("/v1/sessions/{id}/resume"), json!({}))
        .await;
    assert_eq!(
        (status, &info["state"]),
        (StatusCode::OK, &json!("running"))
    );
    service
        .post(&format!("/v1/sessions/{id}/pause"), json!({}))
        .await;
    let (_, info) = service
        .post(&format!("/v1/sessions/{id}/resume"), json!({}))
        .await;
    assert_eq!(info["state"], "running");

    // A paused session closes like any other.
    service
        .post(&format!("/v1/sessions/{id}/pause"), json!({}))
        .await;
    let (status, info) = service.delete(&format!("/v1/sessions/{id}")).await;
    assert_eq!((status, &info["state"]), (StatusCode::OK, &json!("ended")));
    assert_eq!(service.backend.running(), 0);
    assert_error(
        &service
            .post(&format!("/v1/sessions/{id}/pause"), json!({}))
            .await,
        StatusCode::CONFLICT,
        "session_ended",
    );
}

#[tokio::test]
async fn a_tenant_cannot_pause_another_tenants_session() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let id = service.client(ALPHA_TOKEN).open(None).await;
    let beta = service.client(BETA_TOKEN);
    for action in ["pause", "resume"] {
        assert_error(
            &beta
                .post(&format!("/v1/sessions/{id}/{action}"), json!({}))
                .await,
            StatusCode::NOT_FOUND,
            "not_found",
        );
    }
    assert!(!service.backend.is_paused(&id));
}

#[tokio::test]
async fn an_idle_session_is_paused_then_closed() {
    let policy =
        "[policy]\nidle_timeout_secs = 1\nidle_action = \"pause\"\npaused_timeout_secs = 2\n";
    let service = TestService::start(&config(4, 0, policy));
    let id = service.open(None).await;
    let maintenance = tokio::spawn(service.core.clone().maintain());
    let backend = service.backend.clone();
    assert!(eventually(Duration::from_secs(4), || backend.is_paused(&id)).await);
    let (_, info) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "paused");
    let info = service.wait_for_end(&id, Duration::from_secs(5)).await;
    maintenance.abort();
    let reason = info["end_reason"].as_str().unwrap();
    assert!(reason.contains("paused for more than 2 s"), "{reason}");
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    assert_eq!(log["entries"][0]["action"], "expire");
    assert_eq!(log["entries"][1]["action"], "pause");
    assert_eq!(log["entries"][1]["principal"], "sandboxd");
}

#[tokio::test]
async fn a_restart_keeps_a_paused_session_paused() {
    let config_toml = config(4, 0, "");
    let service = TestService::start(&config_toml);
    let paused = service.open(None).await;
    let running = service.open(None).await;
    service
        .post(&format!("/v1/sessions/{paused}/pause"), json!({}))
        .await;
    let (dir, backend) = service.shut_down();

    let service = TestService::over(&config_toml, dir, backend);
    let report = service.core.restore().await.unwrap();
    assert_eq!(report.resumed, 2, "{report:?}");
    let (_, info) = service.get(&format!("/v1/sessions/{paused}")).await;
    assert_eq!(info["state"], "paused", "{info}");
    let (_, info) = service.get(&format!("/v1/sessions/{running}")).await;
    assert_eq!(info["state"], "running", "{info}");
    let (status, _) = service.admin().exec(&paused, "echo back").await;
    assert_eq!(status, StatusCode::OK);
    assert!(!service.backend.is_paused(&paused));
}

#[tokio::test]
async fn a_pause_to_disk_says_so_logs_its_bytes_and_survives_a_restart() {
    let config_toml = config(4, 0, "");
    let service = TestService::start(&config_toml);
    *service.backend.disk_pauses.lock().unwrap() = Some(4096);
    let id = service.open(None).await;
    let (status, info) = service
        .post(&format!("/v1/sessions/{id}/pause"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["paused_memory"], "disk", "{info}");
    let (dir, backend) = service.shut_down();

    let service = TestService::over(&config_toml, dir, backend);
    let (_, info) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(
        info["paused_memory"], "disk",
        "before the reconciliation too: {info}"
    );
    service.core.restore().await.unwrap();
    let (status, info) = service
        .post(&format!("/v1/sessions/{id}/resume"), json!({}))
        .await;
    assert_eq!(
        (status, &info["state"]),
        (StatusCode::OK, &json!("running"))
    );
    assert!(info.get("paused_memory").is_none(), "{info}");
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries[0]["action"], "resume");
    assert_eq!(entries[0]["bytes"], 4096, "{log}");
    assert_eq!(entries[1]["action"], "pause");
    assert_eq!(entries[1]["bytes"], 4096, "{log}");
}

#[tokio::test]
async fn a_pause_without_room_on_disk_is_refused_and_the_session_runs_on() {
    let service = TestService::default_service();
    *service.backend.disk_pauses.lock().unwrap() = Some(0);
    let id = service.open(None).await;
    let refused = service
        .post(&format!("/v1/sessions/{id}/pause"), json!({}))
        .await;
    assert_error(&refused, StatusCode::INSUFFICIENT_STORAGE, "no_space");
    assert!(!service.backend.is_paused(&id));
    let (_, info) = service.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "running", "{info}");
    let (status, _) = service.admin().exec(&id, "echo still").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_frozen_pause_says_its_memory_stays_in_ram() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (_, info) = service
        .post(&format!("/v1/sessions/{id}/pause"), json!({}))
        .await;
    assert_eq!(info["paused_memory"], "ram", "{info}");
}

#[tokio::test]
async fn a_tenants_images_on_disk_are_held_to_its_pause_quota_also_after_a_restart() {
    let extra = format!("[policy]\npause_quota_bytes = 6000\n{}", two_tenants());
    let config_toml = config(4, 0, &extra);
    let service = TestService::start(&config_toml);
    *service.backend.disk_pauses.lock().unwrap() = Some(4096);
    let alpha = service.client(ALPHA_TOKEN);
    let (first, second) = (alpha.open(None).await, alpha.open(None).await);
    let (status, info) = alpha
        .post(&format!("/v1/sessions/{first}/pause"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{info}");
    let over = alpha
        .post(&format!("/v1/sessions/{second}/pause"), json!({}))
        .await;
    assert_error(&over, StatusCode::TOO_MANY_REQUESTS, "pause_quota");
    let message = over.1["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("tenant \"alpha\" holds 4k") && message.contains("pause_quota_bytes"),
        "{message}"
    );
    assert!(!service.backend.is_paused(&second), "restored at once");
    let (status, _) = alpha.exec(&second, "echo on").await;
    assert_eq!(status, StatusCode::OK);
    // Another tenant's quota is its own.
    let beta = service.client(BETA_TOKEN);
    let theirs = beta.open(None).await;
    let (status, _) = beta
        .post(&format!("/v1/sessions/{theirs}/pause"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);

    // Taken back after a restart, the image on disk is counted again.
    drop((alpha, beta));
    let (dir, backend) = service.shut_down();
    let service = TestService::over(&config_toml, dir, backend);
    service.core.restore().await.unwrap();
    let alpha = service.client(ALPHA_TOKEN);
    let over = alpha
        .post(&format!("/v1/sessions/{second}/pause"), json!({}))
        .await;
    assert_error(&over, StatusCode::TOO_MANY_REQUESTS, "pause_quota");
    // Resumed, its image no longer counts.
    alpha
        .post(&format!("/v1/sessions/{first}/resume"), json!({}))
        .await;
    let (status, info) = alpha
        .post(&format!("/v1/sessions/{second}/pause"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{info}");
    let (_, log) = alpha.get(&format!("/v1/sessions/{second}/activity")).await;
    let refused = log["entries"].as_array().unwrap().iter().find(|e| {
        e["action"] == "pause"
            && e["error"]
                .as_str()
                .is_some_and(|t| t.starts_with("pause_quota"))
    });
    assert!(refused.is_some(), "the refusal is in the log: {log}");
}

#[tokio::test]
async fn an_idle_session_past_the_pause_quota_is_closed_as_without_pausing() {
    let policy =
        "[policy]\nidle_timeout_secs = 1\nidle_action = \"pause\"\npause_quota_bytes = 6000\n";
    let service = TestService::start(&config(4, 0, policy));
    *service.backend.disk_pauses.lock().unwrap() = Some(4096);
    let (first, second) = (service.open(None).await, service.open(None).await);
    let maintenance = tokio::spawn(service.core.clone().maintain());
    let backend = service.backend.clone();
    // One of the two is paused to disk; the other would pass the quota and is closed.
    let one_paused = eventually(Duration::from_secs(5), || {
        backend.is_paused(&first) || backend.is_paused(&second)
    })
    .await;
    assert!(one_paused, "neither was paused");
    let closed = if backend.is_paused(&first) {
        &second
    } else {
        &first
    };
    let info = service.wait_for_end(closed, Duration::from_secs(5)).await;
    maintenance.abort();
    let reason = info["end_reason"].as_str().unwrap();
    assert!(
        reason.contains("idle") && reason.contains("pause_quota"),
        "{reason}"
    );
}
