//! Snapshots of sessions: the files of the sandbox's writable places (the backend names them:
//! for Docker `/workspace`, `/tmp` and `/dev/shm`) as tar archives the agent makes inside the
//! sandbox, with the session's runtime, labels and environment; or, where the runtime can
//! (see [`crate::ops::memory_copy`]), a copy of its running processes and memory the backend
//! keeps, whose image holds those files too. A snapshot belongs to its session's tenant: another tenant's is "not found".
//! It counts against the tenant's quota (`policy.snapshot_quota_count` snapshots and
//! `policy.snapshot_quota_bytes` bytes of archives); one that would not fit is refused and
//! leaves nothing, nor does one that does not finish within `policy.max_timeout_secs` (the
//! longest a command may run): a sandbox that starves its own agent cannot hold a snapshot
//! open without end. Snapshots of one session take turns; those of different sessions run
//! side by side, the quota counting the bytes of those in flight. The host keeps the archives as opaque files (see [`crate::state::snapshot_files`])
//! and never unpacks them: they go back into a sandbox through its agent.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::state::activity::{agent_text, error_text, Caller, PendingEntry};
use crate::state::sessions::{new_session_id, rfc3339, tenant_name, Session};
use sandboxd_agent_proto::{self as proto, ErrorCode, ProtoError};
use sandboxd_api::{SnapshotInfo, SnapshotList, SnapshotRequest};
use sandboxd_backend::BackendError;
use sandboxd_config::format_bytes;
use sandboxd_store::SnapshotRecord;
use std::collections::HashSet;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::io::AsyncWriteExt;

/// The longest wait for one step of an archive's transfer, as for files.
pub(crate) const STEP_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_NAME_CHARS: usize = 128;

pub(crate) fn not_found(id: &str) -> Error {
    Error::NotFound(format!(
        "no snapshot with id \"{id}\"; list the snapshots to see yours"
    ))
}

pub(crate) fn info(record: &SnapshotRecord) -> SnapshotInfo {
    SnapshotInfo {
        id: record.id.clone(),
        name: record.name.clone(),
        tenant: record.tenant.clone(),
        runtime: record.runtime.clone(),
        labels: record.labels.clone(),
        session_id: record.session_id.clone(),
        created_at: record.created_at.clone(),
        bytes: record.bytes,
        paths: record.paths.clone(),
        memory: record.memory,
    }
}

/// The backend's id of the copy of memory a snapshot keeps.
pub(crate) fn memory_copy_id(snapshot_id: &str) -> String {
    format!("snap-{snapshot_id}")
}

/// A failure of the host's own files: the service's fault, not the caller's or the sandbox's.
pub(crate) fn host_error(what: &str, e: std::io::Error) -> Error {
    Error::Backend(BackendError::Setup(format!("{what}: {e}")))
}

/// A snapshot cancelled at its time limit.
fn too_slow(session_id: &str, limit: Duration) -> Error {
    Error::LimitReached {
        code: "snapshot_timeout",
        message: format!(
            "the snapshot of session {session_id} did not finish within {} s (policy.max_timeout_secs) and was cancelled; nothing was kept. The sandbox answered too slowly: it may be starved of CPU or memory by its own processes, or hold more files than can be read in that time. Stop what runs in it, or delete files, and take the snapshot again",
            limit.as_secs()
        ),
    }
}

