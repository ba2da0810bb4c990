//! The service's own routes: the runtimes a caller may open (and building one), the policy,
//! the configuration, the engine report and the figures.

use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::metrics;
use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use sandboxd_api::{RuntimeList, Stats};
use std::convert::Infallible;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[utoipa::path(
    get,
    path = "/v1/runtimes",
    tag = "service",
    summary = "The runtime allowlist in force, with each runtime's limits and image status",
    responses((status = 200, description = "The runtimes and the default one", body = RuntimeList))
)]
pub async fn list_runtimes(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Json<RuntimeList> {
    Json(state.core.runtimes(&caller).await)
}

/// `POST /v1/runtimes/{name}/build`: makes the runtime's image available now, as its first
/// session would, and follows it as newline-delimited JSON: one [`RuntimeBuildEvent`] per
/// change, the last one `ready` or `failed`. The build goes on when the client leaves.
#[utoipa::path(
    post,
    path = "/v1/runtimes/{name}/build",
    tag = "service",
    summary = "Make a runtime's image available now (pulled, or built from its recipe) and follow it",
    description = "Administrator only. Answers newline-delimited JSON: one RuntimeBuildEvent per change, the last one with the state `ready` or `failed`. The build goes on when the client leaves.",
    params(("name" = String, Path, description = "The runtime's name on the allowlist")),
    responses(
        (status = 200, description = "The build's changes, one JSON object per line", content_type = "application/x-ndjson", body = sandboxd_api::RuntimeBuildEvent),
        (status = 403, description = "`admin_only`: a tenant token cannot build runtimes", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such runtime on the allowlist", body = sandboxd_api::ErrorBody),
        (status = 503, description = "`engine_unavailable`: the engine is down", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn build_runtime(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let events = state.core.build_runtime(&caller, &name)?.map(|event| {
        let mut line = serde_json::to_vec(&event).expect("an event serializes");
        line.push(b'\n');
        Ok::<_, Infallible>(Bytes::from(line))
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(events),
    )
        .into_response())
}

#[utoipa::path(
    get,
    path = "/v1/policy",
    tag = "service",
    summary = "The limits nothing can raise",
    responses((status = 200, description = "The policy in force", body = sandboxd_api::Policy))
)]
pub async fn policy(State(state): State<AppState>) -> Json<sandboxd_api::Policy> {
    Json(state.core.config().policy.clone())
}

#[utoipa::path(
    get,
    path = "/v1/config",
    tag = "service",
    summary = "The configuration in force, token redacted",
    responses((status = 200, description = "The configuration", body = sandboxd_api::ConfigView))
)]
pub async fn config_in_force(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<sandboxd_api::ConfigView>, ApiError> {
    Ok(Json(state.core.config_view(&caller)?))
}

#[utoipa::path(
    get,
    path = "/v1/engine",
    tag = "service",
    summary = "The container engine's versions and security settings, checked at start",
    description = "For Docker: `engine_version`, `api_version`, `negotiated_api_version`, `operating_system`, `kernel_version`, `runc_version`, `runc_commit`, `default_runtime`, `runtimes`, `cgroup_version`, `cgroup_driver`, `user_namespaces`, `seccomp_profile` (null when off), `apparmor`, `selinux`, `rootless`, `runc_checks` (`cve`, `summary`, `fixed_in`, `status`: `at_or_after_fix`, `older_than_fix` or `unknown`; distributions backport fixes without changing the version) and `findings` (`level`: `warning` or `info`, `message`). Administrator only.",
    responses(
        (status = 200, description = "The engine report", body = Object),
        (status = 403, description = "`admin_only`: a tenant token cannot read it", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: the backend reported nothing about its engine", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn engine_report(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<serde_json::Value>, ApiError> {
    Ok(Json(state.core.engine_report(&caller)?))
}

#[utoipa::path(
    get,
    path = "/v1/stats",
    tag = "service",
    summary = "Sessions, memory and processes across live sandboxes",
    responses((status = 200, description = "The figures now", body = Stats))
)]
pub async fn stats(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Json<Stats> {
    Json(state.core.stats(&caller).await)
}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "service",
    summary = "The stats plus request counts and latency histograms per route, for Prometheus",
    responses((status = 200, description = "OpenMetrics text format 1.0.0", content_type = "application/openmetrics-text", body = String))
)]
pub async fn prometheus(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Response, ApiError> {
    caller.principal.require_admin("the service metrics")?;
    let stats = state.core.stats(&caller).await;
    Ok((
        [(header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        state.metrics.render(&stats),
    )
        .into_response())
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_runtimes))
        .routes(routes!(build_runtime))
        .routes(routes!(policy))
        .routes(routes!(config_in_force))
        .routes(routes!(engine_report))
        .routes(routes!(stats))
        .routes(routes!(prometheus))
}
