//! The Kubernetes API's errors in the backend's words, for every file that calls the API.

use sandboxd_backend::BackendError;

pub(crate) fn api_error(e: kube::Error) -> BackendError {
    match e {
        kube::Error::Api(status) => BackendError::Engine(format!(
            "the Kubernetes API refused: {} (status {})",
            status.message, status.code
        )),
        other => BackendError::EngineUnavailable(format!("the Kubernetes API: {other}")),
    }
}

/// Whether the API answered with HTTP status `code`.
pub(crate) fn is_status(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(status) if status.code == code)
}