impl Core {
    /// Saves the session's files, runtime and labels as a new snapshot.
    pub async fn create_snapshot(
        &self,
        caller: &Caller,
        session_id: &str,
        request: SnapshotRequest,
    ) -> Result<SnapshotInfo, Error> {
        let name = request.name;
        if name.is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(Error::bad_request(
                "invalid_request",
                format!(
                    "`name` must be 1 to {MAX_NAME_CHARS} characters without control characters"
                ),
            ));
        }
        let session = self.running_session(caller, session_id, "snapshot")?;
        let record = self
            .take_snapshot(caller, &session, name, request.memory)
            .await?;
        Ok(info(&record))
    }

    /// The snapshots the caller may see: all of them, or its tenant's.
    pub fn list_snapshots(&self, caller: &Caller) -> Result<SnapshotList, Error> {
        let tenant = caller.principal.tenant().map(Some);
        let records = self.sessions().store().snapshots(tenant)?;
        Ok(SnapshotList {
            snapshots: records.iter().map(info).collect(),
        })
    }

    pub fn get_snapshot(&self, caller: &Caller, id: &str) -> Result<SnapshotInfo, Error> {
        Ok(info(&self.snapshot_for(caller, id, "get_snapshot")?))
    }

    /// Deletes a snapshot: its record, then its files (a crash between leaves files that
    /// are removed at the next start).
    pub async fn delete_snapshot(&self, caller: &Caller, id: &str) -> Result<SnapshotInfo, Error> {
        let record = self.snapshot_for(caller, id, "delete_snapshot")?;
        let mut entry = PendingEntry::new(
            self.sessions(),
            &record.session_id,
            caller.actor(),
            "snapshot_delete",
            &record.id,
        );
        let result = self.remove_snapshot(&record).await;
        entry.end(result.as_ref().err().map(error_text));
        result?;
        Ok(info(&record))
    }

    /// The snapshot, if the caller may reach it: a tenant only its own; another tenant's is
    /// "not found", like an id that does not exist, and the attempt goes to the audit log.
    pub(crate) fn snapshot_for(
        &self,
        caller: &Caller,
        id: &str,
        action: &'static str,
    ) -> Result<SnapshotRecord, Error> {
        let record = self
            .sessions()
            .store()
            .snapshot(id)?
            .ok_or_else(|| not_found(id))?;
        match caller.principal.tenant() {
            Some(tenant) if record.tenant.as_deref() != Some(tenant) => {
                self.record_denied(caller, action, id);
                Err(not_found(id))
            }
            _ => Ok(record),
        }
    }

    pub(crate) async fn remove_snapshot(&self, record: &SnapshotRecord) -> Result<(), Error> {
        self.sessions().store().delete_snapshot(&record.id)?;
        if record.memory {
            self.backend()
                .remove_memory_copy(&memory_copy_id(&record.id));
        }
        self.snapshots()
            .files
            .remove(&record.id)
            .await
            .map_err(|e| host_error("cannot remove the snapshot's files", e))?;
        tracing::info!(snapshot = %record.id, "snapshot deleted");
        Ok(())
    }

    /// Takes a snapshot of an open session under the quota of its tenant, recording the
    /// entry in its activity log; with its processes and memory as `memory` asks (see
    /// [`Core::copy_memory`]). Another snapshot or fork of the same session waits for it;
    /// other sessions' do not.
    pub(crate) async fn take_snapshot(
        &self,
        caller: &Caller,
        session: &Session,
        name: String,
        memory: Option<bool>,
    ) -> Result<SnapshotRecord, Error> {
        let _turn = self.snapshots().turn_of(&session.id).await;
        let id = new_session_id();
        let mut entry = PendingEntry::new(
            self.sessions(),
            &session.id,
            caller.actor(),
            "snapshot",
            &id,
        );
        let result = self.write_snapshot(session, &id, name, memory).await;
        entry.bytes = result.as_ref().ok().map(|r| r.bytes);
        if result.as_ref().is_ok_and(|r| r.memory) {
            entry.target.push_str(" with memory");
        }
        entry.end(result.as_ref().err().map(error_text));
        if result.is_ok() {
            tracing::info!(session = %session.id, snapshot = %id, "snapshot taken");
        }
        result
    }

    async fn write_snapshot(
        &self,
        session: &Session,
        id: &str,
        name: String,
        memory: Option<bool>,
    ) -> Result<SnapshotRecord, Error> {
        let policy = &self.config().policy;
        let tenant = session.tenant.as_deref();
        let store = self.sessions().store();
        let (count, used) = store.snapshot_usage(tenant)?;
        let quota_count = policy.snapshot_quota_count;
        let Some(mut taking) = self.snapshots().start_taking(tenant, count, quota_count) else {
            return Err(Error::LimitReached {
                code: "snapshot_quota",
                message: format!(
                    "{} keeps {count} snapshots (and takes others now), as many as its quota allows (policy.snapshot_quota_count = {quota_count}); delete one first",
                    tenant_name(tenant, "sessions"),
                ),
            });
        };
        let quota = policy.snapshot_quota_bytes;
        let over_quota = |used: u64| {
            Error::LimitReached {
            code: "snapshot_quota",
            message: format!(
                "the snapshot would take more than the {} left of the snapshot quota of {} ({} of {} in use, policy.snapshot_quota_bytes); nothing was kept. Delete snapshots or files in the session first",
                format_bytes(quota.saturating_sub(used)),
                tenant_name(tenant, "sessions"),
                format_bytes(used),
                format_bytes(quota)
            ),
        }
        };
        let io_error = |e: std::io::Error| host_error("cannot write the snapshot's files", e);
        let partial = self.snapshots().files.begin(id).map_err(io_error)?;
        let copy_id = memory_copy_id(id);
        let copied = self
            .copy_memory(session, &copy_id, memory, "a snapshot")
            .await?;
        let forget_copy = || {
            if copied.is_some() {
                self.backend().remove_memory_copy(&copy_id);
            }
        };
        let paths = match copied {
            // The image holds the files too.
            Some(_) => Vec::new(),
            None => self.backend().writable_places(),
        };
        let limit = Duration::from_secs(policy.max_timeout_secs);
        let transfer = async {
            if let Some(bytes) = copied {
                return match taking.add(bytes, used, quota) {
                    true => Ok(bytes),
                    false => Err(over_quota(used)),
                };
            }
            let left = quota.saturating_sub(used);
            let mut bytes = 0u64;
            for (index, path) in paths.iter().enumerate() {
                let agent = self.connect(session).await?;
                let mut archive =
                    proto::open_archive(agent, path, left.saturating_sub(bytes), STEP_TIMEOUT)
                        .await
                        .map_err(|e| match e {
                            ProtoError::Agent {
                                code: ErrorCode::TooLarge,
                                ..
                            } => over_quota(used),
                            e => agent_error(Operation::ListFiles, e),
                        })?;
                let mut file = partial.create(index).await.map_err(io_error)?;
                loop {
                    let chunk = archive.next_chunk().await.map_err(|e| {
                        Error::Agent(agent_text(&format!("the archive of {path} broke off: {e}")))
                    })?;
                    let Some(chunk) = chunk else { break };
                    bytes += chunk.len() as u64;
                    if !taking.add(chunk.len() as u64, used, quota) {
                        return Err(over_quota(used));
                    }
                    file.write_all(&chunk).await.map_err(io_error)?;
                }
                file.sync_all().await.map_err(io_error)?;
            }
            Ok(bytes)
        };
        // Dropped at the limit, the transfer closes its agent connection and the unfinished
        // files go with `partial`.
        let transferred = tokio::time::timeout(limit, transfer)
            .await
            .map_err(|_| too_slow(&session.id, limit))
            .and_then(|result| result);
        let bytes = transferred.inspect_err(|_| forget_copy())?;
        partial
            .commit()
            .await
            .map_err(io_error)
            .inspect_err(|_| forget_copy())?;
        let record = SnapshotRecord {
            id: id.to_string(),
            name,
            tenant: session.tenant.clone(),
            runtime: session.runtime.clone(),
            labels: session.labels.clone(),
            session_id: session.id.clone(),
            created_at: rfc3339(OffsetDateTime::now_utc()),
            bytes,
            paths,
            env: session.env.clone(),
            memory: copied.is_some(),
        };
        // Recorded last, after the quota's check against what was kept meanwhile: a record
        // always has its files.
        let recorded = self.snapshots().recording(|| {
            let (count, used) = store.snapshot_usage(tenant)?;
            if count >= quota_count || used.saturating_add(bytes) > quota {
                return Err(over_quota(used));
            }
            Ok(store.insert_snapshot(&record)?)
        });
        drop(taking);
        if let Err(e) = recorded {
            let _ = self.snapshots().files.remove(id).await;
            forget_copy();
            return Err(e);
        }
        Ok(record)
    }

    /// Removes snapshot files a crash left without a record (at start).
    pub(crate) fn remove_unrecorded_snapshots(&self) -> Result<usize, Error> {
        let recorded: HashSet<String> = self
            .sessions()
            .store()
            .snapshots(None)?
            .into_iter()
            .map(|r| r.id)
            .collect();
        self.snapshots()
            .files
            .remove_unrecorded(&recorded)
            .map_err(|e| host_error("cannot clean up the snapshots' directory", e))
    }
}
