//! A session's background processes: start, list, read one, kill all, signal, resize, and
//! write or close stdin. Following their output is in `stream`, the terminal in `terminal`.

use crate::error::ApiError;
use crate::extract::{parse_json, ApiJson, Authenticated, RawBody};
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::Json;
use sandboxd_api::{
    InputWritten, KilledProcesses, ProcessInfo, ProcessInput, ProcessList, SignalRequest,
    StartProcess, TerminalSize,
};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

pub const START_BODY_LIMIT: usize = 1 << 20;
pub const CONTROL_BODY_LIMIT: usize = 4 << 10;

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes",
    tag = "processes",
    summary = "Start a background process",
    description = "It runs in its own process group until it exits or its timeout (by default `policy.default_timeout_secs`, as for exec; at most `policy.max_timeout_secs`) kills the group; `input` is given to its stdin, which is then closed; its output is kept for streaming and its exit status after it ends. With `pty`, it runs on a terminal.",
    params(("id" = String, Path, description = "The session's id")),
    request_body(content = StartProcess, description = "Exactly one of `command` (run by /bin/sh -c) or `argv`"),
    responses(
        (status = 201, description = "The process, running", body = ProcessInfo),
        (status = 400, description = "`invalid_request`, `invalid_json`, `invalid_timeout`, `timeout_too_large` or `spawn_failed`", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 1 MiB", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn start(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<StartProcess>,
) -> Result<(StatusCode, Json<ProcessInfo>), ApiError> {
    let info = state.core.start_process(&caller, &id, request).await?;
    Ok((StatusCode::CREATED, Json(info)))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/processes",
    tag = "processes",
    summary = "A session's background processes, running and exited, oldest first",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The processes", body = ProcessList),
        crate::openapi::SessionErrors
    )
)]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<ProcessList>, ApiError> {
    Ok(Json(state.core.list_processes(&caller, &id).await?))
}

#[utoipa::path(
    delete,
    path = "/v1/sessions/{id}/processes",
    tag = "processes",
    summary = "Kill every process in the sandbox",
    description = "SIGKILLs every process in the sandbox but its agent and init: background processes, running commands, and what left their process group (e.g. with setsid), which a command's timeout cannot reach. The session stays open with its files. Repeated until nothing is left, a bounded number of times: `remaining` counts what outlived the last round.",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "How many processes were killed and how many remain", body = KilledProcesses),
        crate::openapi::SessionErrors
    )
)]
pub async fn kill_all(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<KilledProcesses>, ApiError> {
    Ok(Json(state.core.kill_all_processes(&caller, &id).await?))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/processes/{process_id}",
    tag = "processes",
    summary = "One background process, with its exit status once it ended",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    responses(
        (status = 200, description = "The process", body = ProcessInfo),
        crate::openapi::SessionErrors
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, process_id)): Path<(String, String)>,
) -> Result<Json<ProcessInfo>, ApiError> {
    Ok(Json(state.core.process(&caller, &id, &process_id).await?))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/{process_id}/signal",
    tag = "processes",
    summary = "Send a signal to a process's whole process group",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    request_body(content = SignalRequest, description = "A signal name (`TERM`, `SIGKILL`, ...) or number"),
    responses(
        (status = 200, description = "The process after the signal was sent", body = ProcessInfo),
        (status = 400, description = "`invalid_signal`, `invalid_request` or `invalid_json`", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 4 KiB", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn signal(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, process_id)): Path<(String, String)>,
    ApiJson(request): ApiJson<SignalRequest>,
) -> Result<Json<ProcessInfo>, ApiError> {
    let info = state
        .core
        .signal_process(&caller, &id, &process_id, &request.signal)
        .await?;
    Ok(Json(info))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/{process_id}/resize",
    tag = "processes",
    summary = "Resize a process's terminal",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    request_body(content = TerminalSize, description = "The new size, 1 to 1000 each way"),
    responses(
        (status = 200, description = "The process", body = ProcessInfo),
        (status = 400, description = "`invalid_request` or `invalid_json`; or the process has no terminal", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 4 KiB", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn resize(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, process_id)): Path<(String, String)>,
    ApiJson(size): ApiJson<TerminalSize>,
) -> Result<Json<ProcessInfo>, ApiError> {
    let info = state
        .core
        .resize_process(&caller, &id, &process_id, size)
        .await?;
    Ok(Json(info))
}

/// Writes the body to the process's stdin: `{"data": "...", "close"?: bool}` when it is
/// JSON, the raw bytes otherwise.
#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/{process_id}/stdin",
    tag = "processes",
    summary = "Write to a process's standard input",
    description = "A JSON body (`Content-Type: application/json`) is `{\"data\": \"...\", \"close\": false}`; any other body is written as it is. The process must have been started with `stdin` or `pty`.",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    request_body(content(
        (ProcessInput = "application/json"),
        (String = "application/octet-stream")
    )),
    responses(
        (status = 200, description = "All the bytes were written", body = InputWritten),
        (status = 400, description = "`invalid_request` or `invalid_json`; or its stdin is not open", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: over `policy.max_upload_bytes`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn write_stdin(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, process_id)): Path<(String, String)>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Json<InputWritten>, ApiError> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    let (data, close) = if is_json {
        let input: ProcessInput = parse_json(&body)?;
        (Bytes::from(input.data), input.close)
    } else {
        (body, false)
    };
    let written = state
        .core
        .write_stdin(&caller, &id, &process_id, &data, close)
        .await?;
    Ok(Json(written))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/{process_id}/stdin/close",
    tag = "processes",
    summary = "Close a process's standard input (it reads end-of-file)",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    responses(
        (status = 200, description = "Its stdin is closed", body = InputWritten),
        (status = 400, description = "Its stdin is not open", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn close_stdin(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, process_id)): Path<(String, String)>,
) -> Result<Json<InputWritten>, ApiError> {
    let closed = state
        .core
        .write_stdin(&caller, &id, &process_id, &[], true)
        .await?;
    Ok(Json(closed))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes(upload_limit: usize) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, start, kill_all).layer(DefaultBodyLimit::max(START_BODY_LIMIT)))
        .routes(routes!(get_one))
        .routes(routes!(write_stdin).layer(DefaultBodyLimit::max(upload_limit)))
        .routes(routes!(close_stdin))
        .routes(routes!(signal).layer(DefaultBodyLimit::max(CONTROL_BODY_LIMIT)))
        .routes(routes!(resize).layer(DefaultBodyLimit::max(CONTROL_BODY_LIMIT)))
}
