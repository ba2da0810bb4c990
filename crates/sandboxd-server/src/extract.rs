//! Extractors whose rejections are the API's own JSON errors, so handlers never parse by hand:
//! the caller, a JSON body, a query string, a raw body and a WebSocket upgrade.

use crate::error::ApiError;
use crate::inflight::{read_body, BodyError};
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use sandboxd_api::CLIENT_HEADER;
use sandboxd_core::{Caller, Error, Interface, Principal};
use serde::de::DeserializeOwned;

/// Who calls: the principal the token check found, and the interface the client names.
pub struct Authenticated(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for Authenticated {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let principal = parts
            .extensions
            .get::<Principal>()
            .cloned()
            .ok_or(ApiError(Error::Unauthorized))?;
        let interface = parts
            .headers
            .get(CLIENT_HEADER)
            .and_then(|v| v.to_str().ok())
            .map_or(Interface::Api, Interface::from_client_name);
        Ok(Authenticated(Caller::new(principal, interface)))
    }
}

/// A WebSocket upgrade; a plain request is refused with `not_a_websocket`, saying how to
/// connect.
pub struct Upgrade(pub axum::extract::WebSocketUpgrade);

impl<S: Send + Sync> FromRequestParts<S> for Upgrade {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::WebSocketUpgrade::from_request_parts(parts, state)
            .await
            .map(Upgrade)
            .map_err(|rejection| {
                ApiError::bad_request(
                    "not_a_websocket",
                    format!("{}; connect with a WebSocket client", rejection.body_text()),
                )
            })
    }
}

/// A request body read whole, within the route's limit, the budget for bodies in flight and
/// the read timeout (see `inflight`).
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = BodyError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, BodyError> {
        read_body(request).await.map(RawBody)
    }
}

/// What a JSON body is called in an error, and how to send it right.
pub trait JsonRequest: DeserializeOwned {
    const WHAT: &'static str;
    const HINT: &'static str = "";
}

impl JsonRequest for sandboxd_api::ExecRequest {
    const WHAT: &'static str = "exec request";
    const HINT: &'static str = "; send {\"command\": \"...\"} or {\"argv\": [...]}";
}
impl JsonRequest for sandboxd_api::StartProcess {
    const WHAT: &'static str = "start request";
}
impl JsonRequest for sandboxd_api::SignalRequest {
    const WHAT: &'static str = "signal request";
}
impl JsonRequest for sandboxd_api::TerminalSize {
    const WHAT: &'static str = "resize request";
}
impl JsonRequest for sandboxd_api::ProcessInput {
    const WHAT: &'static str = "stdin request";
}

/// A JSON body of a known request type.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: JsonRequest> FromRequest<S> for ApiJson<T> {
    type Rejection = BodyError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, BodyError> {
        let body = read_body(request).await?;
        // The raw bytes go now, before the command runs; the budget still counts their size
        // for the parsed request.
        Ok(parse_json(&body).map(ApiJson)?)
    }
}

pub fn parse_json<T: JsonRequest>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(
            "invalid_request",
            format!("invalid {}: {e}{}", T::WHAT, T::HINT),
        )
    })
}

/// What a query string takes, for the error when it is malformed.
pub trait QueryRequest: DeserializeOwned {
    const TAKES: &'static str;
}

/// A query string of a known shape.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: QueryRequest> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(query)| ApiQuery(query))
            .map_err(|rejection| {
                ApiError::bad_request(
                    "invalid_request",
                    format!("{}; the query takes {}", rejection.body_text(), T::TAKES),
                )
            })
    }
}

/// The client's address, as the connection layer put it in the request.
pub fn client_address(request: &Request) -> Option<std::net::IpAddr> {
    request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip())
}

/// The body's length as its `Content-Length` says, when it says one: an upload's early refusal
/// of a body over its limit (the bytes are counted as they come all the same).
pub fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok())
}
