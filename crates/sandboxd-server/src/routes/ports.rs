//! A session's ports: the listening ones, the reverse proxy to one through the sandbox's agent
//! (`/v1/sessions/{id}/ports/{port}/...`), and share links to them (made and revoked here,
//! followed in [`crate::routes::share_path`]), each one call of the core.

use crate::error::ApiError;
use crate::extract::{parse_json, Authenticated, JsonRequest, RawBody};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use sandboxd_api::{PortList, ShareInfo, ShareList, ShareRequest};
use sandboxd_core::Error;
use std::collections::HashMap;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// A share request is one number.
pub const SHARE_BODY_LIMIT: usize = 1 << 10;

impl JsonRequest for ShareRequest {
    const WHAT: &'static str = "share request";
    const HINT: &'static str = "; send {} or {\"ttl_secs\": 600}";
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/ports",
    tag = "ports",
    summary = "List the TCP ports listening in the sandbox, with the processes holding them",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The ports, by number", body = PortList),
        crate::openapi::SessionErrors
    )
)]
pub async fn list_ports(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<PortList>, ApiError> {
    Ok(Json(state.core.list_ports(&caller, &id).await?))
}

/// `/v1/sessions/{id}/ports/{port}/{*path}` (and `.../{port}/`): the request, forwarded.
pub async fn proxy(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(params): Path<HashMap<String, String>>,
    request: Request,
) -> Result<Response, ApiError> {
    let id = params.get("id").cloned().unwrap_or_default();
    let port = port_param(&params)?;
    let path = params.get("path").map_or("", String::as_str);
    let stream = state.core.connect_port(&caller, &id, port).await?;
    crate::proxy::forward(stream, port, path, request).await
}

/// A sandbox's own port reached through the E2B face, which has authenticated the request.
pub async fn e2b_port(
    State(state): State<AppState>,
    axum::Extension(target): axum::Extension<sandboxd_e2b::PortRequest>,
    request: Request,
) -> Result<Response, ApiError> {
    let path = request.uri().path().trim_start_matches('/').to_string();
    let stream = state
        .core
        .connect_port(&target.caller, &target.session_id, target.port)
        .await?;
    crate::proxy::forward(stream, target.port, &path, request).await
}

/// `/v1/sessions/{id}/ports/{port}`: pages resolve relative links against a directory, so
/// the port's root is `.../{port}/`.
pub async fn to_root(Path((id, port)): Path<(String, String)>) -> Response {
    // Only an id of a session's form goes into the Location header (which may not hold control
    // characters); no session has another.
    if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return ApiError(Error::NotFound("no such session".into())).into_response();
    }
    match parse_port(&port) {
        Ok(port) => {
            Redirect::permanent(&format!("/v1/sessions/{id}/ports/{port}/")).into_response()
        }
        Err(e) => e.into_response(),
    }
}

pub fn port_param(params: &HashMap<String, String>) -> Result<u16, ApiError> {
    parse_port(params.get("port").map_or("", String::as_str))
}

fn parse_port(port: &str) -> Result<u16, ApiError> {
    port.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(|| {
        ApiError(Error::bad_request(
            "invalid_port",
            "the port is a number from 1 to 65535",
        ))
    })
}

/// The method filter of [`PROXIED_METHODS`](crate::proxy_doc::PROXIED_METHODS).
pub fn proxied_methods() -> axum::routing::MethodFilter {
    use axum::routing::MethodFilter;
    MethodFilter::GET
        .or(MethodFilter::PUT)
        .or(MethodFilter::POST)
        .or(MethodFilter::DELETE)
        .or(MethodFilter::PATCH)
        .or(MethodFilter::OPTIONS)
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/ports/{port}/share",
    tag = "ports",
    summary = "Make a link that reaches the port without the token, until it expires or is revoked",
    description = "The answer's `path` (`/p/{capability}/`) is the link, shown this once: the service keeps only its hash. It reaches that port of that session only, and stops at once when revoked, expired or the session ends. The page is served in a CSP sandbox (an opaque origin: it cannot reach the service's own storage), with `Referrer-Policy: no-referrer`, without the port's `Set-Cookie` and without the browser's `Cookie`; pages that link to absolute paths (`/static/...`) or need cookies do not work through a path link.",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("port" = u16, Path, description = "The TCP port in the sandbox")
    ),
    request_body(content = Option<ShareRequest>, description = "Optional: `ttl_secs` (default and at most 3600)"),
    responses(
        (status = 201, description = "The link", body = ShareInfo),
        (status = 400, description = "`invalid_request`", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`too_many_shares`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn share(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, port)): Path<(String, u16)>,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<ShareInfo>), ApiError> {
    let request: ShareRequest = match body.is_empty() {
        true => ShareRequest::default(),
        false => parse_json(&body)?,
    };
    let info = state
        .core
        .share_port(&caller, &id, port, request.ttl_secs)
        .await?;
    Ok((StatusCode::CREATED, Json(info)))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/shares",
    tag = "ports",
    summary = "List the session's share links that still work (without their capability)",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The links, oldest first", body = ShareList),
        crate::openapi::SessionErrors
    )
)]
pub async fn list_shares(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<ShareList>, ApiError> {
    Ok(Json(state.core.list_shares(&caller, &id)?))
}

#[utoipa::path(
    delete,
    path = "/v1/sessions/{id}/shares/{share_id}",
    tag = "ports",
    summary = "Revoke a share link: it stops at once",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("share_id" = String, Path, description = "The link's id (not its capability)")
    ),
    responses(
        (status = 200, description = "The link, revoked", body = ShareInfo),
        crate::openapi::SessionErrors
    )
)]
pub async fn revoke_share(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, share_id)): Path<(String, String)>,
) -> Result<Json<ShareInfo>, ApiError> {
    Ok(Json(state.core.revoke_share(&caller, &id, &share_id)?))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_ports))
        .routes(routes!(share).layer(DefaultBodyLimit::max(SHARE_BODY_LIMIT)))
        .routes(routes!(list_shares))
        .routes(routes!(revoke_share))
}
