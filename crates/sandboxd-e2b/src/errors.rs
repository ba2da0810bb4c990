//! How the core's errors reach the E2B SDKs: each kind as the HTTP status (control plane and
//! envd's `/files`) and the Connect code (envd's RPCs) that the SDKs turn into the matching
//! exception (`NotFoundException`, `AuthenticationException`, `RateLimitException`,
//! `InvalidArgumentException`, `NotEnoughSpaceException`, `SandboxNotRunningException`, ...).
//! Messages are the core's, except where its words name our own REST API.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_backend::BackendError;
use sandboxd_core::{Error, CODE_EXISTS};

/// What the E2B SDKs' "sandbox is gone" check looks for in a message.
const NOT_FOUND_WORDS: &str = "was not found";

/// A Connect error code (the protocol's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    InvalidArgument,
    Unauthenticated,
    PermissionDenied,
    NotFound,
    AlreadyExists,
    FailedPrecondition,
    ResourceExhausted,
    Unavailable,
    Unimplemented,
    Internal,
}

impl Code {
    pub fn name(self) -> &'static str {
        match self {
            Code::InvalidArgument => "invalid_argument",
            Code::Unauthenticated => "unauthenticated",
            Code::PermissionDenied => "permission_denied",
            Code::NotFound => "not_found",
            Code::AlreadyExists => "already_exists",
            Code::FailedPrecondition => "failed_precondition",
            Code::ResourceExhausted => "resource_exhausted",
            Code::Unavailable => "unavailable",
            Code::Unimplemented => "unimplemented",
            Code::Internal => "internal",
        }
    }

    /// The HTTP status of a unary answer with this code, as the Connect protocol maps it.
    pub fn status(self) -> StatusCode {
        match self {
            Code::InvalidArgument | Code::FailedPrecondition => StatusCode::BAD_REQUEST,
            Code::Unauthenticated => StatusCode::UNAUTHORIZED,
            Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::AlreadyExists => StatusCode::CONFLICT,
            Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
            Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// A failure of the E2B face, before it is worded for the route that failed.
#[derive(Debug)]
pub struct E2bError {
    pub code: Code,
    /// The HTTP status on the control plane and envd's `/files`.
    pub status: StatusCode,
    pub message: String,
}

impl E2bError {
    pub fn new(code: Code, status: StatusCode, message: impl Into<String>) -> E2bError {
        E2bError {
            code,
            status,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> E2bError {
        E2bError::new(Code::InvalidArgument, StatusCode::BAD_REQUEST, message)
    }

    /// An E2B feature sandboxd does not offer.
    pub fn unsupported(what: &str) -> E2bError {
        E2bError::new(
            Code::Unimplemented,
            StatusCode::NOT_IMPLEMENTED,
            format!("{what} is not offered by sandboxd's E2B-compatible API (see the README, \"Using the E2B SDK\")"),
        )
    }

    pub fn unauthenticated(message: impl Into<String>) -> E2bError {
        E2bError::new(Code::Unauthenticated, StatusCode::UNAUTHORIZED, message)
    }

    pub fn sandbox_not_found(id: &str) -> E2bError {
        E2bError::new(
            Code::NotFound,
            StatusCode::NOT_FOUND,
            format!("sandbox {id} {NOT_FOUND_WORDS}"),
        )
    }

    /// The answer on the control plane and `/files`: `{"code": STATUS, "message"}`, the
    /// shape of E2B's own errors.
    pub fn into_http(self) -> Response {
        if self.status.is_server_error() && self.code != Code::Unimplemented {
            tracing::warn!(code = self.code.name(), message = %self.message, "E2B request failed");
        }
        let body = serde_json::json!({"code": self.status.as_u16(), "message": self.message});
        (self.status, Json(body)).into_response()
    }
}

impl From<Error> for E2bError {
    fn from(error: Error) -> E2bError {
        // What a remedy adds is worded for REST; the SDKs show the error itself.
        let error = error.into_kind();
        let message = match &error {
            Error::Unauthorized => "missing or wrong credential".to_string(),
            // The SDKs tell a sandbox that is gone by these words.
            Error::SessionEnded(text) => {
                format!("the sandbox {NOT_FOUND_WORDS} or has ended: {text}")
            }
            other => other.to_string(),
        };
        let (code, status) = match &error {
            Error::Unauthorized => (Code::Unauthenticated, StatusCode::UNAUTHORIZED),
            Error::BadRequest { .. } => (Code::InvalidArgument, StatusCode::BAD_REQUEST),
            Error::NotFound(_) => (Code::NotFound, StatusCode::NOT_FOUND),
            Error::Forbidden { .. } => (Code::PermissionDenied, StatusCode::FORBIDDEN),
            Error::Conflict {
                code: CODE_EXISTS, ..
            } => (Code::AlreadyExists, StatusCode::CONFLICT),
            Error::Conflict { .. } => (Code::FailedPrecondition, StatusCode::CONFLICT),
            Error::SessionEnded(_) => (Code::Unavailable, StatusCode::BAD_GATEWAY),
            Error::ServiceFull(_) | Error::LimitReached { .. } | Error::PayloadTooLarge(_) => {
                (Code::ResourceExhausted, StatusCode::TOO_MANY_REQUESTS)
            }
            Error::InsufficientStorage(_) => {
                (Code::ResourceExhausted, StatusCode::INSUFFICIENT_STORAGE)
            }
            Error::Backend(BackendError::Unsupported(_)) => {
                (Code::Unimplemented, StatusCode::NOT_IMPLEMENTED)
            }
            Error::RuntimeUnavailable(_) | Error::Backend(_) | Error::Agent(_) => {
                (Code::Unavailable, StatusCode::SERVICE_UNAVAILABLE)
            }
            Error::BadGateway { .. } => (Code::Unavailable, StatusCode::BAD_GATEWAY),
            Error::Storage(_) => (Code::Internal, StatusCode::INTERNAL_SERVER_ERROR),
            // `into_kind` leaves none.
            Error::Remedied { .. } => (Code::Internal, StatusCode::INTERNAL_SERVER_ERROR),
        };
        let status = match &error {
            Error::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            _ => status,
        };
        E2bError::new(code, status, message)
    }
}
