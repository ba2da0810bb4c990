//! What a face needs of sandboxd, as one interface: the service's core serves it in process,
//! [`sandboxd-client`] over HTTP, so a face (the MCP tools, the next ones) is written once.

use crate::contexts::CodeEvent;
use crate::contexts::RunCode;
use crate::egress::SessionNetwork;
use crate::exec::ExecRequest;
use crate::exec::ExecResult;
use crate::files::FileList;
use crate::files::FileWritten;
use crate::output_watch::OutputWatch;
use crate::policy::Policy;
use crate::ports::PortList;
use crate::ports::ShareInfo;
use crate::ports::ShareList;
use crate::processes::KilledProcesses;
use crate::remedy::Remedy;
use crate::runtimes::RuntimeList;
use crate::sessions::CreateSession;
use crate::sessions::SessionInfo;
use crate::sessions::SessionList;
use crate::snapshots::ForkResult;
use crate::snapshots::SnapshotInfo;
use crate::snapshots::SnapshotList;
use std::fmt;
use std::future::Future;

/// A failed call: the service's stable error code where there is one, the text to show
/// (which names the code), and what to do about it, which the face words in its own terms:
/// `text` carries no face's hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: Option<String>,
    pub text: String,
    pub remedy: Option<Remedy>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Failure {}

/// Sessions and what runs in them, for one caller (whose credentials the implementation holds).
#[async_trait::async_trait]
pub trait Sandboxes: Send + Sync {
    async fn runtimes(&self) -> Result<RuntimeList, Failure>;
    /// The limits in force (timeouts, output and upload caps).
    async fn policy(&self) -> Result<Policy, Failure>;
    async fn open_session(&self, request: CreateSession) -> Result<SessionInfo, Failure>;
    async fn session(&self, id: &str) -> Result<SessionInfo, Failure>;
    async fn list_sessions(&self, include_ended: bool) -> Result<SessionList, Failure>;
    async fn close_session(&self, id: &str) -> Result<SessionInfo, Failure>;
    async fn kill_all_processes(&self, id: &str) -> Result<KilledProcesses, Failure>;
    async fn exec(&self, id: &str, request: ExecRequest) -> Result<ExecResult, Failure>;
    async fn list_files(&self, id: &str, path: Option<String>) -> Result<FileList, Failure>;
    /// The file's bytes, or `None` when it holds more than `max_bytes` (nothing more is read).
    async fn read_file(
        &self,
        id: &str,
        path: &str,
        max_bytes: u64,
    ) -> Result<Option<Vec<u8>>, Failure>;
    async fn write_file(
        &self,
        id: &str,
        path: &str,
        contents: Vec<u8>,
    ) -> Result<FileWritten, Failure>;
    async fn pause_session(&self, id: &str) -> Result<SessionInfo, Failure>;
    async fn resume_session(&self, id: &str) -> Result<SessionInfo, Failure>;
    async fn create_snapshot(&self, id: &str, name: &str) -> Result<SnapshotInfo, Failure>;
    async fn list_snapshots(&self) -> Result<SnapshotList, Failure>;
    async fn delete_snapshot(&self, id: &str) -> Result<SnapshotInfo, Failure>;
    async fn fork_session(&self, id: &str, count: u32) -> Result<ForkResult, Failure>;
    /// The volumes the caller may mount at open.
    async fn list_volumes(&self) -> Result<crate::volumes::VolumeList, Failure>;
    /// [`Sandboxes::exec`], sharing its output into `watch` as it comes where the
    /// implementation can see it before the end (in process, or a streamed exec); otherwise
    /// just `exec`.
    async fn exec_watched(
        &self,
        id: &str,
        request: ExecRequest,
        watch: &OutputWatch,
    ) -> Result<ExecResult, Failure> {
        let _ = watch;
        self.exec(id, request).await
    }
    async fn list_ports(&self, id: &str) -> Result<PortList, Failure>;
    /// A link to `port` working without the token for `ttl_secs` (the service's default when
    /// `None`).
    async fn share_port(
        &self,
        id: &str,
        port: u16,
        ttl_secs: Option<u64>,
    ) -> Result<ShareInfo, Failure>;
    async fn list_shares(&self, id: &str) -> Result<ShareList, Failure>;
    async fn revoke_share(&self, id: &str, share_id: &str) -> Result<ShareInfo, Failure>;
    /// Runs code in a context of the session (the language's default one unless the request
    /// names another): every event of the run, `end` last.
    async fn run_code(&self, id: &str, request: RunCode) -> Result<Vec<CodeEvent>, Failure>;
    async fn session_network(&self, id: &str) -> Result<SessionNetwork, Failure>;
    async fn set_session_network(
        &self,
        id: &str,
        network: SessionNetwork,
    ) -> Result<SessionNetwork, Failure>;
}

