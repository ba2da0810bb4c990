//! A raw TCP tunnel to a port in the sandbox over an HTTP/1.1 Upgrade, for `sandboxd forward`
//! and anything else that needs bytes rather than HTTP (a database, a debugger). The
//! connection is opened through the core before the upgrade, so a failure (a closed port, the
//! policy's connection cap) is an ordinary HTTP error; after `101` the socket carries the
//! port's bytes both ways until either side closes it. Paced and counted like the proxy: it
//! is the core's port connection, one activity entry each.

use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::routes::ports::port_param;
use crate::state::AppState;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use sandboxd_api::TUNNEL_PROTOCOL;
use std::collections::HashMap;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/tunnels/{port}",
    tag = "ports",
    summary = "A raw TCP tunnel to the port, over an HTTP Upgrade",
    description = "Send `Connection: Upgrade` and `Upgrade: sandboxd-tunnel`. The service connects to 127.0.0.1:{port} inside the sandbox through its agent and answers `101 Switching Protocols`; from then on the connection carries the port's bytes both ways, unchanged, until either side closes it. Failures come before the upgrade as usual errors (`port_closed` 502, `too_many_port_connections` 429). Each tunnel counts against `policy.max_port_connections` and shares `policy.port_bytes_per_sec`, and is one `port_connect` entry in the session's activity (port and byte count, never the bytes).",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("port" = u16, Path, description = "The TCP port in the sandbox")
    ),
    responses(
        (status = 101, description = "Switched to the tunnel"),
        (status = 400, description = "`not_an_upgrade` or `invalid_port`", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`too_many_port_connections`", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`port_closed`: nothing listens on the port", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn tunnel(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(params): Path<HashMap<String, String>>,
    mut request: Request,
) -> Result<Response, ApiError> {
    let port = port_param(&params)?;
    let asked = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case(TUNNEL_PROTOCOL));
    if !asked {
        return Err(ApiError::bad_request(
            "not_an_upgrade",
            format!("a tunnel is an HTTP/1.1 upgrade: send `Connection: Upgrade` and `Upgrade: {TUNNEL_PROTOCOL}`"),
        ));
    }
    let id = params.get("id").map_or("", String::as_str);
    let mut stream = state.core.connect_port(&caller, id, port).await?;
    let upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        if let Ok(upgraded) = upgrade.await {
            let _ = tokio::io::copy_bidirectional(&mut TokioIo::new(upgraded), &mut stream).await;
        }
    });
    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static(TUNNEL_PROTOCOL));
    Ok(response)
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(tunnel))
}
