//! Code contexts and running code in them. A run answers with Server-Sent Events as the code
//! produces them: `stdout`, `stderr` (data `{"text": ...}`), `result` (a CodeResult: a MIME
//! bundle), `error` (a CodeError: name, value, traceback), and last `end` (a CodeEnd: outcome,
//! restarted, truncated). A failure after the stream began arrives as a `failed` event with an
//! ErrorDetail, and ends the stream.

use crate::error::ApiError;
use crate::extract::{ApiJson, Authenticated};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::Json;
use futures_util::Stream;
use sandboxd_api::{CodeEvent, ContextInfo, ContextList, ContextRequest, RunCode};
use sandboxd_core::code_run::CodeRun;
use std::convert::Infallible;
use std::time::Duration;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// The most a run's body may hold: the code (at most 512 KiB) and its options.
pub const BODY_LIMIT: usize = 1 << 20;
/// SSE comments keep a long run's stream open through proxies.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);
const RUN_EVENTS: &str = "Server-Sent Events as the code produces them: `stdout` and `stderr` (data: `{\"text\": ...}`), `result` (data: a CodeResult, a MIME bundle such as `image/png` in base64, `text/html`, `text/plain`), `error` (data: a CodeError: name, value, traceback), then `end` (data: a CodeEnd: `outcome` ok, error, timed_out or kernel_died; `restarted` when the kernel was restarted and the context's state is gone; `truncated` when output over policy.max_output_bytes was left out). A failure after the stream began is a `failed` event whose data is an ErrorDetail (with `code`), and ends it.";

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/contexts",
    tag = "contexts",
    summary = "Create a code context: a kernel of its own, started on its first run",
    description = "Variables, imports and open files persist between runs in a context; two contexts share nothing but the sandbox's files. `language` must be one the session's runtime has a kernel for (`kernels` in GET /v1/runtimes); a runtime with none answers `409 no_kernel`, naming the recipe `python-interpreter`.",
    params(("id" = String, Path, description = "The session's id")),
    request_body = ContextRequest,
    responses(
        (status = 201, description = "The context", body = ContextInfo),
        (status = 400, description = "`invalid_json` or `invalid_request`: the body is not what the route takes", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`no_kernel`: the runtime has no kernel for the language", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`too_many_contexts`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn create(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<ContextRequest>,
) -> Result<(StatusCode, Json<ContextInfo>), ApiError> {
    let info = state.core.create_context(&caller, &id, request).await?;
    Ok((StatusCode::CREATED, Json(info)))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/contexts",
    tag = "contexts",
    summary = "List a session's code contexts",
    description = "Those created, and the default context of each language that has run code (its id is the language's name).",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The contexts", body = ContextList),
        crate::openapi::SessionErrors
    )
)]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<ContextList>, ApiError> {
    Ok(Json(state.core.list_contexts(&caller, &id)?))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/contexts/{context}/restart",
    tag = "contexts",
    summary = "Restart a context's kernel: its state is gone",
    params(("id" = String, Path, description = "The session's id"), ("context" = String, Path, description = "The context's id")),
    responses(
        (status = 200, description = "The context", body = ContextInfo),
        crate::openapi::SessionErrors
    )
)]
pub async fn restart(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, context)): Path<(String, String)>,
) -> Result<Json<ContextInfo>, ApiError> {
    Ok(Json(
        state.core.restart_context(&caller, &id, &context).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/v1/sessions/{id}/contexts/{context}",
    tag = "contexts",
    summary = "Delete a context and stop its kernel",
    params(("id" = String, Path, description = "The session's id"), ("context" = String, Path, description = "The context's id")),
    responses(
        (status = 204, description = "Deleted"),
        crate::openapi::SessionErrors
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, context)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.core.delete_context(&caller, &id, &context).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/contexts/{context}/run",
    tag = "contexts",
    summary = "Run code in a context, streamed as Server-Sent Events",
    description = RUN_EVENTS,
    params(("id" = String, Path, description = "The session's id"), ("context" = String, Path, description = "The context's id")),
    request_body(content = RunCode, description = "`code`; `context` and `language` are ignored here"),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "`invalid_json` or `invalid_request`: the body is not what the route takes", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`no_kernel` or `kernel_unavailable` (the kernel did not start)", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn run(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, context)): Path<(String, String)>,
    ApiJson(request): ApiJson<RunCode>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let run = state
        .core
        .run_code(&caller, &id, Some(&context), request)
        .await?;
    Ok(events(run))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/code",
    tag = "contexts",
    summary = "Run code in a context (the language's default one unless `context` names another), streamed as Server-Sent Events",
    description = RUN_EVENTS,
    params(("id" = String, Path, description = "The session's id")),
    request_body = RunCode,
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "`invalid_json` or `invalid_request`: the body is not what the route takes", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`no_kernel` or `kernel_unavailable` (the kernel did not start)", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn code(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<RunCode>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let run = state.core.run_code(&caller, &id, None, request).await?;
    Ok(events(run))
}

impl crate::extract::JsonRequest for ContextRequest {
    const WHAT: &'static str = "context request";
    const HINT: &'static str = "; send {\"language\": \"python\"} (or {})";
}

impl crate::extract::JsonRequest for RunCode {
    const WHAT: &'static str = "code request";
    const HINT: &'static str = "; send {\"code\": \"...\"}";
}

fn events(run: CodeRun) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let events = futures_util::stream::unfold(Some(run), |run| async move {
        let mut run = run?;
        let event = match run.next().await? {
            Ok(event) => event_of(&event),
            Err(error) => {
                let detail = crate::error::detail(&error);
                // Nothing follows a failure.
                return Some((Ok(sse("failed", &detail)), None));
            }
        };
        Some((Ok(event), Some(run)))
    });
    Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(KEEPALIVE_INTERVAL)
            .text("keepalive"),
    )
}

fn event_of(event: &CodeEvent) -> SseEvent {
    let name = match event {
        CodeEvent::Stdout { .. } => "stdout",
        CodeEvent::Stderr { .. } => "stderr",
        CodeEvent::Result(_) => "result",
        CodeEvent::Error(_) => "error",
        CodeEvent::End(_) => "end",
    };
    sse(name, event)
}

fn sse(name: &str, data: &impl serde::Serialize) -> SseEvent {
    SseEvent::default()
        .event(name)
        .data(serde_json::to_string(data).unwrap_or_default())
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list).layer(DefaultBodyLimit::max(BODY_LIMIT)))
        .routes(routes!(restart))
        .routes(routes!(delete))
        .routes(routes!(run).layer(DefaultBodyLimit::max(BODY_LIMIT)))
        .routes(routes!(code).layer(DefaultBodyLimit::max(BODY_LIMIT)))
}
