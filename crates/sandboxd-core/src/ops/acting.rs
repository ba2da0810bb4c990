//! The core as [`Sandboxes`], acting for one caller: how in-process faces (the MCP endpoint
//! inside the service) reach the session operations without going through HTTP.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::Caller;
use sandboxd_api::{read_bounded, ComputerRequest, ComputerResult, SessionNetwork};
use sandboxd_api::{
    CodeEvent, CreateSession, ExecRequest, ExecResult, Failure, FileList, FileWritten, ForkRequest,
    ForkResult, KilledProcesses, OutputWatch, Policy, PortList, RunCode, RuntimeList, Sandboxes,
    SessionInfo, SessionList, ShareInfo, ShareList, SnapshotInfo, SnapshotList, SnapshotRequest,
};

/// The core, with every call made as `caller`.
pub struct Acting {
    core: Core,
    caller: Caller,
}

impl Core {
    pub fn acting_for(&self, caller: Caller) -> Acting {
        Acting {
            core: self.clone(),
            caller,
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure {
            code: Some(error.code().to_string()),
            text: format!("{}: {error}", error.code()),
            remedy: error.remedy(),
        }
    }
}

#[async_trait::async_trait]
impl Sandboxes for Acting {
    async fn runtimes(&self) -> Result<RuntimeList, Failure> {
        Ok(self.core.runtimes(&self.caller).await)
    }

    async fn policy(&self) -> Result<Policy, Failure> {
        Ok(self.core.config().policy.clone())
    }

    async fn open_session(&self, request: CreateSession) -> Result<SessionInfo, Failure> {
        Ok(self.core.open_session(&self.caller, request).await?)
    }

    async fn session(&self, id: &str) -> Result<SessionInfo, Failure> {
        Ok(self.core.get_session(&self.caller, id).await?)
    }

    async fn list_sessions(&self, include_ended: bool) -> Result<SessionList, Failure> {
        Ok(self.core.list_sessions(&self.caller, include_ended).await?)
    }

    async fn close_session(&self, id: &str) -> Result<SessionInfo, Failure> {
        Ok(self.core.close_session(&self.caller, id).await?)
    }

    async fn kill_all_processes(&self, id: &str) -> Result<KilledProcesses, Failure> {
        Ok(self.core.kill_all_processes(&self.caller, id).await?)
    }

    async fn exec(&self, id: &str, request: ExecRequest) -> Result<ExecResult, Failure> {
        Ok(self.core.exec(&self.caller, id, request).await?)
    }

    async fn exec_watched(
        &self,
        id: &str,
        request: ExecRequest,
        watch: &OutputWatch,
    ) -> Result<ExecResult, Failure> {
        let watch = watch.clone();
        Ok(self
            .core
            .exec_watched(&self.caller, id, request, move |data| watch.push(data))
            .await?)
    }

    async fn list_files(&self, id: &str, path: Option<String>) -> Result<FileList, Failure> {
        Ok(self.core.list_files(&self.caller, id, path).await?)
    }

    async fn read_file(
        &self,
        id: &str,
        path: &str,
        max_bytes: u64,
    ) -> Result<Option<Vec<u8>>, Failure> {
        let mut download = self
            .core
            .read_file(&self.caller, id, Some(path.to_string()))
            .await?;
        Ok(read_bounded(&mut download, max_bytes).await?)
    }

    async fn write_file(
        &self,
        id: &str,
        path: &str,
        contents: Vec<u8>,
    ) -> Result<FileWritten, Failure> {
        let declared = Some(contents.len() as u64);
        let written = self
            .core
            .write_file(
                &self.caller,
                id,
                Some(path.to_string()),
                None,
                declared,
                &contents[..],
            )
            .await?;
        Ok(written)
    }

    async fn pause_session(&self, id: &str) -> Result<SessionInfo, Failure> {
        Ok(self.core.pause_session(&self.caller, id).await?)
    }

    async fn resume_session(&self, id: &str) -> Result<SessionInfo, Failure> {
        Ok(self.core.resume_session(&self.caller, id).await?)
    }

    async fn create_snapshot(&self, id: &str, name: &str) -> Result<SnapshotInfo, Failure> {
        let request = SnapshotRequest {
            name: name.into(),
            memory: None,
        };
        Ok(self.core.create_snapshot(&self.caller, id, request).await?)
    }

    async fn list_snapshots(&self) -> Result<SnapshotList, Failure> {
        Ok(self.core.list_snapshots(&self.caller)?)
    }

    async fn delete_snapshot(&self, id: &str) -> Result<SnapshotInfo, Failure> {
        Ok(self.core.delete_snapshot(&self.caller, id).await?)
    }

    async fn list_volumes(&self) -> Result<sandboxd_api::VolumeList, Failure> {
        Ok(self.core.list_volumes(&self.caller).await?)
    }

    async fn fork_session(&self, id: &str, count: u32) -> Result<ForkResult, Failure> {
        let request = ForkRequest {
            count,
            memory: None,
        };
        Ok(self.core.fork_session(&self.caller, id, request).await?)
    }

    async fn list_ports(&self, id: &str) -> Result<PortList, Failure> {
        Ok(self.core.list_ports(&self.caller, id).await?)
    }

    async fn share_port(
        &self,
        id: &str,
        port: u16,
        ttl_secs: Option<u64>,
    ) -> Result<ShareInfo, Failure> {
        Ok(self
            .core
            .share_port(&self.caller, id, port, ttl_secs)
            .await?)
    }

    async fn list_shares(&self, id: &str) -> Result<ShareList, Failure> {
        Ok(self.core.list_shares(&self.caller, id)?)
    }

    async fn revoke_share(&self, id: &str, share_id: &str) -> Result<ShareInfo, Failure> {
        Ok(self.core.revoke_share(&self.caller, id, share_id)?)
    }

    async fn run_code(&self, id: &str, request: RunCode) -> Result<Vec<CodeEvent>, Failure> {
        let run = self.core.run_code(&self.caller, id, None, request).await?;
        Ok(run.collect().await?)
    }

    async fn session_network(&self, id: &str) -> Result<SessionNetwork, Failure> {
        Ok(self.core.session_network(&self.caller, id)?)
    }

    async fn set_session_network(
        &self,
        id: &str,
        network: SessionNetwork,
    ) -> Result<SessionNetwork, Failure> {
        Ok(self.core.set_session_network(&self.caller, id, network)?)
    }

    async fn computer(
        &self,
        id: &str,
        request: ComputerRequest,
    ) -> Result<ComputerResult, Failure> {
        Ok(self.core.computer(&self.caller, id, request).await?)
    }
}
