//! A session's egress allow-list, read and narrowed while it runs.

use crate::error::ApiError;
use crate::extract::{ApiJson, Authenticated, JsonRequest};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::Json;
use sandboxd_api::SessionNetwork;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// A list of at most 256 short rules fits well under this.
pub const BODY_LIMIT: usize = 64 << 10;

impl JsonRequest for SessionNetwork {
    const WHAT: &'static str = "network request";
    const HINT: &'static str = "; send {\"egress\": [\"pypi.org\", \"*.github.com\"]}";
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/network",
    tag = "sessions",
    summary = "A session's egress allow-list",
    description = "For a session of a runtime with `network_mode = \"egress\"`: the names (`pypi.org`, `*.github.com`, optionally `:PORT`; 80 and 443 without one) its sandbox may reach through the service's proxy. Addresses of IANA's special-purpose registries (private, loopback, link-local, CGNAT, documentation, benchmarking...), multicast, cloud metadata and host addresses are never reached, whatever the list.",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The list in force", body = SessionNetwork),
        (status = 400, description = "`egress_not_available`: the session's runtime has no egress list", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn get_network(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<SessionNetwork>, ApiError> {
    Ok(Json(state.core.session_network(&caller, &id)?))
}

#[utoipa::path(
    put,
    path = "/v1/sessions/{id}/network",
    tag = "sessions",
    summary = "Narrow a session's egress allow-list",
    description = "Replaces the session's list with one its runtime's list allows (never more: a rule it does not cover is refused with `egress_widened`, naming the rule). New connections are held to it at once; connections already open are not cut. An empty list allows nothing.",
    params(("id" = String, Path, description = "The session's id")),
    request_body(content = SessionNetwork, description = "The new list"),
    responses(
        (status = 200, description = "The list now in force", body = SessionNetwork),
        (status = 400, description = "`egress_widened` (a rule the runtime's list does not allow), `egress_not_available`, `invalid_json` (e.g. a rule that is not a host name)", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn set_network(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<SessionNetwork>,
) -> Result<Json<SessionNetwork>, ApiError> {
    Ok(Json(state.core.set_session_network(&caller, &id, request)?))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_network, set_network).layer(DefaultBodyLimit::max(BODY_LIMIT)))
}
