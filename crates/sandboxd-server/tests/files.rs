//! A session's files through the REST face: write, read back, list, delete.

mod common;

use axum::http::{header, Method, StatusCode};
use common::*;
use serde_json::json;

#[tokio::test]
async fn a_written_file_reads_back_byte_for_byte() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let contents: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let (status, written) = service
        .admin()
        .put_bytes(
            &format!("/v1/sessions/{id}/files/content?path=data.bin"),
            &contents,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{written}");
    assert_eq!(
        written,
        json!({"path": "/workspace/data.bin", "bytes": 100_000})
    );

    let answer = service
        .admin()
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/files/content?path=data.bin"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.headers[header::CONTENT_TYPE],
        "application/octet-stream"
    );
    assert_eq!(answer.headers[header::CONTENT_LENGTH], "100000");
    assert!(answer.body == contents, "the file read back differs");

    // Writing again replaces it.
    let path = format!("/v1/sessions/{id}/files/content?path=data.bin");
    service.admin().put_bytes(&path, b"short").await;
    let answer = service
        .admin()
        .send(Method::GET, &path, None, Vec::new())
        .await;
    assert_eq!(answer.body, b"short");
}

#[tokio::test]
async fn list_shows_the_files_with_their_sizes() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let admin = service.admin();
    for (name, contents) in [("b.txt", "bee"), ("a.txt", "a"), ("dir/c.txt", "sea")] {
        let path = format!("/v1/sessions/{id}/files/content?path={name}");
        assert_eq!(
            admin.put_bytes(&path, contents.as_bytes()).await.0,
            StatusCode::OK
        );
    }
    let (status, list) = service.get(&format!("/v1/sessions/{id}/files")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["path"], "/workspace");
    assert_eq!(list["truncated"], false);
    let entries: Vec<(String, u64, String)> = list["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["size"].as_u64().unwrap(),
                e["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        vec![
            ("a.txt".to_string(), 1, "file".to_string()),
            ("b.txt".to_string(), 3, "file".to_string()),
        ]
    );
    let (status, list) = service
        .get(&format!("/v1/sessions/{id}/files?path=dir"))
        .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["entries"][0]["name"], "c.txt");
    assert_eq!(list["entries"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_deleted_file_is_gone() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    let content = format!("/v1/sessions/{id}/files/content?path=gone.txt");
    service.admin().put_bytes(&content, b"bye").await;
    let (status, deleted) = service
        .delete(&format!("/v1/sessions/{id}/files?path=gone.txt"))
        .await;
    assert_eq!(status, StatusCode::OK, "{deleted}");
    assert_eq!(deleted, json!({"path": "/workspace/gone.txt"}));
    assert_error(
        &service.get(&content).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    // Deleting what is not there is done too, as E2B's remove is.
    let (status, again) = service
        .delete(&format!("/v1/sessions/{id}/files?path=gone.txt"))
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    let (_, list) = service.get(&format!("/v1/sessions/{id}/files")).await;
    assert_eq!(list["entries"], json!([]));
}

#[tokio::test]
async fn reading_a_missing_file_is_not_found_and_logged() {
    let service = TestService::default_service();
    let id = service.open(None).await;
    assert_error(
        &service
            .get(&format!(
                "/v1/sessions/{id}/files/content?path=nothing-here"
            ))
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    let (_, log) = service.get(&format!("/v1/sessions/{id}/activity")).await;
    let newest = &log["entries"][0];
    assert_eq!(newest["action"], "read_file");
    assert_eq!(newest["target"], "/workspace/nothing-here");
    assert_eq!(newest["status"], "error");
}

#[tokio::test]
async fn an_upload_over_the_policy_is_payload_too_large() {
    let service = TestService::start(&config(4, 0, "[policy]\nmax_upload_bytes = 1024\n"));
    let id = service.open(None).await;
    let path = format!("/v1/sessions/{id}/files/content?path=big");
    let answer = service.admin().put_bytes(&path, &[7u8; 2048]).await;
    assert_error(&answer, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_error(
        &service.get(&path).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_eq!(
        service.admin().put_bytes(&path, &[7u8; 1024]).await.0,
        StatusCode::OK
    );
}
