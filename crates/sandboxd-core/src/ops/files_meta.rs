//! A session's paths described, directories made, paths moved and directories watched, all by
//! the sandbox's agent inside the sandbox, like the other file operations: the service never
//! resolves a sandbox path. The activity log gets the paths and how it went.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::ops::files::{checked_path, file_entry, required, STEP_TIMEOUT};
use crate::state::activity::{agent_text, Caller, PendingEntry};
use crate::state::watch_table::WatchPlace;
use sandboxd_agent_proto::{self as proto, ChangeKind};
use sandboxd_api::{DirMade, FileChange, FileChangeKind, FileInfo};
use sandboxd_backend::AgentStream;
use std::collections::VecDeque;

/// Directories one watch watches at most: the sandbox's inotify watches are few and shared
/// by its uid; beyond, an `overflow` change names the first one left out.
pub const MAX_WATCHES: u32 = 1024;

impl Core {
    /// Describes what is at `path`; a symlink is described (with its target), not followed.
    pub async fn stat(
        &self,
        caller: &Caller,
        session_id: &str,
        path: Option<String>,
    ) -> Result<FileInfo, Error> {
        let path = checked_path(required(path)?)?;
        let session = self.running_session(caller, session_id, "file_stat")?;
        let mut entry = self.entry(caller, &session, "file_stat", &path);
        let result = async {
            let agent = self.connect(&session).await?;
            proto::stat_path(agent, &path, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::StatFile, e))
        }
        .await;
        Ok(file_info(path, entry.finish(result)?))
    }

    /// Creates a directory, and with `parents` the missing ones above it. A directory already
    /// there is no error: `created` says whether this call made it.
    pub async fn make_dir(
        &self,
        caller: &Caller,
        session_id: &str,
        path: String,
        parents: bool,
    ) -> Result<DirMade, Error> {
        let path = checked_path(path)?;
        let session = self.running_session(caller, session_id, "file_mkdir")?;
        let mut entry = self.entry(caller, &session, "file_mkdir", &path);
        let result = async {
            let agent = self.connect(&session).await?;
            proto::make_dir(agent, &path, parents, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::MakeDir, e))
        }
        .await;
        let created = entry.finish(result)?;
        Ok(DirMade { path, created })
    }

    /// Renames `from` to `to` inside the sandbox; an existing `to` is refused (`exists`)
    /// unless `overwrite`. Answers with what is at `to` now.
    pub async fn move_path(
        &self,
        caller: &Caller,
        session_id: &str,
        from: String,
        to: String,
        overwrite: bool,
    ) -> Result<FileInfo, Error> {
        let from = checked_path(from)?;
        let to = checked_path(to)?;
        let session = self.running_session(caller, session_id, "file_move")?;
        let mut entry = self.entry(caller, &session, "file_move", &format!("{from} -> {to}"));
        let result = async {
            let agent = self.connect(&session).await?;
            proto::move_path(agent, &from, &to, overwrite, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::MovePath, e))
        }
        .await;
        Ok(file_info(to, entry.finish(result)?))
    }

    /// Watches a directory (the working directory by default), and with `recursive` the
    /// directories below it. The changes come until the caller drops the watch, the
    /// directory goes away or the session ends; its activity entry is recorded then.
    pub async fn watch(
        &self,
        caller: &Caller,
        session_id: &str,
        path: Option<String>,
        recursive: bool,
    ) -> Result<Watch, Error> {
        let path = checked_path(path.unwrap_or_else(|| ".".into()))?;
        let session = self.running_session(caller, session_id, "file_watch")?;
        let mut entry = self.entry(caller, &session, "file_watch", &path);
        // Taken before the agent is asked: a refused watch costs none of its connections.
        let place = self
            .watches()
            .take(
                &self.config().policy,
                &session.id,
                session.tenant.as_deref(),
            )
            .map_err(|e| entry.fail(e))?;
        let started = async {
            let agent = self.connect(&session).await?;
            proto::watch_dir(agent, &path, recursive, MAX_WATCHES, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::WatchDir, e))
        }
        .await;
        let watch = started.map_err(|e| entry.fail(e))?;
        Ok(Watch {
            path,
            watch,
            entry,
            queued: VecDeque::new(),
            _place: place,
        })
    }
}

/// A directory being watched; see [`Core::watch`]. Each change counts as activity on the
/// session, so a watched session does not idle out while things change in it.
pub struct Watch {
    path: String,
    watch: proto::DirWatch<AgentStream>,
    entry: PendingEntry,
    queued: VecDeque<FileChange>,
    /// Its place under `policy.max_watches_per_session` and `max_watches_per_tenant`.
    _place: WatchPlace,
}

impl Watch {
    /// The directory watched, absolute: each change's path is below it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The next change, or `None` once the directory is gone or the session ended.
    pub async fn next(&mut self) -> Option<Result<FileChange, Error>> {
        loop {
            if let Some(change) = self.queued.pop_front() {
                return Some(Ok(change));
            }
            match self.watch.next_changes().await {
                Ok(Some(changes)) => {
                    self.entry.touch();
                    self.queued.extend(changes.into_iter().map(file_change));
                }
                Ok(None) => {
                    self.entry.end(None);
                    return None;
                }
                // The sandbox closing (the session ended) breaks the connection: the end.
                Err(proto::ProtoError::Closed) => {
                    self.entry.end(None);
                    return None;
                }
                Err(e) => {
                    let message = agent_text(&format!("the watch broke off: {e}"));
                    self.entry.end(Some(message.clone()));
                    return Some(Err(Error::Agent(message)));
                }
            }
        }
    }
}

fn file_info(path: String, stat: proto::FileStat) -> FileInfo {
    let entry = file_entry(stat.entry);
    FileInfo {
        path,
        name: entry.name,
        kind: entry.kind,
        size: entry.size,
        mode: entry.mode,
        modified: entry.modified,
        symlink_target: stat.symlink_target,
        target_type: entry.target_type,
        target_path: stat.resolved_target,
    }
}

fn file_change(change: proto::FileChange) -> FileChange {
    FileChange {
        kind: match change.kind {
            ChangeKind::Create => FileChangeKind::Create,
            ChangeKind::Write => FileChangeKind::Write,
            ChangeKind::Remove => FileChangeKind::Remove,
            ChangeKind::Rename => FileChangeKind::Rename,
            ChangeKind::Chmod => FileChangeKind::Chmod,
            ChangeKind::Overflow => FileChangeKind::Overflow,
        },
        path: change.path,
    }
}
