//! The one place that maps the core's errors to HTTP: a status per kind of failure, and the
//! body `{"error": {"code", "message", "remedy"?}}`, where a remedy is worded with the route
//! that helps. Rejections of the extractors become the same shape.

use axum::http::{header, HeaderMap, StatusCode};
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

/// Whether a request comes from a browser navigating (it asks for HTML).
fn wants_page(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

impl ApiError {
    /// The error answered to whoever sent `headers`: a page a person can read to a browser
    /// ([`ApiError::into_page`]), the API's JSON to any other client. Share links answer their
    /// refusals so, whoever follows them.
    pub fn answer_for(self, headers: &HeaderMap) -> Response {
        match wants_page(headers) {
            true => self.into_page(),
            false => self.into_response(),
        }
    }

    /// The error as a small HTML page for a browser: the same status, the message in words
    /// (escaped: it may quote what a sandbox said), and a policy that lets the page load nothing.
    pub fn into_page(self) -> Response {
        let ApiError(error) = self;
        let status = status(&error);
        if status.is_server_error() {
            tracing::warn!(code = error.code(), error = %error, "request failed");
        }
        let (title, hint) = match status {
            StatusCode::NOT_FOUND => (
                "This link leads nowhere",
                "Ask whoever shared it for a new link.",
            ),
            StatusCode::BAD_GATEWAY => (
                "This link's page cannot be shown",
                "The server in the sandbox may have stopped, or not started yet: reload this page once it runs.",
            ),
            _ => ("This link's page cannot be shown", "Try again later."),
        };
        let body = format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n<body>\n<h1>{title}</h1>\n<p>{}</p>\n<p>{hint}</p>\n<p>{} {} &middot; <code>{}</code></p>\n</body></html>\n",
            escape_html(&error.to_string()),
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            error.code(),
        );
        (
            status,
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CONTENT_SECURITY_POLICY, "default-src 'none'"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            body,
        )
            .into_response()
    }
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_page_says_the_error_in_words_with_markup_escaped() {
        let response = ApiError(Error::NotFound("no <b>such</b> link & more".into())).into_page();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/html; charset=utf-8"
        );
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let body = String::from_utf8(body.to_vec()).unwrap();
        assert!(
            body.contains("no &lt;b&gt;such&lt;/b&gt; link &amp; more"),
            "{body}"
        );
        assert!(!body.contains("<b>"), "{body}");
    }
}
