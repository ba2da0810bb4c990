//! A session's files: list, read (streamed), write (streamed) and delete, each one call of the
//! core, which does them through the sandbox's agent.

use crate::error::ApiError;
use crate::extract::{declared_length, ApiQuery, Authenticated, QueryRequest};
use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::TryStreamExt;
use sandboxd_api::{FileDeleted, FileList, FileWritten};
use sandboxd_core::{ArchiveDownload, Download, Error};
use serde::Deserialize;
use std::future::Future;
use std::io;
use tokio::io::AsyncRead;
use tokio_util::io::StreamReader;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathQuery {
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteQuery {
    path: Option<String>,
    mode: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteQuery {
    path: Option<String>,
    #[serde(default)]
    recursive: bool,
}

/// What the files routes' query takes, for the error when it is malformed.
const FILE_QUERY: &str =
    "`path` (and `recursive=true` to delete a directory, `mode=0755` to write a file)";

impl QueryRequest for PathQuery {
    const TAKES: &'static str = FILE_QUERY;
}

impl QueryRequest for WriteQuery {
    const TAKES: &'static str = FILE_QUERY;
}

impl QueryRequest for DeleteQuery {
    const TAKES: &'static str = FILE_QUERY;
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/files",
    tag = "files",
    summary = "List a directory; a symlink is described, not followed",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = Option<String>, Query, description = "The directory: absolute, or relative to the working directory (the default)")
    ),
    responses(
        (status = 200, description = "The entries, sorted by name", body = FileList),
        crate::openapi::FileErrors
    )
)]
pub async fn list_files(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<PathQuery>,
) -> Result<Json<FileList>, ApiError> {
    Ok(Json(state.core.list_files(&caller, &id, query.path).await?))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/files/content",
    tag = "files",
    summary = "Read a file's bytes, streamed",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = String, Query, description = "The file: absolute, or relative to the working directory")
    ),
    responses(
        (status = 200, description = "The file's bytes; `Content-Length` when its size is known", content_type = "application/octet-stream", body = String),
        crate::openapi::FileErrors
    )
)]
pub async fn read_file(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<PathQuery>,
) -> Result<Response, ApiError> {
    let download = state.core.read_file(&caller, &id, query.path).await?;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Some(size) = download.size() {
        headers.insert(header::CONTENT_LENGTH, size.into());
    }
    Ok((headers, streamed(download)).into_response())
}

/// What a download route streams: the core's transfer, chunk by chunk.
pub(crate) trait Chunks: Send + 'static {
    fn next_chunk(&mut self) -> impl Future<Output = Result<Option<Vec<u8>>, Error>> + Send;
}

impl Chunks for Download {
    fn next_chunk(&mut self) -> impl Future<Output = Result<Option<Vec<u8>>, Error>> + Send {
        Download::next_chunk(self)
    }
}

impl Chunks for ArchiveDownload {
    fn next_chunk(&mut self) -> impl Future<Output = Result<Option<Vec<u8>>, Error>> + Send {
        ArchiveDownload::next_chunk(self)
    }
}

/// A transfer as a response body. A failure after the status is sent can only break the body
/// off.
pub(crate) fn streamed(transfer: impl Chunks) -> Body {
    let chunks = futures_util::stream::try_unfold(transfer, |mut transfer| async move {
        match transfer.next_chunk().await {
            Ok(Some(chunk)) => Ok(Some((Bytes::from(chunk), transfer))),
            Ok(None) => Ok(None),
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    });
    Body::from_stream(chunks)
}

/// A request body as the bytes an upload reads; streamed, not collected, so axum's body limit
/// does not apply: the core counts the bytes against `policy.max_upload_bytes`.
pub(crate) fn upload_source(body: Body) -> impl AsyncRead + Unpin + Send {
    StreamReader::new(body.into_data_stream().map_err(io::Error::other))
}

#[utoipa::path(
    put,
    path = "/v1/sessions/{id}/files/content",
    tag = "files",
    summary = "Write a file whole (replacing it), creating missing parent directories",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = String, Query, description = "The file: absolute, or relative to the working directory"),
        ("mode" = Option<String>, Query, description = "Its permission bits in octal, `0000` to `0777` (0644 without)")
    ),
    request_body(content = String, content_type = "application/octet-stream", description = "The file's bytes, up to `policy.max_upload_bytes`"),
    responses(
        (status = 200, description = "The bytes written", body = FileWritten),
        (status = 413, description = "`payload_too_large`: over `policy.max_upload_bytes`", body = sandboxd_api::ErrorBody),
        (status = 507, description = "`no_space`: the sandbox's writable space is full", body = sandboxd_api::ErrorBody),
        crate::openapi::FileErrors
    )
)]
pub async fn write_file(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<WriteQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<FileWritten>, ApiError> {
    let declared_length = declared_length(&headers);
    let written = state
        .core
        .write_file(
            &caller,
            &id,
            query.path,
            query.mode.as_deref(),
            declared_length,
            upload_source(body),
        )
        .await?;
    Ok(Json(written))
}

#[utoipa::path(
    delete,
    path = "/v1/sessions/{id}/files",
    tag = "files",
    summary = "Delete a file, or a directory with `recursive=true`",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = String, Query, description = "What to delete: absolute, or relative to the working directory"),
        ("recursive" = Option<bool>, Query, description = "Delete a directory and everything in it")
    ),
    responses(
        (status = 200, description = "The path is gone", body = FileDeleted),
        crate::openapi::FileErrors
    )
)]
pub async fn delete_file(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DeleteQuery>,
) -> Result<Json<FileDeleted>, ApiError> {
    let deleted = state
        .core
        .delete_file(&caller, &id, query.path, query.recursive)
        .await?;
    Ok(Json(deleted))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_files, delete_file))
        // The upload body is streamed, not collected: the core counts it.
        .routes(routes!(read_file, write_file))
}
