//! Tenants: each sees and touches only its own sessions, opens only its runtimes, counts only
//! its own figures, and stays under its quota without starving another tenant.

mod common;

use axum::http::{Method, StatusCode};
use common::*;
use futures_util::future::join_all;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn another_tenants_session_is_not_found_whatever_the_operation() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let beta = service.client(BETA_TOKEN);
    let id = alpha.open(None).await;
    alpha
        .put_bytes(&format!("/v1/sessions/{id}/files/content?path=a"), b"x")
        .await;

    assert_error(
        &beta.get(&format!("/v1/sessions/{id}")).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &beta.exec(&id, "echo x").await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &beta.get(&format!("/v1/sessions/{id}/activity")).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &beta.get(&format!("/v1/sessions/{id}/files")).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &beta
            .get(&format!("/v1/sessions/{id}/files/content?path=a"))
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &beta
            .put_bytes(&format!("/v1/sessions/{id}/files/content?path=a"), b"y")
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &beta
            .delete(&format!("/v1/sessions/{id}/files?path=a"))
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &beta.delete(&format!("/v1/sessions/{id}")).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    // The answer is the same as for an id that does not exist, so ids cannot be probed.
    let (_, unknown) = beta.get("/v1/sessions/000000000000000000000000").await;
    let (_, foreign) = beta.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .replace("000000000000000000000000", &id),
        foreign["error"]["message"].as_str().unwrap()
    );

    // Nothing happened to it: still running, its file intact, no entry of beta's in its log.
    let (_, info) = alpha.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "running");
    let file = alpha
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/files/content?path=a"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(file.body, b"x");
    let (_, log) = alpha.get(&format!("/v1/sessions/{id}/activity")).await;
    assert!(!log.to_string().contains("tenant:beta"), "{log}");
    // The administrator reaches every session.
    assert_eq!(
        service.get(&format!("/v1/sessions/{id}")).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_tenant_lists_only_its_own_sessions_which_carry_its_name() {
    let service = TestService::start(&config(6, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let beta = service.client(BETA_TOKEN);
    // A tenant cannot pass its sessions off as another's.
    let (status, info) = alpha.post("/v1/sessions", json!({"tenant": "beta"})).await;
    assert_eq!(status, StatusCode::CREATED, "{info}");
    assert_eq!(info["tenant"], "alpha");
    let alpha_id = info["id"].as_str().unwrap().to_string();
    let beta_id = beta.open(Some("py")).await;
    let admin_id = service.open(None).await;

    let (_, listed) = alpha.get("/v1/sessions?include_ended=true").await;
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["id"], alpha_id.as_str());
    let (_, listed) = beta.get("/v1/sessions").await;
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["sessions"][0]["id"], beta_id.as_str());
    assert_eq!(listed["sessions"][0]["tenant"], "beta");

    let (_, all) = service.get("/v1/sessions").await;
    assert_eq!(all["sessions"].as_array().unwrap().len(), 3);
    let (_, admin_info) = service.get(&format!("/v1/sessions/{admin_id}")).await;
    assert!(admin_info["tenant"].is_null(), "{admin_info}");
}

#[tokio::test]
async fn runtimes_a_tenant_may_not_use_are_refused_and_not_listed() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let answer = alpha.create(Some("py")).await;
    assert_error(&answer, StatusCode::BAD_REQUEST, "unknown_runtime");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("allowed: sh"), "{message}");
    assert_eq!(service.creates(), 0);

    let (_, runtimes) = alpha.get("/v1/runtimes").await;
    let names: Vec<&str> = runtimes["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["sh"]);
    let (_, stats) = alpha.get("/v1/stats").await;
    assert_eq!(stats["runtimes_allowed"], 1);
    // The default is one it may use.
    assert_eq!(runtimes["default_runtime"], "sh");
    // Beta names none, so it may use them all.
    let (_, runtimes) = service.client(BETA_TOKEN).get("/v1/runtimes").await;
    assert_eq!(runtimes["runtimes"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn a_tenant_that_may_not_use_the_default_runtime_gets_one_it_may_use() {
    let tenants = tenant("gamma", "gamma-token-0123456789abcdef", 2, Some(&["py"]));
    let service = TestService::start(&config(4, 0, &tenants));
    let gamma = service.client("gamma-token-0123456789abcdef");
    let (_, runtimes) = gamma.get("/v1/runtimes").await;
    assert_eq!(runtimes["default_runtime"], "py");
    let (status, opened) = gamma.create(None).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    assert_eq!(opened["runtime"], "py");
    // The administrator's default is the service's.
    let (_, runtimes) = service.admin().get("/v1/runtimes").await;
    assert_eq!(runtimes["default_runtime"], "sh");
}

#[tokio::test]
async fn a_tenant_stats_count_only_its_own_sessions() {
    let service = TestService::start(&config(6, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let beta = service.client(BETA_TOKEN);
    alpha.open(None).await;
    beta.open(None).await;
    beta.open(None).await;
    service.open(None).await;
    let (_, stats) = alpha.get("/v1/stats").await;
    assert_eq!(stats["sessions"], 1, "{stats}");
    assert_eq!(stats["memory_bytes"], 1 << 20);
    let (_, stats) = beta.get("/v1/stats").await;
    assert_eq!(stats["sessions"], 2, "{stats}");
    let (_, stats) = service.get("/v1/stats").await;
    assert_eq!(stats["sessions"], 4, "{stats}");
}

#[tokio::test]
async fn a_tenant_at_its_quota_opens_again_after_closing_one() {
    let service = TestService::start(&config(6, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let first = alpha.open(None).await;
    alpha.open(None).await;
    assert_error(
        &alpha.create(None).await,
        StatusCode::TOO_MANY_REQUESTS,
        "tenant_quota",
    );
    // Another tenant is not affected.
    service.client(BETA_TOKEN).open(None).await;
    alpha.delete(&format!("/v1/sessions/{first}")).await;
    alpha.open(None).await;
}

#[tokio::test]
async fn a_tenants_burst_does_not_starve_another_tenant() {
    let tenants = format!(
        "{}{}",
        tenant("alpha", ALPHA_TOKEN, 1, None),
        tenant("beta", BETA_TOKEN, 1, None)
    );
    let service = TestService::start(&config(2, 0, &tenants));
    service.set_create_delay(Duration::from_millis(200));
    let alpha = service.client(ALPHA_TOKEN);
    let beta = service.client(BETA_TOKEN);
    let burst = join_all((0..10).map(|_| alpha.create(None)));
    let (burst, beta_answer) = tokio::join!(burst, async {
        // Let the burst get in first.
        tokio::time::sleep(Duration::from_millis(20)).await;
        beta.create(None).await
    });
    assert_eq!(beta_answer.0, StatusCode::CREATED, "{}", beta_answer.1);
    let created = burst
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .count();
    assert_eq!(created, 1, "alpha's quota is 1");
    for answer in burst.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
        assert_error(answer, StatusCode::TOO_MANY_REQUESTS, "tenant_quota");
    }
    assert_eq!(service.creates(), 2);
    assert_eq!(service.backend.running(), 2);
}
