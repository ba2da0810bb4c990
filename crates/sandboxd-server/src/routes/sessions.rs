//! Sessions: open, list, read, close, run a command, and the activity log.

use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery, Authenticated, QueryRequest, RawBody};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::Json;
use sandboxd_api::{
    ActivityList, CreateSession, ExecRequest, ExecResult, SessionInfo, SessionList,
};
use serde::Deserialize;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

pub const CREATE_BODY_LIMIT: usize = 64 << 10;

/// Reads a create request, refusing by name any field that is not the client's to set.
fn parse_create(body: &[u8]) -> Result<CreateSession, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(CreateSession::default());
    }
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("the body is not valid JSON: {e}"))
    })?;
    let object = value.as_object().ok_or_else(|| {
        ApiError::bad_request(
            "invalid_request",
            "the body must be a JSON object such as {\"runtime\": \"python\"}",
        )
    })?;
    let forbidden: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|key| !CreateSession::FIELDS.contains(key))
        .collect();
    if !forbidden.is_empty() {
        return Err(ApiError::bad_request(
            "forbidden_field",
            format!(
                "a request may name a runtime alias, a tenant, labels and a snapshot, nothing else about the container; refused: {}. The image, limits and network are set by the operator per runtime",
                forbidden.join(", ")
            ),
        ));
    }
    let request: CreateSession = serde_json::from_value(value).map_err(|e| {
        ApiError::bad_request("invalid_request", format!("invalid create request: {e}"))
    })?;
    Ok(request)
}

#[utoipa::path(
    post,
    path = "/v1/sessions",
    tag = "sessions",
    summary = "Open a session: a new sandbox of an allowed runtime",
    description = "The body may name a runtime alias, a tenant, labels and a snapshot to start from (its files, runtime and labels, and its processes when it kept them), nothing else about the container; an empty body opens the default runtime. The first session of a runtime whose image is not on the engine waits for it to be pulled or built.",
    request_body(content = Option<CreateSession>, description = "What to open; no body opens the default runtime"),
    responses(
        (status = 201, description = "The session, running", body = SessionInfo),
        (status = 400, description = "`forbidden_field` (the body names something else about the container), `unknown_runtime` (the message lists the allowed ones), `egress_widened` (`egress` allows what the runtime's list does not), `egress_not_available`, `invalid_json` or `invalid_request`", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no snapshot the caller may open has the id in `snapshot`", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 64 KiB", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`service_full`: `max_sessions` are open", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `engine_error`: the sandbox could not be started", body = sandboxd_api::ErrorBody),
        (status = 503, description = "`image_missing`, `runtime_unavailable` or `engine_unavailable`: the runtime's image cannot be had, or the engine is down", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn create_session(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<SessionInfo>), ApiError> {
    let request = parse_create(&body)?;
    let info = state.core.open_session(&caller, request).await?;
    Ok((StatusCode::CREATED, Json(info)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Also list the most recently ended sessions.
    #[serde(default)]
    include_ended: bool,
}

impl QueryRequest for ListQuery {
    const TAKES: &'static str = "`include_ended=true|false`";
}

#[utoipa::path(
    get,
    path = "/v1/sessions",
    tag = "sessions",
    summary = "The running sessions",
    params(ListQuery),
    responses(
        (status = 200, description = "The sessions, with their live memory and process figures", body = SessionList),
        (status = 400, description = "`invalid_request`: a malformed query", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn list_sessions(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<SessionList>, ApiError> {
    Ok(Json(
        state
            .core
            .list_sessions(&caller, query.include_ended)
            .await?,
    ))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}",
    tag = "sessions",
    summary = "One session, running or ended",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The session; an ended one says when and why", body = SessionInfo),
        (status = 404, description = "`not_found`: no such session", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn get_session(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<SessionInfo>, ApiError> {
    Ok(Json(state.core.get_session(&caller, &id).await?))
}

#[utoipa::path(
    delete,
    path = "/v1/sessions/{id}",
    tag = "sessions",
    summary = "Close a session at once (no grace period); its record stays",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The ended session (closing an ended one again is no error)", body = SessionInfo),
        (status = 404, description = "`not_found`: no such session", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`engine_error`: the engine could not remove the sandbox", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn close_session(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<SessionInfo>, ApiError> {
    Ok(Json(state.core.close_session(&caller, &id).await?))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/exec",
    tag = "sessions",
    summary = "Run one command to completion",
    description = "Each command is its own process: a `cd` does not carry to the next one; chain with `&&`. A command past its timeout is killed with its children (`timed_out`); output past `policy.max_output_bytes` per stream keeps its head and its tail around a line saying how many bytes were left out between them (`stdout_truncated`, `stderr_truncated`). With `Accept: text/event-stream`, the answer is Server-Sent Events: `output` (data: an OutputChunk in base64, stdout and stderr together, as the command writes them; a reader that lags may miss some), then `result` (data: the ExecResult the JSON answer would be), last. A failure after the stream began is a `failed` event (data: an ErrorDetail); one found before the command starts is an ordinary error answer.",
    params(("id" = String, Path, description = "The session's id")),
    request_body(content = ExecRequest, description = "Exactly one of `command` (run by /bin/sh -c) or `argv`"),
    responses(
        (status = 200, description = "How the command ended, and its output; with `Accept: text/event-stream`, its output as it comes, then the same result (see the description)", content((ExecResult = "application/json"), (String = "text/event-stream"))),
        (status = 400, description = "`invalid_request`, `invalid_timeout`, `timeout_too_large` (above `policy.max_timeout_secs`) or `spawn_failed` (the program cannot be started)", body = sandboxd_api::ErrorBody),
        (status = 410, description = "`sandbox_gone`: the sandbox vanished from the engine", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over its limit", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn exec_command(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
    ApiJson(request): ApiJson<ExecRequest>,
) -> Result<axum::response::Response, ApiError> {
    if super::exec_stream::wants_events(&headers) {
        return super::exec_stream::streamed(state, caller, id, request).await;
    }
    let result: ExecResult = state.core.exec(&caller, &id, request).await?;
    Ok(axum::response::IntoResponse::into_response(Json(result)))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/activity",
    tag = "sessions",
    summary = "A session's activity log, newest first (also after it ended)",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The most recent entries: who did what, through which interface, and how it went; never a payload", body = ActivityList),
        (status = 404, description = "`not_found`: no such session", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn session_activity(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<ActivityList>, ApiError> {
    Ok(Json(state.core.activity(&caller, &id)?))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes(exec_body_limit: usize) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(
            routes!(list_sessions, create_session).layer(DefaultBodyLimit::max(CREATE_BODY_LIMIT)),
        )
        .routes(routes!(get_session, close_session))
        .routes(routes!(exec_command).layer(DefaultBodyLimit::max(exec_body_limit)))
        .routes(routes!(session_activity))
}
