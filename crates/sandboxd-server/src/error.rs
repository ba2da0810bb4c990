//! The one place that maps the core's errors to HTTP: a status per kind of failure, and the
//! body `{"error": {"code", "message", "remedy"?}}`, where a remedy is worded with the route
//! that helps. Rejections of the extractors become the same shape.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_api::{with_wording, ErrorBody, ErrorDetail, Remedy};
use sandboxd_backend::BackendError;
use sandboxd_core::Error;

/// A core error on its way out as an HTTP answer.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(error: Error) -> ApiError {
        ApiError(error)
    }
}

impl ApiError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError(Error::bad_request(code, message))
    }
}

/// The status each kind of failure is answered with.
pub fn status(error: &Error) -> StatusCode {
    match error {
        Error::Remedied { error, .. } => status(error),
        Error::Unauthorized => StatusCode::UNAUTHORIZED,
        Error::BadRequest { .. } => StatusCode::BAD_REQUEST,
        Error::NotFound(_) => StatusCode::NOT_FOUND,
        Error::Forbidden { .. } => StatusCode::FORBIDDEN,
        Error::Conflict { .. } | Error::SessionEnded(_) => StatusCode::CONFLICT,
        Error::ServiceFull(_) | Error::LimitReached { .. } => StatusCode::TOO_MANY_REQUESTS,
        Error::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        Error::InsufficientStorage(_) => StatusCode::INSUFFICIENT_STORAGE,
        Error::RuntimeUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        Error::Backend(e) => match e {
            BackendError::ImageMissing { .. } | BackendError::EngineUnavailable(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            BackendError::SandboxGone(_) => StatusCode::GONE,
            BackendError::AgentUnavailable(_) | BackendError::Engine(_) => StatusCode::BAD_GATEWAY,
            BackendError::Setup(_) => StatusCode::INTERNAL_SERVER_ERROR,
            BackendError::Unsupported(_) => StatusCode::NOT_IMPLEMENTED,
            BackendError::NoRoom(_) => StatusCode::INSUFFICIENT_STORAGE,
        },
        Error::Agent(_) | Error::BadGateway { .. } => StatusCode::BAD_GATEWAY,
        Error::Storage(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The error as the body says it: its code, its message with the remedy in the API's words
/// (the route that helps), and the remedy's key.
pub fn detail(error: &Error) -> ErrorDetail {
    let remedy = error.remedy();
    ErrorDetail {
        code: error.code().to_string(),
        message: with_wording(&error.to_string(), remedy.map(Remedy::rest_wording)),
        remedy: remedy.map(|remedy| remedy.key().to_string()),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let ApiError(error) = self;
        let status = status(&error);
        let code = error.code();
        if status.is_server_error() {
            tracing::warn!(code, error = %error, "request failed");
        }
        let body = Json(ErrorBody {
            error: detail(&error),
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
