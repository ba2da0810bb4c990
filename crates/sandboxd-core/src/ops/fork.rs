//! Opening sessions from a snapshot, and forks: a snapshot opened as N sessions at once.
//!
//! A session opened from a snapshot is a new sandbox of the snapshot's runtime with its
//! labels (the request's added over them), its environment and its files put back by the agent, modes and
//! symlinks kept; processes do not survive a snapshot. It opens whole or not at all.
//!
//! A fork of a session on a gVisor runtime without a network carries its running processes
//! and memory: the backend writes a copy of them, each new sandbox starts from it, and the
//! copy is removed. Any other fork takes a snapshot of the session's files (counted against
//! the quota while it exists), opens the sessions from it and deletes it again. Either is
//! bounded by `max_sessions` and the tenant's quota, and opens all or none.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::ops::snapshots::{host_error, STEP_TIMEOUT};
use crate::state::activity::{error_text, Caller, PendingEntry};
use crate::state::sessions::{new_session_id, Session};
use futures_util::future::join_all;
use sandboxd_agent_proto::{self as proto, UploadError};
use sandboxd_api::{CreateSession, ForkRequest, ForkResult, Isolation, NetworkMode, SessionInfo};
use sandboxd_backend::BackendError;
use sandboxd_store::SnapshotRecord;

/// Sessions one fork opens at most.
pub const MAX_FORK: u32 = 16;

/// What a fork's sessions start from.
enum ForkSource {
    /// A copy of the running sandbox's memory, by the backend's id for it.
    Memory(String),
    /// A snapshot of its files.
    Files(SnapshotRecord),
}

impl Core {
    /// Opens a session from the snapshot `request.snapshot` names.
    pub(crate) async fn open_from_snapshot(
        &self,
        caller: &Caller,
        mut request: CreateSession,
        snapshot_id: &str,
    ) -> Result<SessionInfo, Error> {
        let snapshot = self.snapshot_for(caller, snapshot_id, "open_from_snapshot")?;
        if request
            .runtime
            .as_ref()
            .is_some_and(|r| *r != snapshot.runtime)
        {
            return Err(Error::bad_request(
                "snapshot_runtime",
                format!(
                    "snapshot {snapshot_id} is of runtime \"{}\"; name that runtime or none",
                    snapshot.runtime
                ),
            ));
        }
        request.runtime = Some(snapshot.runtime.clone());
        request.tenant = request.tenant.or_else(|| snapshot.tenant.clone());
        let mut labels = snapshot.labels.clone();
        labels.append(&mut request.labels);
        request.labels = labels;
        let info = self.open_session(caller, request).await?;
        // Checked against the policy when it was set on the session snapshotted.
        self.sessions().set_env(&info.id, snapshot.env.clone());
        if let Err(e) = self.restore_files(caller, &info.id, &snapshot).await {
            let reason = format!("opening it from snapshot {snapshot_id} failed");
            let _ = self.end_session(&info.id, &reason).await;
            return Err(e);
        }
        self.get_session(caller, &info.id).await
    }

    /// Puts the snapshot's archives back into the new session, recording the entry.
    async fn restore_files(
        &self,
        caller: &Caller,
        session_id: &str,
        snapshot: &SnapshotRecord,
    ) -> Result<(), Error> {
        let session = self.running_session(caller, session_id, "snapshot_restore")?;
        let mut entry = PendingEntry::new(
            self.sessions(),
            session_id,
            caller.actor(),
            "snapshot_restore",
            &snapshot.id,
        );
        entry.bytes = Some(snapshot.bytes);
        let result = async {
            for (index, path) in snapshot.paths.iter().enumerate() {
                let file = self
                    .snapshots()
                    .files
                    .open(&snapshot.id, index)
                    .await
                    .map_err(|e| host_error("cannot read the snapshot's files", e))?;
                let agent = self.connect(&session).await?;
                // Its contents were within the quota when it was taken: no more than its size.
                proto::upload_archive(agent, path, snapshot.bytes, file, STEP_TIMEOUT)
                    .await
                    .map_err(|e| match e {
                        UploadError::Proto(e) => agent_error(Operation::WriteFile, e),
                        other => Error::Agent(format!("putting back {path} failed: {other}")),
                    })?;
            }
            Ok(())
        }
        .await;
        entry.end(result.as_ref().err().map(error_text));
        result
    }

