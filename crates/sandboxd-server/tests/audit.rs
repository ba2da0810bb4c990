//! What the logs keep: a session's activity log names programs and paths but never a payload
//! (arguments, a cwd, a terminal's command), and the audit log records every cross-tenant
//! attempt for the administrator alone.

mod common;

use axum::http::StatusCode;
use common::*;
use sandboxd_core::{Caller, Interface, Principal};
use serde_json::{json, Value};

#[tokio::test]
async fn no_argument_cwd_or_terminal_command_reaches_the_activity_log() {
    let service = TestService::default_service();
    let admin = service.admin();
    let id = service.open(None).await;
    let exec = format!("/v1/sessions/{id}/exec");

    let (status, _) = admin.exec(&id, "curl${IFS}secret").await;
    assert_eq!(status, StatusCode::OK);
    // A program is named by its plain base name (an address, like a file's path): never its
    // directory, and nothing at all when the name is not plain.
    for argv0 in [
        "secret argv0",
        "/opt/secret-argv0/run",
        "/opt/secret dir/run",
        "$secret-argv0",
    ] {
        let (status, _) = admin
            .post(&exec, json!({"argv": [argv0, "--token=secret"]}))
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let answer = admin
        .post(&exec, json!({"command": "ls secret", "cwd": "/secret-dir"}))
        .await;
    assert_error(&answer, StatusCode::BAD_REQUEST, "spawn_failed");
    assert!(
        answer.1.to_string().contains("secret-dir"),
        "the caller still hears what failed: {}",
        answer.1
    );
    // The fake agent starts no processes: both are refused, and recorded.
    admin
        .post(
            &format!("/v1/sessions/{id}/processes"),
            json!({"command": "secret=1 \"$secret\" --secret"}),
        )
        .await;
    let caller = Caller::new(Principal::Admin, Interface::Api);
    let terminal = service
        .core
        .open_terminal(&caller, &id, None, None, Some("top secret".into()))
        .await;
    assert!(terminal.is_err());

    let (status, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    assert_eq!(status, StatusCode::OK);
    let text = log.to_string();
    assert!(!text.contains("secret"), "{text}");
    let named: Vec<(&str, &str)> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), e["target"].as_str().unwrap()))
        .collect();
    for expected in [
        ("exec", "shell"),
        ("exec", "program"),
        ("exec", "run"),
        ("exec", "ls"),
        ("process_start", "shell"),
        ("pty", "top"),
    ] {
        assert!(named.contains(&expected), "{expected:?} in {named:?}");
    }
}

/// The audit log, as the administrator reads it.
async fn audit(service: &TestService) -> Vec<Value> {
    let (status, body) = service.get("/v1/audit").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["entries"].as_array().unwrap().clone()
}

#[tokio::test]
async fn cross_tenant_attempts_are_audited_and_still_look_unknown() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN).via("cli");
    let beta = service.client(BETA_TOKEN);
    let id = beta.open(None).await;

    let probes = [
        alpha.get(&format!("/v1/sessions/{id}")).await,
        alpha.exec(&id, "echo x").await,
        alpha.get(&format!("/v1/sessions/{id}/files")).await,
        alpha.delete(&format!("/v1/sessions/{id}")).await,
    ];
    let unknown = alpha.get("/v1/sessions/no-such-session").await;
    for probe in &probes {
        assert_error(probe, StatusCode::NOT_FOUND, "not_found");
        let message = probe.1["error"]["message"].as_str().unwrap();
        let unknown_message = unknown.1["error"]["message"].as_str().unwrap();
        assert_eq!(
            message.replace(&id, "ID"),
            unknown_message.replace("no-such-session", "ID"),
            "the refusal reads like an unknown id"
        );
    }

    let entries = audit(&service).await;
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["close", "list_files", "exec", "get_session"],
        "newest first"
    );
    for entry in &entries {
        assert_eq!(entry["principal"], "tenant:alpha");
        assert_eq!(entry["interface"], "cli");
        assert_eq!(entry["session_id"], id.as_str());
        assert_eq!(entry["outcome"], "denied");
        assert!(entry["at"].as_str().unwrap().ends_with('Z'), "{entry}");
    }
    let (status, limited) = service.get("/v1/audit?limit=1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(limited["entries"].as_array().unwrap().len(), 1);
    assert_eq!(limited["entries"][0]["action"], "close");

    // Beta's session is untouched, and its own log shows nothing of alpha.
    let (_, info) = beta.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "running");
    let (_, log) = beta.get(&format!("/v1/sessions/{id}/activity")).await;
    assert!(!log.to_string().contains("tenant:alpha"), "{log}");
}

#[tokio::test]
async fn only_the_administrator_reads_the_audit_log() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    assert_error(
        &service.client(ALPHA_TOKEN).get("/v1/audit").await,
        StatusCode::FORBIDDEN,
        "admin_only",
    );
    for limit in ["0", "501", "x"] {
        assert_error(
            &service.get(&format!("/v1/audit?limit={limit}")).await,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        );
    }
}

#[tokio::test]
async fn what_is_not_cross_tenant_is_not_audited() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let alpha = service.client(ALPHA_TOKEN);
    let own = alpha.open(None).await;
    let admins = service.open(None).await;
    // An unknown id (admin or tenant), a tenant's own session, and the administrator
    // reaching a tenant's.
    service.get("/v1/sessions/no-such-session").await;
    alpha.get("/v1/sessions/no-such-session").await;
    alpha.get(&format!("/v1/sessions/{own}")).await;
    service.get(&format!("/v1/sessions/{own}")).await;
    assert!(audit(&service).await.is_empty());
    // A tenant reaching the administrator's session is cross-tenant.
    alpha.get(&format!("/v1/sessions/{admins}")).await;
    assert_eq!(audit(&service).await.len(), 1);
}

#[tokio::test]
async fn an_unknown_runtime_error_lists_only_the_callers_runtimes() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let answer = service.client(ALPHA_TOKEN).create(Some("nope")).await;
    assert_error(&answer, StatusCode::BAD_REQUEST, "unknown_runtime");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("allowed: sh;"), "{message}");
    assert!(
        !message.contains("py") && !message.contains("ghost"),
        "{message}"
    );
    // A runtime it may not use reads exactly like one that does not exist.
    let refused = service.client(ALPHA_TOKEN).create(Some("py")).await;
    assert_error(&refused, StatusCode::BAD_REQUEST, "unknown_runtime");
    let admin = service.admin().create(Some("nope")).await;
    let message = admin.1["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("py") && message.contains("sh"),
        "{message}"
    );
}
