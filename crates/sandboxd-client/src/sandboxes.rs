//! The client as [`Sandboxes`]: each call one request to the service, with the client's token.

use crate::client::Client;
use crate::error::ClientError;
use crate::streams::FileDownload;
use sandboxd_api::{read_bounded, Chunks, SessionNetwork};
use sandboxd_api::{
    CodeEvent, CreateSession, ExecRequest, ExecResult, Failure, FileList, FileWritten, ForkResult,
    KilledProcesses, OutputWatch, Policy, PortList, RunCode, RuntimeList, Sandboxes, SessionInfo,
    SessionList, ShareInfo, ShareList, SnapshotInfo, SnapshotList,
};

/// What [`read_bounded`] reads, for [`Sandboxes::read_file`].
impl Chunks for FileDownload {
    type Chunk = bytes::Bytes;
    type Error = ClientError;

    fn announced_size(&self) -> Option<u64> {
        self.size()
    }

    async fn next_chunk(&mut self) -> Result<Option<bytes::Bytes>, ClientError> {
        self.chunk().await
    }
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Failure {
        Failure {
            code: error.code().map(str::to_string),
            text: error.text_without_remedy(),
            remedy: error.remedy(),
        }
    }
}

#[async_trait::async_trait]
impl Sandboxes for Client {
    async fn runtimes(&self) -> Result<RuntimeList, Failure> {
        Ok(Client::runtimes(self).await?)
    }

    async fn policy(&self) -> Result<Policy, Failure> {
        Ok(Client::policy(self).await?)
    }

    async fn open_session(&self, request: CreateSession) -> Result<SessionInfo, Failure> {
        Ok(self.create_session(&request).await?)
    }

    async fn session(&self, id: &str) -> Result<SessionInfo, Failure> {
        Ok(Client::session(self, id).await?)
    }

    async fn list_sessions(&self, include_ended: bool) -> Result<SessionList, Failure> {
        Ok(Client::list_sessions(self, include_ended).await?)
    }

    async fn close_session(&self, id: &str) -> Result<SessionInfo, Failure> {
        Ok(Client::close_session(self, id).await?)
    }

    async fn kill_all_processes(&self, id: &str) -> Result<KilledProcesses, Failure> {
        Ok(Client::kill_all_processes(self, id).await?)
    }

    async fn exec(&self, id: &str, request: ExecRequest) -> Result<ExecResult, Failure> {
        Ok(Client::exec(self, id, &request).await?)
    }

    async fn exec_watched(
        &self,
        id: &str,
        request: ExecRequest,
        watch: &OutputWatch,
    ) -> Result<ExecResult, Failure> {
        Ok(Client::exec_streamed(self, id, &request, |data| watch.push(data)).await?)
    }

    async fn list_files(&self, id: &str, path: Option<String>) -> Result<FileList, Failure> {
        Ok(Client::list_files(self, id, path.as_deref().unwrap_or(".")).await?)
    }

    async fn read_file(
        &self,
        id: &str,
        path: &str,
        max_bytes: u64,
    ) -> Result<Option<Vec<u8>>, Failure> {
        let mut download = Client::read_file(self, id, path).await?;
        Ok(read_bounded(&mut download, max_bytes).await?)
    }

    async fn write_file(
        &self,
        id: &str,
        path: &str,
        contents: Vec<u8>,
    ) -> Result<FileWritten, Failure> {
        Ok(Client::write_file(self, id, path, None, contents).await?)
    }

    async fn pause_session(&self, id: &str) -> Result<SessionInfo, Failure> {
        Ok(Client::pause_session(self, id).await?)
    }

    async fn resume_session(&self, id: &str) -> Result<SessionInfo, Failure> {
        Ok(Client::resume_session(self, id).await?)
    }

    async fn create_snapshot(&self, id: &str, name: &str) -> Result<SnapshotInfo, Failure> {
        Ok(Client::create_snapshot(self, id, name).await?)
    }

    async fn list_snapshots(&self) -> Result<SnapshotList, Failure> {
        Ok(Client::list_snapshots(self).await?)
    }

    async fn delete_snapshot(&self, id: &str) -> Result<SnapshotInfo, Failure> {
        Ok(Client::delete_snapshot(self, id).await?)
    }

    async fn fork_session(&self, id: &str, count: u32) -> Result<ForkResult, Failure> {
        Ok(Client::fork_session(self, id, count).await?)
    }

    async fn list_volumes(&self) -> Result<sandboxd_api::VolumeList, Failure> {
        Ok(Client::list_volumes(self).await?)
    }

    async fn list_ports(&self, id: &str) -> Result<PortList, Failure> {
        Ok(Client::list_ports(self, id).await?)
    }

    async fn share_port(
        &self,
        id: &str,
        port: u16,
        ttl_secs: Option<u64>,
    ) -> Result<ShareInfo, Failure> {
        Ok(Client::share_port(self, id, port, ttl_secs).await?)
    }

    async fn list_shares(&self, id: &str) -> Result<ShareList, Failure> {
        Ok(Client::list_shares(self, id).await?)
    }

    async fn revoke_share(&self, id: &str, share_id: &str) -> Result<ShareInfo, Failure> {
        Ok(Client::revoke_share(self, id, share_id).await?)
    }

    async fn run_code(&self, id: &str, request: RunCode) -> Result<Vec<CodeEvent>, Failure> {
        Ok(Client::run_code(self, id, &request)
            .await?
            .collect()
            .await?)
    }

    async fn session_network(&self, id: &str) -> Result<SessionNetwork, Failure> {
        Ok(Client::session_network(self, id).await?)
    }

    async fn set_session_network(
        &self,
        id: &str,
        network: SessionNetwork,
    ) -> Result<SessionNetwork, Failure> {
        Ok(Client::set_session_network(self, id, &network).await?)
    }
}
