//! Every operation's role, proven against the served OpenAPI document: an operation for the
//! administrator alone answers a tenant `403 admin_only`, every other one does not, and an
//! operation missing from [`ROLES`] fails the test, so a new route cannot forget its role.

mod common;

use axum::http::{Method, StatusCode};
use common::*;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The service token only: a tenant gets `403 admin_only`.
    Admin,
    /// Any accepted token (or none); a tenant is scoped to its own sessions.
    Anyone,
}

/// The role of every operation the service serves, as (method, path).
const ROLES: &[(&str, &str, Role)] = &[
    ("get", "/", Role::Anyone),
    ("get", "/assets/{path}", Role::Anyone),
    ("get", "/docs/api", Role::Anyone),
    ("get", "/healthz", Role::Anyone),
    ("get", "/metrics", Role::Admin),
    ("post", "/mcp", Role::Anyone),
    ("get", "/mcp", Role::Anyone),
    ("delete", "/mcp", Role::Anyone),
    ("get", "/v1/audit", Role::Admin),
    ("get", "/v1/config", Role::Admin),
    ("get", "/v1/engine", Role::Admin),
    ("get", "/v1/events", Role::Anyone),
    ("get", "/v1/openapi.json", Role::Anyone),
    ("get", "/v1/policy", Role::Anyone),
    ("get", "/v1/runtimes", Role::Anyone),
    ("post", "/v1/runtimes/{name}/build", Role::Admin),
    ("get", "/v1/sessions", Role::Anyone),
    ("get", "/v1/volumes", Role::Anyone),
    ("post", "/v1/volumes", Role::Anyone),
    ("get", "/v1/volumes/{name}", Role::Anyone),
    ("delete", "/v1/volumes/{name}", Role::Anyone),
    ("get", "/v1/volumes/{name}/files/content", Role::Anyone),
    ("put", "/v1/volumes/{name}/files/content", Role::Anyone),
    ("post", "/v1/sessions", Role::Anyone),
    ("get", "/v1/sessions/{id}", Role::Anyone),
    ("delete", "/v1/sessions/{id}", Role::Anyone),
    ("get", "/v1/sessions/{id}/activity", Role::Anyone),
    ("post", "/v1/sessions/{id}/exec", Role::Anyone),
    ("get", "/v1/sessions/{id}/files", Role::Anyone),
    ("delete", "/v1/sessions/{id}/files", Role::Anyone),
    ("get", "/v1/sessions/{id}/files/content", Role::Anyone),
    ("put", "/v1/sessions/{id}/files/content", Role::Anyone),
    ("get", "/v1/sessions/{id}/files/stat", Role::Anyone),
    ("post", "/v1/sessions/{id}/files/mkdir", Role::Anyone),
    ("post", "/v1/sessions/{id}/files/move", Role::Anyone),
    ("get", "/v1/sessions/{id}/files/watch", Role::Anyone),
    ("get", "/v1/sessions/{id}/ports", Role::Anyone),
    ("post", "/v1/sessions/{id}/ports/{port}/share", Role::Anyone),
    ("get", "/v1/sessions/{id}/shares", Role::Anyone),
    (
        "delete",
        "/v1/sessions/{id}/shares/{share_id}",
        Role::Anyone,
    ),
    ("get", "/v1/sessions/{id}/tunnels/{port}", Role::Anyone),
    ("get", "/p/{capability}", Role::Anyone),
    ("get", "/p/{capability}/", Role::Anyone),
    ("put", "/p/{capability}/", Role::Anyone),
    ("post", "/p/{capability}/", Role::Anyone),
    ("delete", "/p/{capability}/", Role::Anyone),
    ("patch", "/p/{capability}/", Role::Anyone),
    ("get", "/p/{capability}/{path}", Role::Anyone),
    ("put", "/p/{capability}/{path}", Role::Anyone),
    ("post", "/p/{capability}/{path}", Role::Anyone),
    ("delete", "/p/{capability}/{path}", Role::Anyone),
    ("patch", "/p/{capability}/{path}", Role::Anyone),
    ("get", "/v1/sessions/{id}/ports/{port}", Role::Anyone),
    ("get", "/v1/sessions/{id}/ports/{port}/", Role::Anyone),
    ("put", "/v1/sessions/{id}/ports/{port}/", Role::Anyone),
    ("post", "/v1/sessions/{id}/ports/{port}/", Role::Anyone),
    ("delete", "/v1/sessions/{id}/ports/{port}/", Role::Anyone),
    ("patch", "/v1/sessions/{id}/ports/{port}/", Role::Anyone),
    ("get", "/v1/sessions/{id}/ports/{port}/{path}", Role::Anyone),
    ("put", "/v1/sessions/{id}/ports/{port}/{path}", Role::Anyone),
    (
        "post",
        "/v1/sessions/{id}/ports/{port}/{path}",
        Role::Anyone,
    ),
    (
        "delete",
        "/v1/sessions/{id}/ports/{port}/{path}",
        Role::Anyone,
    ),
    (
        "patch",
        "/v1/sessions/{id}/ports/{port}/{path}",
        Role::Anyone,
    ),
    ("get", "/v1/sessions/{id}/processes", Role::Anyone),
    ("post", "/v1/sessions/{id}/processes", Role::Anyone),
    ("delete", "/v1/sessions/{id}/processes", Role::Anyone),
    ("post", "/v1/sessions/{id}/processes/run", Role::Anyone),
    (
        "get",
        "/v1/sessions/{id}/processes/{process_id}",
        Role::Anyone,
    ),
    (
        "post",
        "/v1/sessions/{id}/processes/{process_id}/resize",
        Role::Anyone,
    ),
    (
        "post",
        "/v1/sessions/{id}/processes/{process_id}/signal",
        Role::Anyone,
    ),
    (
        "post",
        "/v1/sessions/{id}/processes/{process_id}/stdin",
        Role::Anyone,
    ),
    (
        "post",
        "/v1/sessions/{id}/processes/{process_id}/stdin/close",
        Role::Anyone,
    ),
    (
        "get",
        "/v1/sessions/{id}/processes/{process_id}/stream",
        Role::Anyone,
    ),
    ("get", "/v1/sessions/{id}/pty", Role::Anyone),
    ("post", "/v1/sessions/{id}/tickets", Role::Anyone),
    ("post", "/v1/sessions/{id}/pause", Role::Anyone),
    ("post", "/v1/sessions/{id}/resume", Role::Anyone),
    ("post", "/v1/sessions/{id}/snapshots", Role::Anyone),
    ("post", "/v1/sessions/{id}/fork", Role::Anyone),
    ("get", "/v1/snapshots", Role::Anyone),
    ("get", "/v1/snapshots/{snapshot_id}", Role::Anyone),
    ("delete", "/v1/snapshots/{snapshot_id}", Role::Anyone),
    ("get", "/v1/stats", Role::Anyone),
    ("get", "/v1/sessions/{id}/archive", Role::Anyone),
    ("put", "/v1/sessions/{id}/archive", Role::Anyone),
    ("get", "/v1/sessions/{id}/contexts", Role::Anyone),
    ("post", "/v1/sessions/{id}/contexts", Role::Anyone),
    (
        "delete",
        "/v1/sessions/{id}/contexts/{context}",
        Role::Anyone,
    ),
    (
        "post",
        "/v1/sessions/{id}/contexts/{context}/restart",
        Role::Anyone,
    ),
    (
        "post",
        "/v1/sessions/{id}/contexts/{context}/run",
        Role::Anyone,
    ),
    ("post", "/v1/sessions/{id}/code", Role::Anyone),
    ("get", "/v1/sessions/{id}/network", Role::Anyone),
    ("put", "/v1/sessions/{id}/network", Role::Anyone),
    ("post", "/v1/sessions/{id}/computer", Role::Anyone),
    ("get", "/v1/sessions/{id}/computer/screenshot", Role::Anyone),
    ("get", "/v1/sessions/{id}/computer/view", Role::Anyone),
    ("post", "/v1/sessions/{id}/computer/recording", Role::Anyone),
    (
        "delete",
        "/v1/sessions/{id}/computer/recording",
        Role::Anyone,
    ),
];

