//! The token check in front of every API route: the core says who the bearer token belongs
//! to, and the handlers find the principal among the request's extensions.

use crate::error::ApiError;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sandboxd_core::Core;
use std::net::SocketAddr;

pub async fn require_token(State(core): State<Core>, mut request: Request, next: Next) -> Response {
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or("");
    match core.authenticate(presented, address) {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(e) => ApiError(e).into_response(),
    }
}
