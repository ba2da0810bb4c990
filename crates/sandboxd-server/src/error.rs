//! The one error type of the API, and the one place that maps it to HTTP status codes.

use crate::activity::agent_text;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_agent_proto::ProtoError;
use sandboxd_api::{ErrorBody, ErrorDetail};
use sandboxd_backend::BackendError;
use std::io::ErrorKind;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("missing or wrong bearer token; send `Authorization: Bearer <token>` with the service token")]
    Unauthorized,
    /// The request is malformed or asks for something the API does not allow.
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    #[error("{0}")]
    NotFound(String),
    /// The sandbox refused: e.g. a read-only place or missing permissions.
    #[error("{message}")]
    Forbidden { code: &'static str, message: String },
    /// What is at the path does not allow the operation: e.g. a directory to read.
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error("{0}")]
    SessionEnded(String),
    #[error("{0}")]
    ServiceFull(String),
    /// A per-sandbox limit is reached: e.g. as many processes running as the agent tracks.
    #[error("{message}")]
    LimitReached { code: &'static str, message: String },
    #[error("{0}")]
    PayloadTooLarge(String),
    /// The sandbox's filesystem is full.
    #[error("{0}")]
    InsufficientStorage(String),
    #[error("{0}")]
    RuntimeUnavailable(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("the sandbox agent failed: {0}")]
    Agent(String),
    #[error(transparent)]
    Storage(#[from] sandboxd_store::StoreError),
}

impl ApiError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            code,
            message: message.into(),
        }
    }

    /// A failed exchange with the agent that carries no error code of the agent's own. A
    /// connection the agent closed or reset means it is gone or going (killed from inside the
    /// sandbox): `agent_unavailable`, as when no connection can be had at all.
    pub fn agent_exchange(error: &ProtoError) -> ApiError {
        let closed = match error {
            ProtoError::Closed => true,
            ProtoError::Io(e) => matches!(
                e.kind(),
                ErrorKind::ConnectionReset | ErrorKind::BrokenPipe | ErrorKind::UnexpectedEof
            ),
            _ => false,
        };
        if closed {
            return ApiError::Backend(BackendError::AgentUnavailable(format!(
                "{error}; the sandbox may have killed its agent"
            )));
        }
        // The message may quote what the agent sent.
        ApiError::Agent(agent_text(&error.to_string()))
    }

    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::BadRequest { code, .. } => (StatusCode::BAD_REQUEST, code),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::Forbidden { code, .. } => (StatusCode::FORBIDDEN, code),
            ApiError::Conflict { code, .. } => (StatusCode::CONFLICT, code),
            ApiError::SessionEnded(_) => (StatusCode::CONFLICT, "session_ended"),
            ApiError::ServiceFull(_) => (StatusCode::TOO_MANY_REQUESTS, "service_full"),
            ApiError::LimitReached { code, .. } => (StatusCode::TOO_MANY_REQUESTS, code),
            ApiError::PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            ApiError::InsufficientStorage(_) => (StatusCode::INSUFFICIENT_STORAGE, "no_space"),
            ApiError::RuntimeUnavailable(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "runtime_unavailable")
            }
            ApiError::Backend(e) => match e {
                BackendError::ImageMissing { .. } => {
                    (StatusCode::SERVICE_UNAVAILABLE, "image_missing")
                }
                BackendError::EngineUnavailable(_) => {
                    (StatusCode::SERVICE_UNAVAILABLE, "engine_unavailable")
                }
                BackendError::SandboxGone(_) => (StatusCode::GONE, "sandbox_gone"),
                BackendError::AgentUnavailable(_) => (StatusCode::BAD_GATEWAY, "agent_unavailable"),
                BackendError::Engine(_) => (StatusCode::BAD_GATEWAY, "engine_error"),
                BackendError::Setup(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            },
            ApiError::Agent(_) => (StatusCode::BAD_GATEWAY, "agent_error"),
            ApiError::Storage(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if status.is_server_error() {
            tracing::warn!(code, error = %self, "request failed");
        }
        let body = Json(ErrorBody {
            error: ErrorDetail {
                code: code.to_string(),
                message: self.to_string(),
            },
        });
        let mut response = (status, body).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                "Bearer".parse().expect("static header"),
            );
        }
        response
    }
}

/// The query string, or a 400 in the API's error shape that says what the route takes.
pub fn parse_query<T>(
    query: Result<axum::extract::Query<T>, axum::extract::rejection::QueryRejection>,
    takes: &str,
) -> Result<T, ApiError> {
    query
        .map(|axum::extract::Query(query)| query)
        .map_err(|rejection| {
            ApiError::bad_request(
                "invalid_request",
                format!("{}; the query takes {takes}", rejection.body_text()),
            )
        })
}
