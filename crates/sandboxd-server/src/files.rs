//! Routes for a session's files. The sandbox's agent does every operation inside the
//! sandbox; the service never opens a sandbox path itself. Relative paths are relative to the
//! sandbox's working directory. Contents stream through in both directions and are never
//! logged; the activity log gets the path, the byte count and how it went.

use crate::activity::{agent_text, Actor, PendingEntry};
use crate::error::{parse_query, ApiError};
use crate::sessions::{rfc3339, Session};
use crate::Service;
use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::TryStreamExt;
use sandboxd_agent_proto::{self as proto, EntryKind, ProtoError, UploadError};
use sandboxd_api::{FileDeleted, FileEntry, FileKind, FileList, FileWritten};
use sandboxd_config::format_bytes;
use serde::Deserialize;
use std::io;
use std::time::Duration;
use time::OffsetDateTime;
use tokio_util::io::StreamReader;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Entries a listing returns at most; beyond, it says `truncated`.
const MAX_LIST_ENTRIES: u32 = 10_000;
/// Linux's PATH_MAX: a longer path cannot be opened anyway.
const MAX_PATH_LEN: usize = 4096;
/// What the files routes' query takes, for the error when it is malformed.
const FILE_QUERY: &str = "`path` (and `recursive=true` to delete a directory)";
/// The longest wait for one step of an operation: an answer or a chunk from the agent, or
/// the client's next chunk of an upload.
const STEP_TIMEOUT: Duration = Duration::from_secs(60);

