//! The tools for pausing, resuming, snapshots and forks: a router of their own, added to the
//! other tools' in [`SandboxTools::new`].

use crate::answer::{Answer, Refusal};
use crate::errors::tool_error;
use crate::params::{NoParams, SessionParams};
use crate::tools::SandboxTools;
use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use sandboxd_api::{CreateSession, ForkResult, SessionInfo, SnapshotInfo, SnapshotList};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotSessionParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// A name for the snapshot (1 to 128 characters).
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotParams {
    /// The snapshot's id, as snapshot_session or list_snapshots returned it.
    pub snapshot_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenFromSnapshotParams {
    /// The snapshot's id, as snapshot_session or list_snapshots returned it.
    pub snapshot_id: String,
    /// Labels added over the snapshot's own, for your bookkeeping.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkSessionParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// How many sessions to open, 1 to 16.
    #[schemars(range(min = 1))]
    pub count: u32,
}

#[tool_router(router = snapshot_tool_router, vis = "pub(crate)")]
impl SandboxTools {
    #[tool(
        title = "Pause a session",
        description = "Pause a session: every process in it stops where it is, using no CPU, and keeps its memory, files and output (on a gVisor runtime the memory goes to disk and its RAM is freed: paused_memory says \"disk\"; connections to the outside are closed). Any tool used on the session afterwards resumes it first; resume_session does so explicitly. A session left paused is closed after the service's paused limit.",
        annotations(idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SessionInfo>()
    )]
    async fn pause_session(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let session = client.pause_session(&params.session_id).await;
        Ok(Answer::json(&session.map_err(tool_error)?))
    }

    #[tool(
        title = "Resume a session",
        description = "Resume a paused session: its processes go on where they stopped.",
        annotations(idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SessionInfo>()
    )]
    async fn resume_session(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let session = client.resume_session(&params.session_id).await;
        Ok(Answer::json(&session.map_err(tool_error)?))
    }

    #[tool(
        title = "Snapshot a session",
        description = "Save a session's files (/workspace, /tmp, /dev/shm, with modes and symlinks), runtime and labels as a named snapshot, to open new sessions from later with open_from_snapshot. Processes are not saved. Snapshots count against a quota of number and bytes.",
        annotations(open_world_hint = false),
        output_schema = schema_for_output::<SnapshotInfo>()
    )]
    async fn snapshot_session(
        &self,
        Parameters(params): Parameters<SnapshotSessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let snapshot = client
            .create_snapshot(&params.session_id, &params.name)
            .await;
        Ok(Answer::json(&snapshot.map_err(tool_error)?))
    }

    #[tool(
        title = "List snapshots",
        description = "List the snapshots you may open: id, name, runtime, labels, the session each was taken from, when, and its size in bytes.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SnapshotList>()
    )]
    async fn list_snapshots(
        &self,
        Parameters(NoParams {}): Parameters<NoParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let snapshots = client.list_snapshots().await.map_err(tool_error)?;
        Ok(Answer::json(&snapshots))
    }

    #[tool(
        title = "Delete a snapshot",
        description = "Delete a snapshot and its files; sessions opened from it are not affected.",
        annotations(destructive_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SnapshotInfo>()
    )]
    async fn delete_snapshot(
        &self,
        Parameters(params): Parameters<SnapshotParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let deleted = client.delete_snapshot(&params.snapshot_id).await;
        Ok(Answer::json(&deleted.map_err(tool_error)?))
    }

    #[tool(
        title = "Open a session from a snapshot",
        description = "Open a new session from a snapshot: the snapshot's runtime with its files and labels, and no process running. Returns the session; pass its id as session_id to the other tools.",
        annotations(open_world_hint = false),
        output_schema = schema_for_output::<SessionInfo>()
    )]
    async fn open_from_snapshot(
        &self,
        Parameters(params): Parameters<OpenFromSnapshotParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let request = CreateSession {
            snapshot: Some(params.snapshot_id),
            labels: params.labels,
            ..CreateSession::default()
        };
        let opened = client.open_session(request).await.map_err(tool_error)?;
        Ok(Answer::json(&opened))
    }

    #[tool(
        title = "Fork a session",
        description = "Fork a session into `count` new, independent sessions that start from its state, to try several approaches from the same point: its files, and on gVisor runtimes without a network also its running processes (`memory` in the answer says which). All open or none; the session forked is left as it is. Close the ones you no longer need.",
        annotations(open_world_hint = false),
        output_schema = schema_for_output::<ForkResult>()
    )]
    async fn fork_session(
        &self,
        Parameters(params): Parameters<ForkSessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let forked = client.fork_session(&params.session_id, params.count).await;
        Ok(Answer::json(&forked.map_err(tool_error)?))
    }
}