/// The operations of the served document, as (method, path).
async fn documented(service: &TestService) -> BTreeSet<(String, String)> {
    let (status, document) = service.get("/v1/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let paths = document["paths"].as_object().unwrap();
    paths
        .iter()
        .flat_map(|(path, item)| {
            let methods = item.as_object().unwrap().keys();
            methods
                .filter(|m| ["get", "put", "post", "delete", "patch"].contains(&m.as_str()))
                .map(move |m| (m.clone(), path.clone()))
        })
        .collect()
}

/// The path with its parameters filled: the caller's own session, a runtime, a file.
fn concrete(path: &str, session: &str) -> String {
    let filled = path
        .replace("{id}", session)
        .replace("{process_id}", "p1")
        .replace("{name}", "sh")
        .replace("{port}", "8000")
        .replace("{capability}", "not-a-capability")
        .replace("{share_id}", "s1")
        .replace("{path}", "app.js");
    let query = if path.contains("/files") {
        "?path=a"
    } else {
        ""
    };
    format!("{filled}{query}")
}

/// Whether `client`'s request to the operation was refused as the administrator's alone.
async fn refused_as_admin_only(client: &Client, method: &str, path: &str) -> (bool, String) {
    // An endless stream (the events) is served when its answer does not end.
    if path == "/v1/events" {
        let answer = refused_as_admin_only_now(client, method, path);
        return tokio::time::timeout(std::time::Duration::from_secs(2), answer)
            .await
            .unwrap_or((false, "200 an endless stream".into()));
    }
    refused_as_admin_only_now(client, method, path).await
}

async fn refused_as_admin_only_now(client: &Client, method: &str, path: &str) -> (bool, String) {
    let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
    let (content_type, body) = match method {
        Method::PUT => ("application/octet-stream", b"x".to_vec()),
        _ => ("application/json", b"{}".to_vec()),
    };
    let answer = client.send(method, path, Some(content_type), body).await;
    let json = answer.json();
    let refused = answer.status == StatusCode::FORBIDDEN && json["error"]["code"] == "admin_only";
    (refused, format!("{} {}", answer.status, json))
}

#[tokio::test]
async fn every_operation_checks_the_role_its_table_entry_names() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let tenant = service.client(ALPHA_TOKEN);
    let admin = service.admin();
    let tenants_session = tenant.open(None).await;
    let admins_session = service.open(None).await;

    let operations = documented(&service).await;
    let table: BTreeSet<(String, String)> = ROLES
        .iter()
        .map(|(m, p, _)| (m.to_string(), p.to_string()))
        .collect();
    let missing: Vec<_> = operations.difference(&table).collect();
    assert!(
        missing.is_empty(),
        "operations without a role in ROLES: {missing:?}"
    );
    let stale: Vec<_> = table.difference(&operations).collect();
    assert!(
        stale.is_empty(),
        "ROLES names operations not served: {stale:?}"
    );

    // Read-only and session operations first; closing a session last.
    let mut ordered: Vec<_> = ROLES.iter().collect();
    ordered.sort_by_key(|(method, path, _)| *method == "delete" && *path == "/v1/sessions/{id}");
    for (method, path, role) in ordered {
        let (tenant_refused, answer) =
            refused_as_admin_only(&tenant, method, &concrete(path, &tenants_session)).await;
        match role {
            Role::Admin => assert!(tenant_refused, "{method} {path} to a tenant: {answer}"),
            Role::Anyone => assert!(!tenant_refused, "{method} {path} to a tenant: {answer}"),
        }
        let (admin_refused, answer) =
            refused_as_admin_only(&admin, method, &concrete(path, &admins_session)).await;
        assert!(
            !admin_refused,
            "{method} {path} to the administrator: {answer}"
        );
    }
}

#[test]
fn the_table_names_each_operation_once() {
    let mut seen = BTreeSet::new();
    for (method, path, _) in ROLES {
        assert!(seen.insert((method, path)), "{method} {path} twice");
    }
    let admin: Vec<&str> = ROLES
        .iter()
        .filter(|(_, _, role)| *role == Role::Admin)
        .map(|(_, path, _)| *path)
        .collect();
    assert!(admin.contains(&"/v1/audit") && admin.contains(&"/metrics"));
}
