//! The one error type of the session operations. Each variant is a kind of failure a face
//! reports in its own terms (an HTTP status, an MCP tool error) with [`Error::code`] and the
//! message, which says what was wrong and what to do.

use sandboxd_backend::BackendError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
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
    /// What a sandbox's port answered could not be passed on, or nothing answers there.
    #[error("{message}")]
    BadGateway { code: &'static str, message: String },
    #[error(transparent)]
    Storage(#[from] sandboxd_store::StoreError),
}

impl Error {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Error {
        Error::BadRequest {
            code,
            message: message.into(),
        }
    }

    /// The stable code every face reports with the message (`not_found`, `service_full`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Unauthorized => "unauthorized",
            Error::BadRequest { code, .. }
            | Error::Forbidden { code, .. }
            | Error::Conflict { code, .. }
            | Error::LimitReached { code, .. }
            | Error::BadGateway { code, .. } => code,
            Error::NotFound(_) => "not_found",
            Error::SessionEnded(_) => "session_ended",
            Error::ServiceFull(_) => "service_full",
            Error::PayloadTooLarge(_) => "payload_too_large",
            Error::InsufficientStorage(_) => "no_space",
            Error::RuntimeUnavailable(_) => "runtime_unavailable",
            Error::Backend(e) => match e {
                BackendError::ImageMissing { .. } => "image_missing",
                BackendError::EngineUnavailable(_) => "engine_unavailable",
                BackendError::SandboxGone(_) => "sandbox_gone",
                BackendError::AgentUnavailable(_) => "agent_unavailable",
                BackendError::Engine(_) => "engine_error",
                BackendError::Setup(_) => "internal",
            },
            Error::Agent(_) => "agent_error",
            Error::Storage(_) => "internal",
        }
    }
}
