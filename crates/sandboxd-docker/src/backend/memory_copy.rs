//! Copies of a running gVisor sandbox's memory and processes, and sandboxes started from one
//! (a fork that carries its processes): the copy is a `runsc checkpoint --leave-running`
//! image ([`crate::checkpoint::Checkpoints::write_copy`]); a new sandbox of the same runtime gets the image
//! linked into its own checkpoint directory before its start, which the engine's restoring
//! runsc then turns into a restore ([`crate::checkpoint`]). Its agent comes back knowing the
//! secret of the agent it was copied from, so its socket is bound expecting that one.

use super::DockerBackend;
use sandboxd_agent_proto::host::wake_agent;
use sandboxd_agent_proto::AgentHub;
use sandboxd_backend::{BackendError, Sandbox, SandboxSpec};

impl DockerBackend {
    /// See [`sandboxd_backend::Backend::copy_memory`].
    pub(super) async fn write_memory_copy(
        &self,
        sandbox: &Sandbox,
        copy_id: &str,
    ) -> Result<u64, BackendError> {
        let engine = self.engine().await?;
        if !engine.restores_from_disk
            || !self.checkpoints.restorable(&engine.docker, sandbox).await?
        {
            return Err(BackendError::Unsupported(format!(
                "sandbox {} is not a gVisor sandbox this engine restores, so its memory cannot be copied",
                sandbox.session_id
            )));
        }
        let memory = engine.cgroups.usage(&sandbox.backend_id).await.memory_bytes;
        let owner = self.sockets.secret_owner(&sandbox.session_id);
        self.checkpoints
            .write_copy(&engine.docker, &sandbox.backend_id, copy_id, memory, owner)
            .await
    }

    /// The session whose agent secret a new sandbox's agent proves: that of the agent its
    /// copy of memory was taken from, when it starts from one.
    pub(super) fn secret_of(&self, spec: &SandboxSpec) -> Result<Option<String>, BackendError> {
        spec.memory_from
            .as_deref()
            .map(|copy| self.checkpoints.copy_owner(copy))
            .transpose()
    }

    /// Before the start of a created sandbox: its copy of memory to restore from, if any.
    pub(super) fn seed_memory(&self, spec: &SandboxSpec) -> Result<(), BackendError> {
        match &spec.memory_from {
            Some(copy) => self.checkpoints.seed(copy, &spec.session_id),
            None => Ok(()),
        }
    }

    /// After the start: a restored agent finds its connections broken and dials when called.
    pub(super) fn call_restored_agent(&self, spec: &SandboxSpec, hub: &AgentHub) {
        if spec.memory_from.is_some() {
            wake_agent(hub.path());
        }
    }

    /// Once its agent answered: the links to the copy are no longer needed.
    pub(super) fn unseed_memory(&self, spec: &SandboxSpec) {
        if spec.memory_from.is_some() {
            self.checkpoints.remove(&spec.session_id);
        }
    }
}
