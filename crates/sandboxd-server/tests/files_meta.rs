//! Paths described, directories made, paths moved and directories watched through the REST
//! face, over the fake agent; the real agent's behaviour is tested in the sandboxd crate.

mod common;

use axum::http::{header, StatusCode};
use common::*;
use serde_json::json;

#[tokio::test]
async fn stat_describes_files_and_directories_and_is_logged() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let admin = service.admin();
    let content = format!("/v1/sessions/{id}/files/content?path=dir/a.txt");
    assert_eq!(admin.put_bytes(&content, b"abc").await.0, StatusCode::OK);
    let (status, file) = service
        .get(&format!("/v1/sessions/{id}/files/stat?path=dir/a.txt"))
        .await;
    assert_eq!(status, StatusCode::OK, "{file}");
    assert_eq!(
        (&file["path"], &file["name"], &file["type"], &file["size"]),
        (
            &json!("/workspace/dir/a.txt"),
            &json!("a.txt"),
            &json!("file"),
            &json!(3)
        )
    );
    assert!(file.get("symlink_target").is_none(), "{file}");
    let (_, dir) = service
        .get(&format!("/v1/sessions/{id}/files/stat?path=dir"))
        .await;
    assert_eq!(dir["type"], "dir");
    assert_error(
        &service
            .get(&format!("/v1/sessions/{id}/files/stat?path=nope"))
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &service.get(&format!("/v1/sessions/{id}/files/stat")).await,
        StatusCode::BAD_REQUEST,
        "invalid_path",
    );
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let newest = &log["entries"][0];
    assert_eq!(
        (&newest["action"], &newest["target"]),
        (&json!("file_stat"), &json!("/workspace/nope"))
    );
    assert_eq!(newest["status"], "error");
}

#[tokio::test]
async fn mkdir_answers_201_when_made_200_when_there_409_over_a_file() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let admin = service.admin();
    let mkdir = format!("/v1/sessions/{id}/files/mkdir");
    let (status, made) = service.post(&mkdir, json!({"path": "new"})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made, json!({"path": "/workspace/new", "created": true}));
    admin
        .put_bytes(&format!("/v1/sessions/{id}/files/content?path=old/f"), b"x")
        .await;
    let (status, made) = service
        .post(&mkdir, json!({"path": "old", "parents": false}))
        .await;
    assert_eq!(status, StatusCode::OK, "{made}");
    assert_eq!(made["created"], false);
    assert_error(
        &service.post(&mkdir, json!({"path": "old/f"})).await,
        StatusCode::CONFLICT,
        "not_a_directory",
    );
    assert_error(
        &service
            .post(&mkdir, json!({"path": "x", "mode": "0777"}))
            .await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let actions: Vec<_> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["target"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        actions.contains(&("file_mkdir".into(), "/workspace/old/f".into())),
        "{actions:?}"
    );
}

#[tokio::test]
async fn move_refuses_an_existing_destination_without_overwrite() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let admin = service.admin();
    for (name, contents) in [("a", "aaa"), ("b", "b")] {
        let path = format!("/v1/sessions/{id}/files/content?path={name}");
        admin.put_bytes(&path, contents.as_bytes()).await;
    }
    let route = format!("/v1/sessions/{id}/files/move");
    assert_error(
        &service.post(&route, json!({"from": "a", "to": "b"})).await,
        StatusCode::CONFLICT,
        "exists",
    );
    let (status, moved) = service
        .post(&route, json!({"from": "a", "to": "b", "overwrite": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(
        (&moved["path"], &moved["size"]),
        (&json!("/workspace/b"), &json!(3))
    );
    assert_error(
        &service.post(&route, json!({"from": "a", "to": "c"})).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    assert_eq!(log["entries"][0]["action"], "file_move");
    assert_eq!(log["entries"][0]["target"], "/workspace/a -> /workspace/c");
}

#[tokio::test]
async fn watch_is_an_event_stream_and_a_missing_directory_is_not_found() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let (status, headers) = service
        .admin()
        .get_head(&format!(
            "/v1/sessions/{id}/files/watch?path=.&recursive=true"
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "text/event-stream");
    assert_error(
        &service
            .get(&format!("/v1/sessions/{id}/files/watch?path=nowhere"))
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &service
            .get(&format!("/v1/sessions/{id}/files/watch?path=.&depth=2"))
            .await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
}

#[tokio::test]
async fn a_sessions_watches_are_bounded_whichever_face_opened_them() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let caller = |interface| sandboxd_core::Caller::new(sandboxd_core::Principal::Admin, interface);
    let mut held = Vec::new();
    let per_session = sandboxd_api::DEFAULT_MAX_WATCHES_PER_SESSION as usize;
    for i in 0..per_session {
        let interface = if i % 2 == 0 {
            sandboxd_core::Interface::Api
        } else {
            sandboxd_core::Interface::Mcp
        };
        let watch = service
            .core
            .watch(&caller(interface), &id, Some(".".into()), true)
            .await
            .expect("a watch within the session's share");
        held.push(watch);
    }
    // One more through the REST face is refused before the agent is asked, naming the limit.
    assert_error(
        &service
            .get(&format!("/v1/sessions/{id}/files/watch?path=."))
            .await,
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_watches",
    );
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let newest = &log["entries"][0];
    assert_eq!(newest["action"], "file_watch");
    assert!(
        newest["error"]
            .as_str()
            .unwrap()
            .starts_with("too_many_watches"),
        "{newest}"
    );
    // A watch that ends gives its place back.
    held.pop();
    service
        .core
        .watch(&caller(sandboxd_core::Interface::Api), &id, None, false)
        .await
        .expect("the place a dropped watch gave back");
}
