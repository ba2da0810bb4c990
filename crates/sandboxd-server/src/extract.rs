//! Extractors whose rejections are the API's own JSON errors, so handlers never parse by hand:
//! the caller, a JSON body, a query string and a raw body.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
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

/// A request body read whole, within the route's limit.
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        Bytes::from_request(request, state)
            .await
            .map(RawBody)
            .map_err(body_error)
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
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let RawBody(body) = RawBody::from_request(request, state).await?;
        parse_json(&body).map(ApiJson)
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

/// The request body, or the API's own error when it is over its limit or cut off.
fn body_error(rejection: BytesRejection) -> ApiError {
    match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError(Error::PayloadTooLarge(format!(
            "{}; the policy caps bodies (GET /v1/policy)",
            rejection.body_text()
        ))),
        _ => ApiError::bad_request("invalid_request", rejection.body_text()),
    }
}
