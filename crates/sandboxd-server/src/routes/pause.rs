//! Pausing and resuming a session.

use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use sandboxd_api::SessionInfo;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/pause",
    tag = "sessions",
    summary = "Pause a session: freeze every process of its sandbox",
    description = "A paused session uses no CPU and keeps its memory, processes and files; its state is `paused`. Any operation that reaches the sandbox (exec, files, processes, the terminal) resumes it first, which its activity log records. While paused, the idle limit does not apply; `policy.paused_timeout_secs` from the pause and `policy.max_lifetime_secs` from the start close it. Pausing a paused session is no error. A command in flight is frozen with the rest.",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The session, paused", body = SessionInfo),
        (status = 410, description = "`sandbox_gone`: the sandbox vanished from the engine", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn pause(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<SessionInfo>, ApiError> {
    Ok(Json(state.core.pause_session(&caller, &id).await?))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/resume",
    tag = "sessions",
    summary = "Resume a paused session",
    description = "Thaws every process where it stopped; answers once the sandbox's agent takes requests again. Resuming a running session is no error.",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The session, running", body = SessionInfo),
        (status = 410, description = "`sandbox_gone`: the sandbox vanished from the engine", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn resume(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<SessionInfo>, ApiError> {
    Ok(Json(state.core.resume_session(&caller, &id).await?))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(pause))
        .routes(routes!(resume))
}
