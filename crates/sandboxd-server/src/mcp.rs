//! `/mcp` in the service: the MCP tools over streamable HTTP, behind the token check, with the
//! request body bounded by the policy's upload cap (the same cap `write_file` has over stdio),
//! a cancellation for each call whose client goes away, each MCP session bound to the token's
//! principal that opened it, and, for the browser origins the
//! operator allows, the CORS answers a browser tool (the MCP Inspector) needs.

use crate::auth;
use crate::inflight::{read_body, BodyError};
use axum::body::{Body, HttpBody};
use axum::extract::{Request, State};
use axum::http::{header, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures_util::StreamExt;
use sandboxd_core::Core;
use sandboxd_mcp::{too_large_message, RequestGone};
use std::sync::Arc;
use std::time::Duration;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// Where the MCP endpoint is.
pub const MCP_PATH: &str = "/mcp";

/// How much of an oversized body is read and dropped before the refusal is sent, so a client
/// still sending it reads the answer instead of a reset connection.
const DRAIN_LIMIT: usize = 64 << 20;
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The `/mcp` routes: the token check, then the body bound, then the MCP service.
pub fn routes<S: Clone + Send + Sync + 'static>(core: &Core) -> Router<S> {
    let limit = core.config().policy.max_upload_bytes;
    let origins = &core.config().extra_allowed_origins;
    let service = sandboxd_mcp::http_service(Arc::new(CoreConnector(core.clone())));
    let router = Router::new()
        .route_service(MCP_PATH, service)
        .layer(middleware::from_fn(session_end_answer))
        .layer(middleware::from_fn_with_state(
            crate::mcp_owners::Owners::default(),
            crate::mcp_owners::bind,
        ))
        .layer(middleware::from_fn_with_state(limit, bound))
        .layer(axum::extract::DefaultBodyLimit::max(
            usize::try_from(limit).unwrap_or(usize::MAX),
        ))
        .route_layer(middleware::from_fn_with_state(
            core.clone(),
            auth::require_token,
        ));
    if origins.is_empty() {
        return router;
    }
    // Preflights carry no token: the CORS layer answers them before the token check.
    let origins: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|origin| HeaderValue::from_str(origin).ok())
        .collect();
    let mcp_header = |name| HeaderName::from_static(name);
    router.layer(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::ACCEPT,
                mcp_header("mcp-session-id"),
                mcp_header("mcp-protocol-version"),
                mcp_header("last-event-id"),
            ])
            .expose_headers([mcp_header("mcp-session-id")]),
    )
}

/// Reads the body within the upload cap and the service's body budget, refusing a larger one
/// with a JSON-RPC error naming the limit; gives the call a [`RequestGone`] that is cancelled
/// when the answer is dropped before its end (the client went away).
async fn bound(State(limit): State<u64>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return with_request_gone(request, next).await;
    }
    let declared = request.body().size_hint().exact();
    if declared.is_some_and(|size| size > limit) {
        crate::linger::drain(request.into_body(), DRAIN_LIMIT, DRAIN_TIMEOUT).await;
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            too_large_message(declared, limit),
        );
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_body(Request::from_parts(parts.clone(), body)).await {
        Ok(bytes) => bytes,
        Err(BodyError::Api(error)) if error.0.code() == "payload_too_large" => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                too_large_message(None, limit),
            )
        }
        Err(error) => {
            let response = error.into_response();
            let status = response.status();
            return refuse(
                status,
                format!("the request could not be read (HTTP {status})"),
            );
        }
    };
    with_request_gone(Request::from_parts(parts, Body::from(bytes)), next).await
}

async fn with_request_gone(mut request: Request, next: Next) -> Response {
    let (gone, guard) = RequestGone::new();
    request.extensions_mut().insert(gone);
    let (parts, body) = next.run(request).await.into_parts();
    // The guard goes with the body: dropped when the answer is sent or abandoned.
    let body = body.into_data_stream().map(move |chunk| {
        let _ = &guard;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// A JSON-RPC error for a request the endpoint does not take; its id is unknown (the body was
/// not read), and clients match it to the request they sent on this POST.
/// rmcp answers a session's end (`DELETE /mcp`) 202 Accepted, though the session is gone by
/// then; clients take 200 or 204 as ended (the official Python SDK logs "Session termination
/// failed: 202" otherwise), so it is answered 204 No Content.
async fn session_end_answer(request: Request, next: Next) -> Response {
    let ending = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if ending && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

fn refuse(status: StatusCode, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": message},
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The `/mcp` tools act in process, as the principal the request's token belongs to.
/// The MCP tools' way into the core: each request acts for the principal its token named.
struct CoreConnector(Core);

impl sandboxd_mcp::Connector for CoreConnector {
    fn connect(
        &self,
        request: Option<&axum::http::request::Parts>,
    ) -> Result<Box<dyn sandboxd_api::Sandboxes>, String> {
        let principal = request
            .and_then(|parts| parts.extensions.get::<sandboxd_core::Principal>())
            .cloned()
            .ok_or_else(|| {
                "unauthorized: the MCP request carried no accepted bearer token; send `Authorization: Bearer <token>`".to_string()
            })?;
        let caller = sandboxd_core::Caller::new(principal, sandboxd_core::Interface::Mcp);
        Ok(Box::new(self.0.acting_for(caller)))
    }
}
