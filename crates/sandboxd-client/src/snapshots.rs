//! Pausing and resuming sessions, snapshots and forks.

use crate::client::Client;
use crate::error::ClientError;
use reqwest::Method;
use sandboxd_api::{
    ForkRequest, ForkResult, SessionInfo, SnapshotInfo, SnapshotList, SnapshotRequest,
};

impl Client {
    /// `POST /v1/sessions/{id}/pause`: freezes every process of the session.
    pub async fn pause_session(&self, id: &str) -> Result<SessionInfo, ClientError> {
        self.send(self.request(Method::POST, &["sessions", id, "pause"]))
            .await
    }

    /// `POST /v1/sessions/{id}/resume`: thaws a paused session.
    pub async fn resume_session(&self, id: &str) -> Result<SessionInfo, ClientError> {
        self.send(self.request(Method::POST, &["sessions", id, "resume"]))
            .await
    }

    /// `POST /v1/sessions/{id}/snapshots`: saves the session's files, runtime and labels.
    /// Not timed here: the service bounds each step of the transfer.
    pub async fn create_snapshot(&self, id: &str, name: &str) -> Result<SnapshotInfo, ClientError> {
        let body = SnapshotRequest { name: name.into() };
        let request = self.untimed_request(Method::POST, &["sessions", id, "snapshots"]);
        self.send(request.json(&body)).await
    }

    /// `GET /v1/snapshots`.
    pub async fn list_snapshots(&self) -> Result<SnapshotList, ClientError> {
        self.send(self.request(Method::GET, &["snapshots"])).await
    }

    /// `GET /v1/snapshots/{id}`.
    pub async fn snapshot(&self, id: &str) -> Result<SnapshotInfo, ClientError> {
        self.send(self.request(Method::GET, &["snapshots", id]))
            .await
    }

    /// `DELETE /v1/snapshots/{id}`.
    pub async fn delete_snapshot(&self, id: &str) -> Result<SnapshotInfo, ClientError> {
        self.send(self.request(Method::DELETE, &["snapshots", id]))
            .await
    }

    /// `POST /v1/sessions/{id}/fork`: opens `count` independent sessions with the session's
    /// files. Open a session from a snapshot with [`Client::create_session`] and its
    /// `snapshot` field.
    pub async fn fork_session(&self, id: &str, count: u32) -> Result<ForkResult, ClientError> {
        let request = self.untimed_request(Method::POST, &["sessions", id, "fork"]);
        self.send(request.json(&ForkRequest {
            count,
            memory: None,
        }))
        .await
    }
}
