//! Sessions ending on their own: idle expiry, vanished sandboxes, and taking sessions back
//! after a restart.

mod common;

use axum::http::StatusCode;
use common::*;
use sandboxd_backend::{Backend, SandboxSpec};
use std::time::Duration;

#[tokio::test]
async fn an_idle_session_expires_and_says_why() {
    let service = TestService::start(&config(4, 0, "[policy]\nidle_timeout_secs = 1\n"));
    let id = service.open(None).await;
    let maintenance = tokio::spawn(service.core.clone().maintain());
    let info = service.wait_for_end(&id, Duration::from_secs(4)).await;
    maintenance.abort();
    assert_eq!(info["state"], "ended", "{info}");
    let reason = info["end_reason"].as_str().unwrap();
    assert!(reason.contains("idle"), "{reason}");
    assert_eq!(service.backend.running(), 0);
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    assert_eq!(log["entries"][0]["action"], "expire");
    assert_eq!(log["entries"][0]["principal"], "sandboxd");
    assert_eq!(log["entries"][0]["interface"], "service");
    // Its slot is free.
    let (_, stats) = service.get("/v1/stats").await;
    assert_eq!(stats["sessions"], 0);
}

#[tokio::test]
async fn a_vanished_sandbox_ends_its_session() {
    let service = TestService::default_service();
    let gone = service.open(None).await;
    let kept = service.open(None).await;
    service.backend.vanish(&gone);
    // The first sandbox check runs at once.
    let maintenance = tokio::spawn(service.core.clone().maintain());
    let info = service.wait_for_end(&gone, Duration::from_secs(2)).await;
    maintenance.abort();
    assert_eq!(info["state"], "ended", "{info}");
    let reason = info["end_reason"].as_str().unwrap();
    assert!(reason.contains("sandbox stopped"), "{reason}");
    let (_, info) = service.get(&format!("/v1/sessions/{kept}")).await;
    assert_eq!(info["state"], "running");
    assert_eq!(
        service.admin().exec(&kept, "echo ok").await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn exec_in_a_vanished_sandbox_is_sandbox_gone() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    service.backend.vanish(&id);
    assert_error(
        &service.admin().exec(&id, "echo hi").await,
        StatusCode::GONE,
        "sandbox_gone",
    );
}

#[tokio::test]
async fn a_restart_resumes_ends_and_cleans_up() {
    let config_toml = config(6, 0, &two_tenants());
    let service = TestService::start(&config_toml);
    let resumed = service.open(None).await;
    let alpha_resumed = service.client(ALPHA_TOKEN).open(None).await;
    let vanished = service.open(Some("py")).await;
    let stopped = service.open(None).await;
    let closed = service.open(None).await;
    service
        .admin()
        .put_bytes(
            &format!("/v1/sessions/{resumed}/files/content?path=kept.txt"),
            b"still here",
        )
        .await;
    service.delete(&format!("/v1/sessions/{closed}")).await;
    let (dir, backend) = service.shut_down();

    // While the service is down: one sandbox vanishes, one stops, one appears that no session
    // owns.
    backend.vanish(&vanished);
    backend.stop(&stopped);
    let limits = sandboxd_config::Config::parse(&config_toml)
        .unwrap()
        .defaults;
    backend
        .create(&SandboxSpec {
            session_id: "orphan-sandbox".into(),
            runtime: "sh".into(),
            image: SH_IMAGE.into(),
            limits,
            volumes: Vec::new(),
            memory_from: None,
        })
        .await
        .unwrap();

    let service = TestService::over(&config_toml, dir, backend);
    let report = service.core.restore().await.unwrap();
    assert_eq!(
        (report.resumed, report.ended, report.orphans_removed),
        (2, 2, 1),
        "{report:?}"
    );
    // The running ones work as before, files and tenant included.
    let (status, result) = service.admin().exec(&resumed, "echo back").await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["stdout"], "back\n");
    let file = service
        .admin()
        .send(
            axum::http::Method::GET,
            &format!("/v1/sessions/{resumed}/files/content?path=kept.txt"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(file.body, b"still here");
    let alpha = service.client(ALPHA_TOKEN);
    let (_, info) = alpha.get(&format!("/v1/sessions/{alpha_resumed}")).await;
    assert_eq!(info["state"], "running");
    assert_eq!(info["tenant"], "alpha");

    // The others ended, saying why.
    let (_, info) = service.get(&format!("/v1/sessions/{vanished}")).await;
    assert_eq!(info["state"], "ended");
    assert!(
        info["end_reason"].as_str().unwrap().contains("gone"),
        "{info}"
    );
    let (_, info) = service.get(&format!("/v1/sessions/{stopped}")).await;
    assert_eq!(info["state"], "ended");
    assert!(
        info["end_reason"].as_str().unwrap().contains("stopped"),
        "{info}"
    );
    assert_error(
        &service.admin().exec(&stopped, "echo hi").await,
        StatusCode::CONFLICT,
        "session_ended",
    );
    let (_, info) = service.get(&format!("/v1/sessions/{closed}")).await;
    assert_eq!(info["end_reason"], "closed by the client");

    // Only the resumed sandboxes are left; the service counts them.
    assert_eq!(service.backend.running(), 2);
    let (_, stats) = service.get("/v1/stats").await;
    assert_eq!(stats["sessions"], 2);
    let (_, list) = service.get("/v1/sessions").await;
    assert_eq!(list["sessions"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn taken_back_sessions_serve_before_the_engine_answers_and_what_opens_meanwhile_is_kept() {
    let config_toml = config(4, 0, "");
    let service = TestService::start(&config_toml);
    let kept = service.open(None).await;
    let vanished = service.open(None).await;
    let (dir, backend) = service.shut_down();
    backend.vanish(&vanished);

    // An engine slow to list its sandboxes, as one running thousands is.
    let service = TestService::over(&config_toml, dir, backend);
    let listing = service.backend.hold_listings();
    let taken = service.core.take_back().await.unwrap();
    assert_eq!(taken.count(), 2);
    let (status, result) = service.admin().exec(&kept, "echo served").await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["stdout"], "served\n");

    // A session opened before the engine answered waits for the judging, so it is not taken
    // for an unowned sandbox.
    let opening = tokio::spawn({
        let client = service.admin();
        async move { client.open(None).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!opening.is_finished(), "a create ran before the judging");
    let judging = tokio::spawn({
        let core = service.core.clone();
        async move { core.reconcile(taken).await }
    });
    drop(listing);
    let report = judging.await.unwrap().unwrap();
    assert_eq!(
        (report.resumed, report.ended, report.orphans_removed),
        (1, 1, 0),
        "{report:?}"
    );
    let opened = opening.await.unwrap();
    assert_eq!(
        service.admin().exec(&opened, "echo new").await.0,
        StatusCode::OK
    );
    let (_, info) = service.get(&format!("/v1/sessions/{vanished}")).await;
    assert_eq!(info["state"], "ended", "{info}");
    assert!(
        info["end_reason"].as_str().unwrap().contains("was gone"),
        "{info}"
    );
    assert_eq!(service.backend.running(), 2);
}

#[tokio::test]
async fn a_sandbox_removed_while_its_agent_is_awaited_after_a_restart_is_reported_removed() {
    let config_toml = config(4, 0, "");
    let service = TestService::start(&config_toml);
    let kept = service.open(None).await;
    let (dir, backend) = service.shut_down();

    // Its agent is slow to dial back, and its sandbox is removed meanwhile.
    *backend.adopt_delay.lock().unwrap() = Duration::from_millis(300);
    let service = TestService::over(&config_toml, dir, backend);
    let report = service.core.restore().await.unwrap();
    assert_eq!(report.resumed, 1, "{report:?}");
    service.backend.vanish(&kept);
    let info = service.wait_for_end(&kept, Duration::from_secs(3)).await;
    assert_eq!(info["state"], "ended", "{info}");
    assert!(
        info["end_reason"]
            .as_str()
            .unwrap()
            .contains("removed outside sandboxd"),
        "{info}"
    );
}
