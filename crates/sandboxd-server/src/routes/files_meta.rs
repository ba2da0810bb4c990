//! A session's paths described, directories made, paths moved and directories watched (as
//! Server-Sent Events), each one call of the core.

use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery, Authenticated, JsonRequest, QueryRequest};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::Json;
use futures_util::Stream;
use sandboxd_api::{DirMade, FileInfo, MakeDir, MovePath};
use serde::Deserialize;
use std::convert::Infallible;
use std::time::Duration;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// A mkdir or move request is two paths at most.
pub const BODY_LIMIT: usize = 16 << 10;
/// SSE comments keep idle watches open through proxies.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);

impl JsonRequest for MakeDir {
    const WHAT: &'static str = "mkdir request";
    const HINT: &'static str = "; send {\"path\": \"...\", \"parents\": true}";
}

impl JsonRequest for MovePath {
    const WHAT: &'static str = "move request";
    const HINT: &'static str = "; send {\"from\": \"...\", \"to\": \"...\", \"overwrite\": false}";
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatQuery {
    path: Option<String>,
}

impl QueryRequest for StatQuery {
    const TAKES: &'static str = "`path`";
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchQuery {
    path: Option<String>,
    #[serde(default)]
    recursive: bool,
}

impl QueryRequest for WatchQuery {
    const TAKES: &'static str = "`path` and `recursive=true|false`";
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/files/stat",
    tag = "files",
    summary = "Describe a path; a symlink is described (with its target), not followed",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = String, Query, description = "The path: absolute, or relative to the working directory")
    ),
    responses(
        (status = 200, description = "What is at the path", body = FileInfo),
        crate::openapi::FileErrors
    )
)]
pub async fn stat(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<StatQuery>,
) -> Result<Json<FileInfo>, ApiError> {
    Ok(Json(state.core.stat(&caller, &id, query.path).await?))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/files/mkdir",
    tag = "files",
    summary = "Create a directory, with its missing parents unless `parents` is false",
    params(("id" = String, Path, description = "The session's id")),
    request_body = MakeDir,
    responses(
        (status = 201, description = "The directory was created", body = DirMade),
        (status = 200, description = "A directory was there already", body = DirMade),
        crate::openapi::FileErrors
    )
)]
pub async fn make_dir(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<MakeDir>,
) -> Result<(StatusCode, Json<DirMade>), ApiError> {
    let made = state
        .core
        .make_dir(&caller, &id, request.path, request.parents)
        .await?;
    let status = match made.created {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    Ok((status, Json(made)))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/files/move",
    tag = "files",
    summary = "Move (rename) a path inside the sandbox",
    description = "A rename(2) by the sandbox's agent: both paths are in the sandbox, and a symlink on the way leads where the sandbox's kernel says. An existing destination is `409 exists` unless `overwrite`.",
    params(("id" = String, Path, description = "The session's id")),
    request_body = MovePath,
    responses(
        (status = 200, description = "What is at the destination now", body = FileInfo),
        crate::openapi::FileErrors
    )
)]
pub async fn move_path(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<MovePath>,
) -> Result<Json<FileInfo>, ApiError> {
    let moved = state
        .core
        .move_path(&caller, &id, request.from, request.to, request.overwrite)
        .await?;
    Ok(Json(moved))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/files/watch",
    tag = "files",
    summary = "Follow a directory's changes as Server-Sent Events",
    description = "Events `change` (data: a FileChange: `create`, `write`, `remove`, `rename` (the old path; the new one comes as `create`), `chmod`, or `overflow` when changes were lost or the watch limit was reached), until the directory goes away or the session ends; `error` (data: an ErrorDetail) if the watch breaks off. Keepalive comments every 15 s.",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = Option<String>, Query, description = "The directory: absolute, or relative to the working directory (the default)"),
        ("recursive" = Option<bool>, Query, description = "Also watch the directories below it")
    ),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = sandboxd_api::FileChange),
        crate::openapi::FileErrors
    )
)]
pub async fn watch(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<WatchQuery>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let watch = state
        .core
        .watch(&caller, &id, query.path, query.recursive)
        .await?;
    let events = futures_util::stream::unfold(Some(watch), |watch| async move {
        let mut watch = watch?;
        let event = match watch.next().await? {
            Ok(change) => sse("change", &change),
            Err(error) => {
                let detail = crate::error::detail(&error);
                // The watch is over after an error.
                return Some((Ok(sse("error", &detail)), None));
            }
        };
        Some((Ok(event), Some(watch)))
    });
    Ok(Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(KEEPALIVE_INTERVAL)
            .text("keepalive"),
    ))
}

fn sse(name: &str, data: &impl serde::Serialize) -> SseEvent {
    SseEvent::default()
        .event(name)
        .data(serde_json::to_string(data).unwrap_or_default())
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(stat))
        .routes(routes!(watch))
        .routes(routes!(make_dir).layer(DefaultBodyLimit::max(BODY_LIMIT)))
        .routes(routes!(move_path).layer(DefaultBodyLimit::max(BODY_LIMIT)))
}