    /// Opens `count` independent sessions from the session: with its running processes and
    /// memory where its runtime can (see [`Core::fork_carries_memory`]), else from a snapshot
    /// of its files. All or none.
    pub async fn fork_session(
        &self,
        caller: &Caller,
        session_id: &str,
        request: ForkRequest,
    ) -> Result<ForkResult, Error> {
        if request.count == 0 || request.count > MAX_FORK {
            return Err(Error::bad_request(
                "invalid_request",
                format!("`count` must be 1 to {MAX_FORK}"),
            ));
        }
        let session = self.running_session(caller, session_id, "fork")?;
        self.sessions().check_room(request.count)?;
        let memory = self.fork_carries_memory(&session, request.memory)?;
        let mut entry = PendingEntry::new(
            self.sessions(),
            session_id,
            caller.actor(),
            "fork",
            &format!("{} sessions", request.count),
        );
        let result = async {
            // A fork keeps its source's egress list, never its runtime's wider one.
            let egress = self.session_egress(session_id).map(|rules| rules.to_vec());
            let copy_id = format!("copy-{}", new_session_id());
            let copied = match memory {
                true => match self.backend().copy_memory(&session.sandbox, &copy_id).await {
                    Ok(bytes) => Some(bytes),
                    // Left to the service, a platform that cannot copy forks the files.
                    Err(BackendError::Unsupported(_)) if request.memory.is_none() => None,
                    Err(e) => return Err(e.into()),
                },
                false => None,
            };
            let source = match copied {
                Some(bytes) => {
                    entry.bytes = Some(bytes);
                    entry.target.push_str(" with memory");
                    ForkSource::Memory(copy_id)
                }
                None => {
                    let name = format!("fork of {session_id}");
                    ForkSource::Files(self.take_snapshot(caller, &session, name).await?)
                }
            };
            let memory = matches!(source, ForkSource::Memory(_));
            let opened = join_all((0..request.count).map(|_| async {
                match &source {
                    ForkSource::Memory(copy_id) => {
                        let request = CreateSession {
                            runtime: Some(session.runtime.clone()),
                            tenant: session.tenant.clone(),
                            labels: session.labels.clone(),
                            egress: egress.clone(),
                            ..CreateSession::default()
                        };
                        let info = self
                            .open_session_from(caller, request, Some(copy_id))
                            .await?;
                        self.sessions().set_env(&info.id, session.env.clone());
                        Ok(info)
                    }
                    ForkSource::Files(snapshot) => {
                        let request = CreateSession {
                            snapshot: Some(snapshot.id.clone()),
                            egress: egress.clone(),
                            ..CreateSession::default()
                        };
                        self.open_session(caller, request).await
                    }
                }
            }))
            .await;
            let removed = match &source {
                ForkSource::Memory(copy_id) => {
                    self.backend().remove_memory_copy(copy_id);
                    Ok(())
                }
                ForkSource::Files(snapshot) => self.remove_snapshot(snapshot).await,
            };
            let mut sessions = Vec::new();
            let mut failure = removed.err();
            for result in opened {
                match result {
                    Ok(info) => sessions.push(info),
                    Err(e) => failure = failure.or(Some(e)),
                }
            }
            if let Some(e) = failure {
                let reason = format!("the fork of {session_id} it belonged to failed");
                for info in &sessions {
                    let _ = self.end_session(&info.id, &reason).await;
                }
                return Err(e);
            }
            Ok(ForkResult { sessions, memory })
        }
        .await;
        entry.end(result.as_ref().err().map(error_text));
        result
    }

    /// Whether a fork of `session` carries its processes and memory, as `asked` (left out:
    /// where it can). It can on a gVisor runtime without a network (a copy keeps its
    /// source's addresses, which must not name two sandboxes to the egress proxy) and without
    /// volumes (a copy would need the same mounts).
    fn fork_carries_memory(&self, session: &Session, asked: Option<bool>) -> Result<bool, Error> {
        let config = self.config();
        let runtime = config.runtime(&session.runtime);
        let why_not = match runtime.map(|r| &r.limits) {
            Some(limits) if limits.isolation != Isolation::Gvisor => Some(format!(
                "runtime \"{}\" runs on runc, whose sandboxes' memory cannot be copied (gVisor runtimes' can)",
                session.runtime
            )),
            Some(limits) if limits.network_mode != NetworkMode::None => Some(format!(
                "runtime \"{}\" has a network, and a copy would keep its source's addresses",
                session.runtime
            )),
            Some(_) => {
                let mounts = self.sessions().store().mounts_of_session(&session.id)?;
                (!mounts.is_empty()).then(|| "the session mounts volumes".to_string())
            }
            None => Some(format!(
                "runtime \"{}\" is no longer on the allowlist",
                session.runtime
            )),
        };
        match (asked, why_not) {
            (Some(false), _) => Ok(false),
            (_, None) => Ok(true),
            (None, Some(_)) => Ok(false),
            (Some(true), Some(why)) => Err(Error::bad_request(
                "memory_not_copied",
                format!("a fork of session {} cannot carry its processes: {why}; fork without `memory` to copy its files", session.id),
            )),
        }
    }
}