pub fn routes(_service: &Service) -> OpenApiRouter<Service> {
    OpenApiRouter::new()
        .routes(routes!(list_files, delete_file))
        // The upload body is streamed, not collected, so axum's body limit does not apply:
        // the upload itself counts the bytes against `policy.max_upload_bytes`.
        .routes(routes!(read_file, write_file))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteQuery {
    path: Option<String>,
    #[serde(default)]
    recursive: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    List,
    Read,
    Write,
    Delete,
}

impl Action {
    /// How the activity log names it.
    fn name(self) -> &'static str {
        match self {
            Action::List => "list_files",
            Action::Read => "read_file",
            Action::Write => "write_file",
            Action::Delete => "delete_file",
        }
    }
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
        (status = 400, description = "`invalid_path` or `invalid_request`", body = sandboxd_api::ErrorBody),
        (status = 403, description = "`permission_denied`", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session, or no such file or directory", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`, or the path is of the wrong kind: `is_directory`, `not_a_directory`, `not_a_file`; `busy`", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn list_files(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
    query: Result<Query<PathQuery>, QueryRejection>,
) -> Result<Json<FileList>, ApiError> {
    let path = checked_path(
        parse_query(query, FILE_QUERY)?
            .path
            .unwrap_or_else(|| ".".into()),
    )?;
    let session = service.sessions().get_running(&id)?;
    let mut logged = PendingEntry::new(&service, &id, actor, Action::List.name(), &path);
    let result = async {
        let agent = service.backend().agent(&session.sandbox).await?;
        proto::list_dir(agent, &path, MAX_LIST_ENTRIES, STEP_TIMEOUT)
            .await
            .map_err(|e| file_error(Action::List, e))
    }
    .await;
    let listing = logged.finish(result)?;
    let mut entries: Vec<FileEntry> = listing.entries.into_iter().map(file_entry).collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Json(FileList {
        path,
        entries,
        truncated: listing.truncated,
    }))
}

fn file_entry(entry: proto::DirEntry) -> FileEntry {
    FileEntry {
        name: entry.name,
        kind: match entry.kind {
            EntryKind::File => FileKind::File,
            EntryKind::Dir => FileKind::Dir,
            EntryKind::Symlink => FileKind::Symlink,
            EntryKind::Other => FileKind::Other,
        },
        size: entry.size,
        mode: format!("{:04o}", entry.mode),
        // Any time can be set on a file; one out of the formatter's range is shown as null.
        modified: OffsetDateTime::from_unix_timestamp(entry.modified_secs)
            .and_then(|at| at.replace_nanosecond(entry.modified_nanos))
            .ok()
            .map(rfc3339),
    }
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
        (status = 400, description = "`invalid_path` or `invalid_request`", body = sandboxd_api::ErrorBody),
        (status = 403, description = "`permission_denied`", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session, or no such file or directory", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`, or the path is of the wrong kind: `is_directory`, `not_a_directory`, `not_a_file`; `busy`", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn read_file(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
    query: Result<Query<PathQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let path = checked_path(required(parse_query(query, FILE_QUERY)?.path)?)?;
    let session = service.sessions().get_running(&id)?;
    let mut logged = PendingEntry::new(&service, &id, actor, Action::Read.name(), &path);
    let download = match open_download(&service, &session, &path).await {
        Ok(download) => download,
        Err(e) => return logged.finish(Err(e)),
    };
    logged.bytes = Some(0);
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Some(size) = download.size() {
        headers.insert(header::CONTENT_LENGTH, size.into());
    }
    // The entry is recorded as soon as the last byte is in hand (before the client can see
    // the end), or when the body is dropped unfinished because the client went away.
    let chunks = futures_util::stream::try_unfold(
        (download, logged),
        |(mut download, mut logged)| async move {
            match download.next_chunk().await {
                Ok(Some(chunk)) => {
                    *logged.bytes.get_or_insert(0) += chunk.len() as u64;
                    if download.is_finished() {
                        logged.record(None);
                    }
                    Ok(Some((Bytes::from(chunk), (download, logged))))
                }
                Ok(None) => {
                    logged.record(None);
                    Ok(None)
                }
                Err(e) => {
                    // The status is sent already: breaking off the body is all that is left.
                    let message = agent_text(&format!("the file transfer broke off: {e}"));
                    logged.record(Some(message.clone()));
                    Err(io::Error::other(message))
                }
            }
        },
    );
    Ok((headers, Body::from_stream(chunks)).into_response())
}

async fn open_download(
    service: &Service,
    session: &Session,
    path: &str,
) -> Result<proto::FileDownload<sandboxd_backend::AgentStream>, ApiError> {
    let agent = service.backend().agent(&session.sandbox).await?;
    let unsized_limit = service.config().policy.max_output_bytes;
    proto::open_file(agent, path, unsized_limit, STEP_TIMEOUT)
        .await
        .map_err(|e| file_error(Action::Read, e))
}

#[utoipa::path(
    put,
    path = "/v1/sessions/{id}/files/content",
    tag = "files",
    summary = "Write a file whole (replacing it), creating missing parent directories",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("path" = String, Query, description = "The file: absolute, or relative to the working directory")
    ),
    request_body(content = String, content_type = "application/octet-stream", description = "The file's bytes, up to `policy.max_upload_bytes`"),
    responses(
        (status = 200, description = "The bytes written", body = FileWritten),
        (status = 400, description = "`invalid_path`, `invalid_request` or `upload_interrupted` (nothing was written)", body = sandboxd_api::ErrorBody),
        (status = 403, description = "`read_only` (write under the working directory or /tmp) or `permission_denied`", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: over `policy.max_upload_bytes`", body = sandboxd_api::ErrorBody),
        (status = 507, description = "`no_space`: the sandbox's writable space is full", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session, or no such file or directory", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`, or the path is of the wrong kind: `is_directory`, `not_a_directory`, `not_a_file`; `busy`", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn write_file(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
    query: Result<Query<PathQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<FileWritten>, ApiError> {
    let path = checked_path(required(parse_query(query, FILE_QUERY)?.path)?)?;
    let session = service.sessions().get_running(&id)?;
    let mut logged = PendingEntry::new(&service, &id, actor, Action::Write.name(), &path);
    let result = upload(&service, &session, &path, &headers, body).await;
    logged.bytes = result.as_ref().ok().copied();
    let bytes = logged.finish(result)?;
    Ok(Json(FileWritten { path, bytes }))
}

async fn upload(
    service: &Service,
    session: &Session,
    path: &str,
    headers: &HeaderMap,
    body: Body,
) -> Result<u64, ApiError> {
    let limit = service.config().policy.max_upload_bytes;
    let too_large = || {
        ApiError::PayloadTooLarge(format!(
            "the upload is over the service's limit of {} (policy.max_upload_bytes); send a smaller file",
            format_bytes(limit)
        ))
    };
    let declared_length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared_length.is_some_and(|length| length > limit) {
        return Err(too_large());
    }
    let agent = service.backend().agent(&session.sandbox).await?;
    let source = StreamReader::new(body.into_data_stream().map_err(io::Error::other));
    match proto::upload_file(agent, path, limit, source, STEP_TIMEOUT).await {
        Ok(bytes) => Ok(bytes),
        Err(UploadError::TooLarge { .. }) => Err(too_large()),
        Err(UploadError::Source(e)) => Err(ApiError::bad_request(
            "upload_interrupted",
            format!("the upload's body could not be read to its end ({e}); nothing was written"),
        )),
        Err(UploadError::Proto(e)) => Err(file_error(Action::Write, e)),
    }
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
        (status = 400, description = "`invalid_path` or `invalid_request`", body = sandboxd_api::ErrorBody),
        (status = 403, description = "`read_only` or `permission_denied`", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session, or no such file or directory", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`, or the path is of the wrong kind: `is_directory`, `not_a_directory`, `not_a_file`; `busy`", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn delete_file(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
    query: Result<Query<DeleteQuery>, QueryRejection>,
) -> Result<Json<FileDeleted>, ApiError> {
    let query = parse_query(query, FILE_QUERY)?;
    let path = checked_path(required(query.path)?)?;
    let session = service.sessions().get_running(&id)?;
    let mut logged = PendingEntry::new(&service, &id, actor, Action::Delete.name(), &path);
    let result = async {
        let agent = service.backend().agent(&session.sandbox).await?;
        proto::delete_path(agent, &path, query.recursive, STEP_TIMEOUT)
            .await
            .map_err(|e| file_error(Action::Delete, e))
    }
    .await;
    logged.finish(result)?;
    Ok(Json(FileDeleted { path }))
}

fn required(path: Option<String>) -> Result<String, ApiError> {
    path.ok_or_else(|| {
        invalid_path(
            "name the file with `?path=`, relative to the sandbox's working directory or absolute",
        )
    })
}

/// Refuses a path the agent could not use, before anything is sent to it.
fn checked_path(path: String) -> Result<String, ApiError> {
    if path.is_empty() {
        return Err(invalid_path("`path` is empty"));
    }
    if path.contains('\0') {
        return Err(invalid_path("`path` contains a NUL byte"));
    }
    if path.len() > MAX_PATH_LEN {
        return Err(invalid_path(format!(
            "`path` is longer than {MAX_PATH_LEN} bytes"
        )));
    }
    Ok(path)
}

fn invalid_path(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(proto::ERROR_INVALID_PATH, message)
}

/// The one place that turns a failed agent exchange into the API's error: the agent's error
/// codes become the API's, with its message cut short and a hint where one helps.
fn file_error(action: Action, error: ProtoError) -> ApiError {
    let ProtoError::Agent { code, message } = error else {
        return ApiError::agent_exchange(&error);
    };
    let message = match hint(action, &code) {
        Some(hint) => format!("{}; {hint}", agent_text(&message)),
        None => agent_text(&message),
    };
    let conflict = |code| ApiError::Conflict {
        code,
        message: message.clone(),
    };
    let forbidden = |code| ApiError::Forbidden {
        code,
        message: message.clone(),
    };
    match code.as_str() {
        proto::ERROR_NOT_FOUND => ApiError::NotFound(message),
        proto::ERROR_IS_DIRECTORY => conflict(proto::ERROR_IS_DIRECTORY),
        proto::ERROR_NOT_A_DIRECTORY => conflict(proto::ERROR_NOT_A_DIRECTORY),
        proto::ERROR_NOT_A_FILE => conflict(proto::ERROR_NOT_A_FILE),
        proto::ERROR_BUSY => conflict(proto::ERROR_BUSY),
        proto::ERROR_READ_ONLY => forbidden(proto::ERROR_READ_ONLY),
        proto::ERROR_PERMISSION_DENIED => forbidden(proto::ERROR_PERMISSION_DENIED),
        proto::ERROR_TOO_LARGE => ApiError::PayloadTooLarge(message),
        proto::ERROR_NO_SPACE => ApiError::InsufficientStorage(message),
        proto::ERROR_INVALID_PATH => ApiError::bad_request(proto::ERROR_INVALID_PATH, message),
        _ => ApiError::Agent(format!("{}: {message}", agent_text(&code))),
    }
}

fn hint(action: Action, code: &str) -> Option<&'static str> {
    Some(match (action, code) {
        (Action::Delete, proto::ERROR_IS_DIRECTORY) => {
            "pass recursive=true to delete it and everything in it"
        }
        (Action::Read, proto::ERROR_IS_DIRECTORY) => {
            "list a directory with GET /v1/sessions/{id}/files?path=..."
        }
        (Action::List, proto::ERROR_NOT_A_DIRECTORY) => {
            "read a file with GET /v1/sessions/{id}/files/content?path=..."
        }
        (Action::Write, proto::ERROR_READ_ONLY) => {
            "the sandbox's root is read-only; write under the working directory or /tmp"
        }
        (Action::Write, proto::ERROR_NO_SPACE) => {
            "the sandbox's writable space is full; delete files or write less"
        }
        _ => return None,
    })
}
