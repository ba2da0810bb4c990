//! Directory watches as envd serves them: the WatchDir stream, and watchers that the SDKs
//! poll (CreateWatcher, GetWatcherEvents, RemoveWatcher), each a [`sandboxd_core`] watch
//! whose changes wait here, bounded, until polled.

use crate::connect::StreamSender;
use crate::envd::SandboxCall;
use crate::errors::{Code, E2bError};
use axum::http::StatusCode;
use sandboxd_api::{FileChange, FileChangeKind};
use sandboxd_core::files_meta::Watch;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Watchers kept at once, all sandboxes together.
const MAX_WATCHERS: usize = 1024;
/// Changes a watcher holds until polled; past it, the watcher reports lost changes.
const MAX_QUEUED: usize = 10_000;
const KEEPALIVE: Duration = Duration::from_secs(50);
const LOST_CHANGES: &str =
    "changes were lost (too many, too fast): list the directory again and watch anew";

/// An E2B event for a change under `watched`: its name relative to the watched directory.
/// `None` for an overflow, which has no E2B event.
fn event(watched: &str, change: &FileChange) -> Option<Value> {
    let kind = match change.kind {
        FileChangeKind::Create => "EVENT_TYPE_CREATE",
        FileChangeKind::Write => "EVENT_TYPE_WRITE",
        FileChangeKind::Remove => "EVENT_TYPE_REMOVE",
        FileChangeKind::Rename => "EVENT_TYPE_RENAME",
        FileChangeKind::Chmod => "EVENT_TYPE_CHMOD",
        FileChangeKind::Overflow => return None,
    };
    let prefix = format!("{}/", watched.trim_end_matches('/'));
    let name = change.path.strip_prefix(&prefix).unwrap_or(&change.path);
    Some(json!({"name": name, "type": kind}))
}

fn lost() -> E2bError {
    E2bError::new(
        Code::ResourceExhausted,
        StatusCode::TOO_MANY_REQUESTS,
        LOST_CHANGES,
    )
}

/// WatchDir: the stream of a watch's changes, with keepalives, until the client goes.
pub async fn stream(sender: StreamSender, watched: String, watch: Watch) {
    async fn next_change(
        mut watch: Watch,
    ) -> (Watch, Option<Result<FileChange, sandboxd_core::Error>>) {
        let next = watch.next().await;
        (watch, next)
    }
    if !sender.send(&json!({"start": {}})).await {
        return;
    }
    // The watch moves into the pending wait and back, so a keepalive never cuts a read.
    let mut pending = Box::pin(next_change(watch));
    let mut keepalive =
        tokio::time::interval_at(tokio::time::Instant::now() + KEEPALIVE, KEEPALIVE);
    loop {
        let message = tokio::select! {
            (watch, next) = &mut pending => {
                pending = Box::pin(next_change(watch));
                match next {
                    Some(Ok(change)) => match event(&watched, &change) {
                        Some(event) => json!({"filesystem": event}),
                        None => return sender.end(Some(lost())).await,
                    },
                    Some(Err(e)) => return sender.end(Some(e.into())).await,
                    None => return sender.end(None).await,
                }
            }
            _ = keepalive.tick() => json!({"keepalive": {}}),
            _ = sender.closed() => return,
        };
        if !sender.send(&message).await {
            return;
        }
    }
}

/// A polled watcher: what its watch found since the last poll.
struct Watcher {
    session: String,
    changes: Arc<Mutex<Queue>>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct Queue {
    events: VecDeque<Value>,
    /// Why the watch ended early (lost changes, a broken watch).
    failed: Option<String>,
}

/// Every polled watcher, by id.
#[derive(Clone, Default)]
pub struct Watchers {
    all: Arc<Mutex<HashMap<String, Watcher>>>,
}

impl Watchers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Watcher>> {
        self.all.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps a watch's changes for polling; answers the watcher's id.
    pub fn add(
        &self,
        call: &SandboxCall,
        watched: String,
        mut watch: Watch,
    ) -> Result<String, E2bError> {
        let mut all = self.lock();
        if all.len() >= MAX_WATCHERS {
            // Those whose watch ended (their session closed) go first.
            all.retain(|_, w| !w.task.is_finished());
        }
        if all.len() >= MAX_WATCHERS {
            return Err(E2bError::new(
                Code::ResourceExhausted,
                StatusCode::TOO_MANY_REQUESTS,
                format!("{MAX_WATCHERS} watchers are open; remove some (WatchHandle.stop)"),
            ));
        }
        let changes = Arc::new(Mutex::new(Queue::default()));
        let queue = changes.clone();
        let task = tokio::spawn(async move {
            while let Some(next) = watch.next().await {
                let mut queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
                let failure = match next.map(|change| event(&watched, &change)) {
                    Ok(Some(event)) if queue.events.len() < MAX_QUEUED => {
                        queue.events.push_back(event);
                        continue;
                    }
                    Ok(_) => LOST_CHANGES.to_string(),
                    Err(e) => e.to_string(),
                };
                queue.failed = Some(failure);
                return;
            }
        });
        let id = sandboxd_core::sessions::new_session_id();
        all.insert(
            id.clone(),
            Watcher {
                session: call.id.clone(),
                changes,
                task,
            },
        );
        Ok(id)
    }

    /// The changes since the last poll of a watcher of this sandbox.
    pub fn poll(&self, call: &SandboxCall, id: &str) -> Result<Value, E2bError> {
        let all = self.lock();
        let watcher = all
            .get(id)
            .filter(|w| w.session == call.id)
            .ok_or_else(|| not_found(id))?;
        let mut queue = watcher
            .changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if queue.events.is_empty() {
            if let Some(failed) = queue.failed.take() {
                return Err(E2bError::new(
                    Code::ResourceExhausted,
                    StatusCode::TOO_MANY_REQUESTS,
                    failed,
                ));
            }
        }
        let events: Vec<Value> = queue.events.drain(..).collect();
        Ok(json!({"events": events}))
    }

    pub fn remove(&self, call: &SandboxCall, id: &str) -> Result<(), E2bError> {
        let mut all = self.lock();
        match all.get(id) {
            Some(watcher) if watcher.session == call.id => {
                watcher.task.abort();
                all.remove(id);
                Ok(())
            }
            _ => Err(not_found(id)),
        }
    }
}

fn not_found(id: &str) -> E2bError {
    E2bError::new(
        Code::NotFound,
        StatusCode::NOT_FOUND,
        format!("no watcher {id} in this sandbox"),
    )
}
