//! What can go wrong talking to the service, in words a person or an agent can act on.

/// An error from the client: the service could not be reached, refused the token, or answered
/// with an error of its own (`{"error": {"code", "message"}}`, kept as is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("invalid service URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error("cannot connect to {url} (is `sandboxd serve` running?): {cause}")]
    Connect { url: String, cause: String },
    #[error(
        "unauthorized: the service at {url} refused the token (check SANDBOXD_TOKEN or --token)"
    )]
    Unauthorized { url: String },
    /// The service answered with one of its errors. `message` ends with the remedy in the
    /// API's words (a route), when there is one.
    #[error("{code}: {message}")]
    Api {
        status: u16,
        code: String,
        message: String,
        remedy: Option<sandboxd_api::Remedy>,
    },
    #[error("no answer from {url} in time: {cause}")]
    Timeout { url: String, cause: String },
    #[error("request to {url} failed: {cause}")]
    Transport { url: String, cause: String },
    /// An answer that is not what the API promises (a proxy's page, a different program).
    #[error("unexpected answer from {url} (HTTP {status}): {detail}")]
    UnexpectedResponse {
        url: String,
        status: u16,
        detail: String,
    },
}

impl ClientError {
    /// The service's error code (e.g. `unknown_runtime`), when the service answered with one.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Api { code, .. } => Some(code),
            ClientError::Unauthorized { .. } => Some("unauthorized"),
            _ => None,
        }
    }

    /// What to do about it, when the service said (to be worded in the caller's own terms).
    pub fn remedy(&self) -> Option<sandboxd_api::Remedy> {
        match self {
            ClientError::Api { remedy, .. } => *remedy,
            _ => None,
        }
    }

    /// The error's text without the API's wording of its remedy, for a face that words the
    /// remedy itself.
    pub fn text_without_remedy(&self) -> String {
        match self {
            ClientError::Api {
                code,
                message,
                remedy: Some(remedy),
                ..
            } => format!(
                "{code}: {}",
                sandboxd_api::without_rest_wording(message, *remedy)
            ),
            error => error.to_string(),
        }
    }

    /// The service's error as its body or an event carries it.
    pub(crate) fn from_detail(status: u16, error: sandboxd_api::ErrorDetail) -> ClientError {
        ClientError::Api {
            status,
            code: error.code,
            message: error.message,
            remedy: error
                .remedy
                .as_deref()
                .and_then(sandboxd_api::Remedy::from_key),
        }
    }

    pub(crate) fn from_reqwest(url: &str, error: reqwest::Error) -> ClientError {
        let url = url.to_string();
        let cause = root_cause(&error);
        if error.is_connect() {
            ClientError::Connect { url, cause }
        } else if error.is_timeout() {
            ClientError::Timeout { url, cause }
        } else {
            ClientError::Transport { url, cause }
        }
    }
}

/// The innermost error's text (e.g. "Connection refused (os error 111)"): reqwest's own
/// layers only repeat the URL.
fn root_cause(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}
