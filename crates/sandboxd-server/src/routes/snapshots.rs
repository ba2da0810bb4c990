//! Snapshots of sessions, and forks.

use crate::error::ApiError;
use crate::extract::{ApiJson, Authenticated, JsonRequest};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::Json;
use sandboxd_api::{ForkRequest, ForkResult, SnapshotInfo, SnapshotList, SnapshotRequest};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// Small JSON bodies: a name, a count.
pub const BODY_LIMIT: usize = 4 << 10;

impl JsonRequest for SnapshotRequest {
    const WHAT: &'static str = "snapshot request";
    const HINT: &'static str = "; send {\"name\": \"...\"}";
}

impl JsonRequest for ForkRequest {
    const WHAT: &'static str = "fork request";
    const HINT: &'static str = "; send {\"count\": N}";
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/snapshots",
    tag = "snapshots",
    summary = "Save a session's files, runtime and labels as a snapshot",
    description = "Keeps every file of the sandbox's writable places (/workspace, /tmp, /dev/shm) with its mode, and symlinks as symlinks, as archives the sandbox's agent makes; processes are not kept (a paused session keeps them). The snapshot belongs to the session's tenant and counts against its quota (`policy.snapshot_quota_count`, `policy.snapshot_quota_bytes`); one that does not fit is refused and leaves nothing. Open a session from it with `POST /v1/sessions` `{\"snapshot\": ID}`. A paused session is resumed first.",
    params(("id" = String, Path, description = "The session's id")),
    request_body(content = SnapshotRequest, description = "Its name"),
    responses(
        (status = 201, description = "The snapshot", body = SnapshotInfo),
        (status = 400, description = "`invalid_request`: no name, or one that is too long", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`snapshot_quota`: the tenant keeps as many snapshots as it may, or this one would pass its bytes", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn create(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<SnapshotRequest>,
) -> Result<(StatusCode, Json<SnapshotInfo>), ApiError> {
    let snapshot = state.core.create_snapshot(&caller, &id, request).await?;
    Ok((StatusCode::CREATED, Json(snapshot)))
}

#[utoipa::path(
    get,
    path = "/v1/snapshots",
    tag = "snapshots",
    summary = "The snapshots the caller may see: a tenant's own, or all for the administrator",
    responses((status = 200, description = "Oldest first", body = SnapshotList))
)]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<SnapshotList>, ApiError> {
    Ok(Json(state.core.list_snapshots(&caller)?))
}

#[utoipa::path(
    get,
    path = "/v1/snapshots/{snapshot_id}",
    tag = "snapshots",
    summary = "One snapshot",
    params(("snapshot_id" = String, Path, description = "The snapshot's id")),
    responses(
        (status = 200, description = "The snapshot", body = SnapshotInfo),
        (status = 404, description = "`not_found`: no such snapshot (or not the caller's)", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(snapshot_id): Path<String>,
) -> Result<Json<SnapshotInfo>, ApiError> {
    Ok(Json(state.core.get_snapshot(&caller, &snapshot_id)?))
}

#[utoipa::path(
    delete,
    path = "/v1/snapshots/{snapshot_id}",
    tag = "snapshots",
    summary = "Delete a snapshot and its files",
    params(("snapshot_id" = String, Path, description = "The snapshot's id")),
    responses(
        (status = 200, description = "The snapshot that was deleted", body = SnapshotInfo),
        (status = 404, description = "`not_found`: no such snapshot (or not the caller's)", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(snapshot_id): Path<String>,
) -> Result<Json<SnapshotInfo>, ApiError> {
    Ok(Json(
        state.core.delete_snapshot(&caller, &snapshot_id).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/fork",
    tag = "snapshots",
    summary = "Fork a session: open `count` independent sessions with its files",
    description = "Opens `count` sessions (1 to 16) from the session, which stays as it is. All open, or none: it is bounded by `max_sessions` and the tenant's quota. On a gVisor runtime without a network (Docker backend) each carries the session's running processes and memory (`memory` true in the answer); otherwise a snapshot of its files is taken (it must fit the snapshot quota), the sessions are opened from it and it is deleted, and processes do not carry over. `memory`: true requires the processes (400 `memory_not_copied` saying why where they cannot be carried), false copies the files only.",
    params(("id" = String, Path, description = "The session's id")),
    request_body(content = ForkRequest, description = "How many sessions to open"),
    responses(
        (status = 201, description = "The sessions opened", body = ForkResult),
        (status = 400, description = "`invalid_request`: a count out of range", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`service_full`, `tenant_quota` or `snapshot_quota`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn fork(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<ForkRequest>,
) -> Result<(StatusCode, Json<ForkResult>), ApiError> {
    let forked = state.core.fork_session(&caller, &id, request).await?;
    Ok((StatusCode::CREATED, Json(forked)))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create).layer(DefaultBodyLimit::max(BODY_LIMIT)))
        .routes(routes!(list))
        .routes(routes!(get_one, delete))
        .routes(routes!(fork).layer(DefaultBodyLimit::max(BODY_LIMIT)))
}
