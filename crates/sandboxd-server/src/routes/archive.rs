//! A session's directory trees as tar archives: download one, or upload one to extract, each
//! one call of the core, which does them through the sandbox's agent.

use super::files::{streamed, upload_source};
use crate::error::ApiError;
use crate::extract::{ApiQuery, Authenticated, QueryRequest};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_api::ArchiveWritten;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveQuery {
    path: Option<String>,
}

impl QueryRequest for ArchiveQuery {
    const TAKES: &'static str = "`path`, the directory";
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/archive",
    tag = "files",
    summary = "Download a directory tree as a tar, streamed",
    description = "The entries under the directory, named relative to it: regular files, directories and symlinks (as symlinks, never followed), with their modes; devices, FIFOs and sockets are left out. A tree whose files hold more than `policy.max_upload_bytes` is refused (413) before anything is sent.",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = String, Query, description = "The directory: absolute, or relative to the working directory")
    ),
    responses(
        (status = 200, description = "The tar", content_type = "application/x-tar", body = String),
        (status = 413, description = "`payload_too_large`: the files hold more than `policy.max_upload_bytes`", body = sandboxd_api::ErrorBody),
        crate::openapi::FileErrors
    )
)]
pub async fn download(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ArchiveQuery>,
) -> Result<Response, ApiError> {
    let archive = state
        .core
        .download_archive(&caller, &id, query.path)
        .await?;
    let content_type = [(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-tar"),
    )];
    Ok((content_type, streamed(archive)).into_response())
}

#[utoipa::path(
    put,
    path = "/v1/sessions/{id}/archive",
    tag = "files",
    summary = "Upload a tar and extract it under a directory",
    description = "The directory is created with its parents. Extraction is confined to it: names with `..` or a leading `/`, names through a symlink, hard links, devices and FIFOs are refused; modes are kept without setuid, setgid and sticky; everything is owned by the sandbox's user. The tree appears only once the whole tar was accepted, and a top-level name that exists already is refused (409 `busy`): a refused or broken upload leaves nothing.",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = String, Query, description = "The directory to extract under: absolute, or relative to the working directory")
    ),
    request_body(content = String, content_type = "application/x-tar", description = "A tar whose files hold at most `policy.max_upload_bytes`"),
    responses(
        (status = 200, description = "What was extracted", body = ArchiveWritten),
        (status = 413, description = "`payload_too_large`: the files hold more than `policy.max_upload_bytes`, or the tar more than 100000 entries", body = sandboxd_api::ErrorBody),
        (status = 507, description = "`no_space`: the sandbox's writable space is full", body = sandboxd_api::ErrorBody),
        crate::openapi::FileErrors
    )
)]
pub async fn upload(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ArchiveQuery>,
    body: Body,
) -> Result<Json<ArchiveWritten>, ApiError> {
    let written = state
        .core
        .upload_archive(&caller, &id, query.path, upload_source(body))
        .await?;
    Ok(Json(written))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        // Streamed both ways, as file contents are: the agent counts the bytes.
        .routes(routes!(download, upload))
}
