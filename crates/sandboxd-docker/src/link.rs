//! The engine as its first answers describe it (API version, cgroup layout, security report),
//! asked once and awaited only by what needs it.
//!
//! A restarted service serves the sessions of the last run through their agents' sockets,
//! which need nothing from the engine; an engine running thousands of containers took up to
//! 2 s over its first answers during such a restart, which the service then spent not serving.

use crate::access::SandboxAccess;
use crate::cgroup::CgroupLayout;
use crate::checkpoint;
use crate::engine::{EngineReport, Finding, Level};
pub(crate) use crate::engine_errors::{engine_error, is_not_found};
use crate::shim::{self, ShimGroups};
use crate::work_volume;
use bollard::Docker;
use sandboxd_backend::BackendError;
use tokio::sync::OnceCell;

/// Seconds for engine calls that should answer quickly (create, remove, inspect, list).
pub(crate) const ENGINE_TIMEOUT: u64 = 60;

/// What the engine said about itself, with the client speaking its API version.
pub(crate) struct Engine {
    pub docker: Docker,
    pub cgroups: CgroupLayout,
    pub report: EngineReport,
    pub shims: ShimGroups,
    /// How new sandboxes' agent sockets are handed over (the engine may remap uids).
    pub access: SandboxAccess,
    /// The engine's runsc runtime is sandboxd's wrapper, which restores a sandbox paused to
    /// disk at its start (see [`crate::checkpoint`]).
    pub restores_from_disk: bool,
}

/// The way to the engine: its socket, and what it answered once it did.
pub(crate) struct EngineLink {
    socket: String,
    instance_id: String,
    sandboxes_per_shim: u32,
    /// Whether files can be given to the sandboxes' uid, unless the engine remaps uids.
    service_is_root: bool,
    engine: OnceCell<Engine>,
}

impl EngineLink {
    pub fn new(
        socket: String,
        instance_id: String,
        sandboxes_per_shim: u32,
        service_is_root: bool,
    ) -> EngineLink {
        EngineLink {
            socket,
            instance_id,
            sandboxes_per_shim,
            service_is_root,
            engine: OnceCell::new(),
        }
    }

    /// The engine, asked at the first call (again at the next if it did not answer).
    pub async fn engine(&self) -> Result<&Engine, BackendError> {
        self.engine.get_or_try_init(|| self.ask()).await
    }

    async fn ask(&self) -> Result<Engine, BackendError> {
        let socket_hint = |e: bollard::errors::Error| {
            BackendError::EngineUnavailable(format!(
                "cannot reach the Docker engine at {}: {e}; is dockerd running? (scripts/host-setup.sh starts it)",
                self.socket
            ))
        };
        let docker =
            Docker::connect_with_socket(&self.socket, ENGINE_TIMEOUT, bollard::API_DEFAULT_VERSION)
                .map_err(socket_hint)?
                .negotiate_version()
                .await
                .map_err(socket_hint)?;
        // Together: an engine running thousands of containers takes a while over its info.
        let (info, version) = tokio::join!(docker.info(), docker.version());
        let info = info.map_err(engine_error)?;
        // The versions only inform the report: an engine that does not answer this is usable.
        let version = version.ok();
        let api = docker.client_version();
        let mut report = EngineReport::new(&info, version.as_ref(), api.to_string());
        report
            .findings
            .extend(shim::finding(self.sandboxes_per_shim, &api));
        // Here, before any sandbox of this process is created (each waits for this answer),
        // so no volume made for a container still to come is taken for an orphan.
        match work_volume::remove_orphans(&docker, &self.instance_id).await {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "removed work volumes no container held"),
            // Leftovers only take room: they must not keep the engine from serving.
            Err(e) => tracing::warn!(error = %e, "cannot remove leftover work volumes"),
        }
        let restores_from_disk = checkpoint::engine_restores(&info);
        if report.runtimes.iter().any(|r| r == "runsc") && !restores_from_disk {
            report.findings.push(Finding {
                level: Level::Info,
                message: format!("the engine's runsc runtime is not sandboxd's {} wrapper: gVisor sandboxes pause in RAM (the freezer), not to disk; scripts/host-setup.sh registers it", checkpoint::RESTORING_RUNSC),
            });
        }
        let access = SandboxAccess::choose(self.service_is_root, report.user_namespaces);
        if access == SandboxAccess::Others {
            tracing::info!(
                "the sandboxes' agent sockets cannot be given to the sandboxes' uid (the service is not root, or the engine remaps uids): they are open to all users inside the socket root, which only the service's user can enter"
            );
        }
        Ok(Engine {
            access,
            cgroups: CgroupLayout::from_info(&info),
            shims: ShimGroups::new(&self.instance_id, self.sandboxes_per_shim, &api),
            report,
            docker,
            restores_from_disk,
        })
    }
}

/// Whether a container's start failed because containerd could not start the container's shim.
/// Two sandboxes of one new shim group (see [`crate::shim`]) start their shim at once, and
/// containerd 1.6's start of the second may remove the first one's socket while it is being
/// made ("create new shim socket: chmod /run/containerd/s/...: no such file or directory"),
/// seen once in about 45,000 starts under load; started again, the container joins the shim
/// that won.
pub(crate) fn shim_did_not_start(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError { message, .. }
            if message.contains("failed to start shim")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(status_code: u16, message: &str) -> bollard::errors::Error {
        bollard::errors::Error::DockerResponseServerError {
            status_code,
            message: message.to_string(),
        }
    }

    #[test]
    fn only_a_shim_that_did_not_start_is_worth_a_second_start() {
        // What the engine answered on 2026-12-04, in a run opening 3,000 sandboxes.
        assert!(shim_did_not_start(&refused(
            400,
            "failed to create task for container: failed to start shim: start failed: io.containerd.runc.v2: create new shim socket: chmod /run/containerd/s/59dd80ee6a3ea095bfe3ecffdcc411abb8a02fe6698b08884bfd0fe6847796e0: no such file or directory: exit status 1"
        )));
        assert!(!shim_did_not_start(&refused(404, "No such container: x")));
        assert!(!shim_did_not_start(&refused(
            500,
            "failed to create task for container: failed to create shim task: OCI runtime create failed: error mounting \"/x\" to rootfs"
        )));
    }
}
