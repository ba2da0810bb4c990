//! Volumes mounted into a started runc sandbox, one of a warm pool's ([`crate::late_mounts`]).

use super::DockerBackend;
use crate::checkpoint::running_pid;
use crate::late_mounts::{attach, LateMount};
use rustix::process::{pidfd_open, Pid, PidfdFlags};
use sandboxd_backend::{BackendError, Sandbox, VolumeMount};

impl DockerBackend {
    /// See [`sandboxd_backend::Backend::mount_volumes`].
    pub(super) async fn mount_into_running(
        &self,
        sandbox: &Sandbox,
        mounts: &[VolumeMount],
    ) -> Result<(), BackendError> {
        let failed = |what: String| {
            BackendError::Setup(format!(
                "cannot mount volumes into sandbox {}: {what}",
                sandbox.session_id
            ))
        };
        let docker = self.docker().await?;
        let pid = running_pid(docker, &sandbox.backend_id).await?;
        let process = i32::try_from(pid)
            .ok()
            .and_then(Pid::from_raw)
            .ok_or_else(|| failed(format!("the engine named pid {pid}")))?;
        let pidfd = pidfd_open(process, PidfdFlags::empty())
            .map_err(|e| failed(format!("cannot hold its process {pid}: {e}")))?;
        // Held by the descriptor, the process cannot be replaced by another of the same pid:
        // asked again, the engine confirms it is still the container's.
        if running_pid(docker, &sandbox.backend_id).await? != pid {
            return Err(failed("its first process changed".into()));
        }
        let sources = mounts
            .iter()
            .map(|mount| self.volumes.mounted(&mount.volume_id))
            .collect::<Result<Vec<_>, _>>()?;
        let mounts = mounts.to_vec();
        tokio::task::spawn_blocking(move || {
            let late: Vec<LateMount<'_>> = sources
                .iter()
                .zip(&mounts)
                .map(|(source, mount)| LateMount {
                    host_source: source,
                    target: &mount.path,
                    read_only: mount.read_only,
                })
                .collect();
            attach(pidfd, &late)
        })
        .await
        .map_err(|e| failed(e.to_string()))?
        .map_err(|e| failed(e.to_string()))
    }
}
