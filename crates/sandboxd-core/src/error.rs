//! The one error type of the session operations. Each variant is a kind of failure a face
//! reports in its own terms (an HTTP status, an MCP tool error) with [`Error::code`] and the
//! message, which says what was wrong. What to do about it, where the error has a remedy, is
//! a [`Remedy`] each face words in its own terms (a route, a tool, a command): no message
//! names one face's way.

use sandboxd_api::Remedy;
use sandboxd_backend::BackendError;

/// The code of a command the sandbox could not start (missing, not executable, bad cwd): the
/// E2B face words it for its SDKs. Named, so a face's match follows a renamed code.
pub const CODE_SPAWN_FAILED: &str = sandboxd_agent_proto::ERROR_SPAWN_FAILED;
/// The code of something already at the destination: the E2B face answers `already_exists`.
pub const CODE_EXISTS: &str = sandboxd_agent_proto::ERROR_EXISTS;

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
    /// An error with what the caller can do about it; it is `error` in every other respect.
    #[error("{error}")]
    Remedied { error: Box<Error>, remedy: Remedy },
}

impl Error {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Error {
        Error::BadRequest {
            code,
            message: message.into(),
        }
    }

    /// The same error, with what the caller can do about it.
    pub fn with_remedy(self, remedy: Remedy) -> Error {
        Error::Remedied {
            error: Box::new(self.into_kind()),
            remedy,
        }
    }

    /// What the caller can do about it, when there is something.
    pub fn remedy(&self) -> Option<Remedy> {
        match self {
            Error::Remedied { remedy, .. } => Some(*remedy),
            _ => None,
        }
    }

    /// The kind of failure, whether or not a remedy came with it: what to match on.
    pub fn kind(&self) -> &Error {
        match self {
            Error::Remedied { error, .. } => error,
            error => error,
        }
    }

    /// The kind of failure, without the remedy: for faces that word errors their own way.
    pub fn into_kind(self) -> Error {
        match self {
            Error::Remedied { error, .. } => *error,
            error => error,
        }
    }

    /// The stable code every face reports with the message (`not_found`, `service_full`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Remedied { error, .. } => error.code(),
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
                BackendError::Unsupported(_) => "unsupported",
                BackendError::NoRoom(_) => "no_space",
            },
            Error::Agent(_) => "agent_error",
            Error::Storage(_) => "internal",
        }
    }
}