/// A download read a chunk at a time, for [`read_bounded`]: a file the core reads from a
/// sandbox, or one the client receives over HTTP.
pub trait Chunks: Send {
    type Chunk: AsRef<[u8]> + Send;
    type Error: Send;
    /// The size the download announced before its bytes, if it did.
    fn announced_size(&self) -> Option<u64>;
    /// The next chunk; `None` at the end.
    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<Self::Chunk>, Self::Error>> + Send;
}

/// The download's bytes, or `None` once they would exceed `max_bytes` (by the size it
/// announced, or by what arrived): nothing more is read, so a file that announces no size or
/// a wrong one still costs at most `max_bytes` of memory. What [`Sandboxes::read_file`] does.
pub async fn read_bounded<D: Chunks>(
    download: &mut D,
    max_bytes: u64,
) -> Result<Option<Vec<u8>>, D::Error> {
    if download
        .announced_size()
        .is_some_and(|size| size > max_bytes)
    {
        return Ok(None);
    }
    let mut contents = Vec::new();
    while let Some(chunk) = download.next_chunk().await? {
        let chunk = chunk.as_ref();
        if (contents.len() + chunk.len()) as u64 > max_bytes {
            return Ok(None);
        }
        contents.extend_from_slice(chunk);
    }
    Ok(Some(contents))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks handed out in order, counting how many were asked for.
    struct Scripted {
        announced: Option<u64>,
        chunks: Vec<Vec<u8>>,
        asked: usize,
    }

    impl Chunks for Scripted {
        type Chunk = Vec<u8>;
        type Error = ();
        fn announced_size(&self) -> Option<u64> {
            self.announced
        }
        async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, ()> {
            self.asked += 1;
            Ok((self.asked <= self.chunks.len()).then(|| self.chunks[self.asked - 1].clone()))
        }
    }

    fn scripted(announced: Option<u64>, chunks: &[&[u8]]) -> Scripted {
        Scripted {
            announced,
            chunks: chunks.iter().map(|chunk| chunk.to_vec()).collect(),
            asked: 0,
        }
    }

    #[tokio::test]
    async fn a_download_within_the_bound_is_read_whole() {
        let mut download = scripted(Some(6), &[b"abc", b"def"]);
        assert_eq!(
            read_bounded(&mut download, 6).await,
            Ok(Some(b"abcdef".to_vec()))
        );
    }

    #[tokio::test]
    async fn an_announced_size_over_the_bound_reads_nothing() {
        let mut download = scripted(Some(7), &[b"abc"]);
        assert_eq!(read_bounded(&mut download, 6).await, Ok(None));
        assert_eq!(download.asked, 0);
    }

    #[tokio::test]
    async fn bytes_over_the_bound_stop_the_reading_whatever_was_announced() {
        for announced in [None, Some(1)] {
            let mut download = scripted(announced, &[b"abc", b"defg", b"more"]);
            assert_eq!(read_bounded(&mut download, 6).await, Ok(None));
            assert_eq!(
                download.asked, 2,
                "nothing is read past the chunk that overflows"
            );
        }
    }
}
