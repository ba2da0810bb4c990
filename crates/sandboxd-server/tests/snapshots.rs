//! Snapshots and forks over the fake platform: the REST routes, sessions opened from a
//! snapshot, tenants, quotas, forks that open all or none, and a restart.

mod common;

use axum::http::StatusCode;
use common::*;
use serde_json::{json, Value};

async fn write(service: &TestService, id: &str, path: &str, contents: &[u8]) {
    let (status, body) = service
        .admin()
        .put_bytes(
            &format!("/v1/sessions/{id}/files/content?path={path}"),
            contents,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn read(service: &TestService, id: &str, path: &str) -> Vec<u8> {
    let answer = service
        .admin()
        .send(
            axum::http::Method::GET,
            &format!("/v1/sessions/{id}/files/content?path={path}"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    answer.body
}

#[tokio::test]
async fn a_snapshot_is_listed_opened_and_deleted() {
    let service = TestService::default_service();
    let (_, source) = service
        .post(
            "/v1/sessions",
            json!({"runtime": "py", "labels": {"team": "red"}}),
        )
        .await;
    let source = source["id"].as_str().unwrap().to_string();
    write(&service, &source, "notes.txt", b"kept").await;
    write(&service, &source, "/tmp/scratch", b"tmp too").await;
    let (status, taken) = snapshot(&service.admin(), &source, "first").await;
    assert_eq!(status, StatusCode::CREATED, "{taken}");
    assert_eq!(taken["runtime"], "py");
    assert_eq!(taken["paths"], json!(["/workspace", "/tmp"]));
    let id = taken["id"].as_str().unwrap().to_string();
    let (_, listed) = service.get("/v1/snapshots").await;
    assert_eq!(listed["snapshots"], json!([taken]));
    let (_, log) = service
        .get(&format!("/v1/sessions/{source}/activity"))
        .await;
    assert_eq!(log["entries"][0]["action"], "snapshot");
    assert_eq!(log["entries"][0]["target"], id.as_str());

    let (status, opened) = service
        .post(
            "/v1/sessions",
            json!({"snapshot": id, "labels": {"copy": "yes"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    assert_eq!(opened["runtime"], "py");
    assert_eq!(opened["labels"], json!({"copy": "yes", "team": "red"}));
    let copy = opened["id"].as_str().unwrap();
    assert_eq!(read(&service, copy, "notes.txt").await, b"kept");
    assert_eq!(read(&service, copy, "/tmp/scratch").await, b"tmp too");

    assert_error(
        &service
            .post("/v1/sessions", json!({"snapshot": id, "runtime": "sh"}))
            .await,
        StatusCode::BAD_REQUEST,
        "snapshot_runtime",
    );
    let (status, _) = service.delete(&format!("/v1/snapshots/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(kept(&service), 0);
    for answer in [
        service.get(&format!("/v1/snapshots/{id}")).await,
        service.delete(&format!("/v1/snapshots/{id}")).await,
        service.post("/v1/sessions", json!({"snapshot": id})).await,
    ] {
        assert_error(&answer, StatusCode::NOT_FOUND, "not_found");
    }
    assert_error(
        &snapshot(&service.admin(), &source, "").await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
}

#[tokio::test]
async fn snapshots_are_the_tenants_own() {
    let service = TestService::start(&config(6, 0, &two_tenants()));
    let (alpha, beta) = (service.client(ALPHA_TOKEN), service.client(BETA_TOKEN));
    let session = alpha.open(None).await;
    let (_, taken) = snapshot(&alpha, &session, "alpha's").await;
    let id = taken["id"].as_str().unwrap();
    assert_eq!(taken["tenant"], "alpha");
    for answer in [
        beta.get(&format!("/v1/snapshots/{id}")).await,
        beta.delete(&format!("/v1/snapshots/{id}")).await,
        beta.post("/v1/sessions", json!({"snapshot": id})).await,
        snapshot(&beta, &session, "not mine").await,
        beta.post(&format!("/v1/sessions/{session}/fork"), json!({"count": 1}))
            .await,
    ] {
        assert_error(&answer, StatusCode::NOT_FOUND, "not_found");
    }
    assert_eq!(beta.get("/v1/snapshots").await.1["snapshots"], json!([]));
    assert_eq!(alpha.get("/v1/snapshots").await.1["snapshots"][0]["id"], id);
    let (status, opened) = alpha.post("/v1/sessions", json!({"snapshot": id})).await;
    assert_eq!(
        (status, &opened["tenant"]),
        (StatusCode::CREATED, &json!("alpha"))
    );
}

#[tokio::test]
async fn the_quota_refuses_cleanly() {
    let policy = "[policy]\nsnapshot_quota_count = 1\nsnapshot_quota_bytes = 4096\n";
    let service = TestService::start(&config(4, 0, policy));
    let id = service.open(None).await;
    write(&service, &id, "big.bin", &[7u8; 5000]).await;
    let over = snapshot(&service.admin(), &id, "too big").await;
    assert_error(&over, StatusCode::TOO_MANY_REQUESTS, "snapshot_quota");
    assert!(over.1["error"]["message"]
        .as_str()
        .unwrap()
        .contains("snapshot_quota_bytes"));
    assert_eq!(kept(&service), 0, "a refused snapshot left files");

    service
        .delete(&format!("/v1/sessions/{id}/files?path=big.bin"))
        .await;
    let (status, _) = snapshot(&service.admin(), &id, "small").await;
    assert_eq!(status, StatusCode::CREATED);
    let second = snapshot(&service.admin(), &id, "second").await;
    assert_error(&second, StatusCode::TOO_MANY_REQUESTS, "snapshot_quota");
    assert!(second.1["error"]["message"]
        .as_str()
        .unwrap()
        .contains("snapshot_quota_count = 1"));
    assert_eq!(kept(&service), 1);
}

#[tokio::test]
async fn a_fork_opens_all_or_none() {
    let service = TestService::start(&config(4, 0, ""));
    let source = service.open(None).await;
    write(&service, &source, "base.txt", b"base").await;
    let (status, forked) = service
        .post(&format!("/v1/sessions/{source}/fork"), json!({"count": 2}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{forked}");
    let sessions = forked["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    for session in sessions {
        assert_eq!(
            read(&service, session["id"].as_str().unwrap(), "base.txt").await,
            b"base"
        );
    }
    assert_eq!(service.get("/v1/snapshots").await.1["snapshots"], json!([]));
    assert_eq!(kept(&service), 0);

    // 3 open of 4: two more do not fit, and none is opened.
    let full = service
        .post(&format!("/v1/sessions/{source}/fork"), json!({"count": 2}))
        .await;
    assert_error(&full, StatusCode::TOO_MANY_REQUESTS, "service_full");
    assert_eq!(service.backend.running(), 3);
    for count in [0, 17] {
        assert_error(
            &service
                .post(
                    &format!("/v1/sessions/{source}/fork"),
                    json!({"count": count}),
                )
                .await,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        );
    }
    let (_, log) = service
        .get(&format!("/v1/sessions/{source}/activity"))
        .await;
    assert_eq!(log["entries"][0]["action"], "fork");
}

#[tokio::test]
async fn snapshots_survive_a_restart_and_leftovers_do_not() {
    let config_toml = config(4, 0, "");
    let service = TestService::start(&config_toml);
    let id = service.open(None).await;
    let (_, taken) = snapshot(&service.admin(), &id, "kept").await;
    let leftover = service.dir.path().join("snapshots/.partial-abcd");
    std::fs::create_dir(&leftover).unwrap();
    let (dir, backend) = service.shut_down();

    let service = TestService::over(&config_toml, dir, backend);
    service.core.restore().await.unwrap();
    assert!(!leftover.exists());
    let snapshot_id = taken["id"].as_str().unwrap();
    let (status, again) = service.get(&format!("/v1/snapshots/{snapshot_id}")).await;
    assert_eq!((status, &again), (StatusCode::OK, &taken));
    assert_eq!(kept(&service), 1);
}

#[tokio::test]
async fn a_fork_carries_processes_only_where_asked_and_possible() {
    let gvisor = format!("[runtimes.sh-gvisor]\nimage = \"{SH_IMAGE}\"\nisolation = \"gvisor\"\n");
    let service = TestService::start(&config(8, 0, &gvisor));
    let fork = |source: &str, body: Value| {
        let path = format!("/v1/sessions/{source}/fork");
        let service = &service;
        async move { service.post(&path, body).await }
    };
    // A runc runtime: the files; asking for the processes is refused, saying why.
    let runc = service.open(None).await;
    let (status, forked) = fork(&runc, json!({"count": 1})).await;
    assert_eq!(
        (status, &forked["memory"]),
        (StatusCode::CREATED, &json!(false))
    );
    let refused = fork(&runc, json!({"count": 1, "memory": true})).await;
    assert_error(&refused, StatusCode::BAD_REQUEST, "memory_not_copied");
    assert!(
        refused.1["error"]["message"]
            .as_str()
            .unwrap()
            .contains("runc"),
        "{}",
        refused.1
    );
    // A gVisor runtime on a platform that keeps no copy of memory (the fake): left to the
    // service, the files; asked for, the platform's refusal.
    let source = service.open(Some("sh-gvisor")).await;
    let (status, forked) = fork(&source, json!({"count": 1})).await;
    assert_eq!(
        (status, &forked["memory"]),
        (StatusCode::CREATED, &json!(false))
    );
    let (status, forked) = fork(&source, json!({"count": 1, "memory": false})).await;
    assert_eq!(
        (status, &forked["memory"]),
        (StatusCode::CREATED, &json!(false))
    );
    let (status, refused) = fork(&source, json!({"count": 1, "memory": true})).await;
    assert_eq!(
        refused["error"]["code"], "unsupported",
        "{status} {refused}"
    );
    assert_eq!(
        service.backend.running(),
        5,
        "the refused forks opened nothing"
    );
}
