//! The engine's refusals as the backend's errors; a leaf every module that asks the engine uses.

use sandboxd_backend::BackendError;

/// The engine's answer as a backend error: its own message, or that it could not be reached.
pub(crate) fn engine_error(e: bollard::errors::Error) -> BackendError {
    match e {
        bollard::errors::Error::DockerResponseServerError {
            status_code,
            message,
        } => BackendError::Engine(format!("{message} (status {status_code})")),
        other => BackendError::EngineUnavailable(other.to_string()),
    }
}

/// Whether the engine answered that what was asked for does not exist.
pub(crate) fn is_not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}
