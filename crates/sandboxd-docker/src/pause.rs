//! Pausing and resuming a sandbox through the engine, which freezes its cgroup (the freezer
//! controller on cgroup v1, `cgroup.freeze` on v2): every process stops where it is and keeps
//! its memory, and nothing in the sandbox can tell or prevent it.

use crate::link::{engine_error, is_not_found};
use bollard::Docker;
use sandboxd_backend::BackendError;

/// Pauses (`freeze`) or resumes the container. Asking for the state it is already in is no
/// error: the engine answers 409 then, and the container's state says whether that is why.
pub async fn set_frozen(
    docker: &Docker,
    container: &str,
    freeze: bool,
) -> Result<(), BackendError> {
    let result = if freeze {
        docker.pause_container(container).await
    } else {
        docker.unpause_container(container).await
    };
    match result {
        Ok(()) => Ok(()),
        Err(e) if is_not_found(&e) => Err(BackendError::SandboxGone(container.to_string())),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 409,
            message,
        }) => {
            let state = docker
                .inspect_container(container, None)
                .await
                .map_err(engine_error)?
                .state;
            let paused = state.as_ref().and_then(|s| s.paused).unwrap_or(false);
            let running = state.as_ref().and_then(|s| s.running).unwrap_or(false);
            if running && paused == freeze {
                Ok(())
            } else {
                Err(BackendError::Engine(format!("{message} (status 409)")))
            }
        }
        Err(e) => Err(engine_error(e)),
    }
}
