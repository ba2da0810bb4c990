//! Directory watches as envd serves them: the WatchDir stream, and watchers that the SDKs
//! poll (CreateWatcher, GetWatcherEvents, RemoveWatcher), each a [`sandboxd_core`] watch
//! whose changes wait here, bounded in bytes (see [`crate::watch_limits`]), until polled. A
//! polled watcher lives until it is removed or its sandbox ends, whichever comes first.

use crate::call::SandboxCall;
use crate::connect::StreamSender;
use crate::errors::{Code, E2bError};
use crate::watch_limits::{WatchLimits, WatchSlot};
use axum::http::StatusCode;
use futures_util::StreamExt;
use sandboxd_api::{FileChange, FileChangeKind, SessionState};
use sandboxd_core::files_meta::Watch;
use sandboxd_core::{Caller, Core, Interface, Principal};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Once, PoisonError, Weak};
use std::time::Duration;

const KEEPALIVE: Duration = Duration::from_secs(50);
/// Why changes were lost when the sandbox's agent dropped some.
const TOO_FAST: &str = "too many, too fast";
/// What a queued change costs beyond its name: its place in the queue and its allocation.
const CHANGE_OVERHEAD: usize = 64;

/// A change as E2B names it: its kind, and its path relative to the watched directory.
struct Change {
    kind: &'static str,
    name: String,
}

impl Change {
    /// The change to `watched` or below it; `None` for an overflow, which has no E2B event.
    fn of(watched: &str, change: &FileChange) -> Option<Change> {
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
        Some(Change {
            kind,
            name: name.to_string(),
        })
    }

    fn event(&self) -> Value {
        json!({"name": self.name, "type": self.kind})
    }

    /// What it costs held in a queue.
    fn bytes(&self) -> usize {
        self.name.len() + CHANGE_OVERHEAD
    }
}

fn lost_changes(why: &str) -> String {
    format!("changes were lost ({why}): list the directory again and watch anew")
}

fn lost(message: String) -> E2bError {
    E2bError::new(
        Code::ResourceExhausted,
        StatusCode::TOO_MANY_REQUESTS,
        message,
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
                    Some(Ok(change)) => match Change::of(&watched, &change) {
                        Some(change) => json!({"filesystem": change.event()}),
                        None => return sender.end(Some(lost(lost_changes(TOO_FAST)))).await,
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
    /// Taken only to wait for its end (see [`drop_ended`]).
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Watcher {
    /// The task ends with the watcher, and with it the watch and the last hold on the queue.
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

struct Queue {
    changes: VecDeque<Change>,
    /// Why the watch ended early (lost changes, a broken watch).
    failed: Option<String>,
    /// The watcher's place under the limits, charged with the bytes of `changes`.
    slot: WatchSlot,
}

impl Queue {
    /// Queues a change, or says why it cannot be.
    fn push(&mut self, change: Change) -> Result<(), String> {
        self.slot
            .charge(change.bytes())
            .map_err(|why| lost_changes(&format!("{why}; poll more often")))?;
        self.changes.push_back(change);
        Ok(())
    }

    /// The changes queued, as E2B events; their bytes are given back.
    fn drain(&mut self) -> Vec<Value> {
        let events = self.changes.drain(..).map(|c| c.event()).collect();
        self.changes.shrink_to_fit();
        self.slot.refund_all();
        events
    }
}

type ById = HashMap<String, Watcher>;

/// Every polled watcher, by id, and the limits all watches share.
#[derive(Clone)]
pub struct Watchers {
    core: Core,
    all: Arc<Mutex<ById>>,
    limits: WatchLimits,
    following_ends: Arc<Once>,
}

impl Watchers {
    pub fn new(core: Core) -> Watchers {
        Watchers {
            limits: WatchLimits::new(core.config().e2b.watcher_bytes),
            core,
            all: Arc::default(),
            following_ends: Arc::new(Once::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ById> {
        lock(&self.all)
    }

    /// The byte account of a new watcher of the caller's sandbox.
    pub fn slot(&self, call: &SandboxCall) -> WatchSlot {
        self.follow_session_ends();
        self.limits.open(call.caller.principal.tenant())
    }

    /// Drops the watchers of each session as it ends, from the first watcher on (a task
    /// needs the runtime, which a router being built may not be in yet).
    fn follow_session_ends(&self) {
        self.following_ends.call_once(|| {
            let admin = Caller::new(Principal::Admin, Interface::E2b);
            let changes = self.core.session_changes(&admin);
            tokio::spawn(drop_ended(
                self.core.clone(),
                Arc::downgrade(&self.all),
                changes,
            ));
        });
    }

    /// Keeps a watch's changes for polling; answers the watcher's id.
    pub fn add(
        &self,
        call: &SandboxCall,
        watched: String,
        mut watch: Watch,
        slot: WatchSlot,
    ) -> Result<String, E2bError> {
        let changes = Arc::new(Mutex::new(Queue {
            changes: VecDeque::new(),
            failed: None,
            slot,
        }));
        let queue = changes.clone();
        let task = tokio::spawn(async move {
            while let Some(next) = watch.next().await {
                let mut queue = lock(&queue);
                let failure = match next.map(|change| Change::of(&watched, &change)) {
                    Ok(Some(change)) => match queue.push(change) {
                        Ok(()) => continue,
                        Err(failure) => failure,
                    },
                    Ok(None) => lost_changes(TOO_FAST),
                    Err(e) => e.to_string(),
                };
                queue.failed = Some(failure);
                return;
            }
        });
        let id = sandboxd_core::sessions::new_session_id();
        let watcher = Watcher {
            session: call.id.clone(),
            changes,
            task: Some(task),
        };
        self.lock().insert(id.clone(), watcher);
        // Ended while its watch started: the end may have been followed before the insert.
        if !self.core.is_session_open(&call.id) {
            self.lock().remove(&id);
            return Err(E2bError::sandbox_not_found(&call.id));
        }
        Ok(id)
    }

    /// The changes since the last poll of a watcher of this sandbox.
    pub fn poll(&self, call: &SandboxCall, id: &str) -> Result<Value, E2bError> {
        let all = self.lock();
        let watcher = all
            .get(id)
            .filter(|w| w.session == call.id)
            .ok_or_else(|| not_found(id))?;
        let mut queue = lock(&watcher.changes);
        if queue.changes.is_empty() {
            if let Some(failed) = queue.failed.take() {
                return Err(lost(failed));
            }
        }
        Ok(json!({"events": queue.drain()}))
    }

    pub fn remove(&self, call: &SandboxCall, id: &str) -> Result<(), E2bError> {
        let mut all = self.lock();
        match all.get(id) {
            Some(watcher) if watcher.session == call.id => {
                all.remove(id);
                Ok(())
            }
            _ => Err(not_found(id)),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Drops the watchers of every session that ends, until the watchers are gone; after missed
/// changes (too many at once), those of every session no longer open. Once their tasks are
/// over (the queues freed), the memory goes back to the system.
async fn drop_ended(
    core: Core,
    watchers: Weak<Mutex<ById>>,
    changes: impl futures_util::Stream<Item = Option<sandboxd_api::SessionChange>>,
) {
    let mut changes = std::pin::pin!(changes);
    while let Some(change) = changes.next().await {
        let Some(all) = watchers.upgrade() else {
            return;
        };
        // Dropped outside the lock: each aborts its task.
        let ended: Vec<Watcher> = {
            let mut all = lock(&all);
            let gone: Vec<String> = all
                .iter()
                .filter(|(_, w)| match &change {
                    Some(change) => change.state == SessionState::Ended && w.session == change.id,
                    None => !core.is_session_open(&w.session),
                })
                .map(|(id, _)| id.clone())
                .collect();
            gone.iter().filter_map(|id| all.remove(id)).collect()
        };
        if ended.is_empty() {
            continue;
        }
        let tasks: Vec<_> = ended
            .into_iter()
            .filter_map(|mut w| w.task.take())
            .collect();
        for task in tasks {
            task.abort();
            // Cancelled, or over already: either way, done with its queue.
            let _ = task.await;
        }
        let _ = tokio::task::spawn_blocking(release_freed_memory).await;
    }
}

/// Gives the memory the allocator holds free back to the system. glibc's keeps what was
/// freed in its arenas: a flood's queues, freed, stayed in the service's resident memory
/// (about 8 MB of 11 after a flood of 8 watchers).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only hands the free pages of glibc's arenas back to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn not_found(id: &str) -> E2bError {
    E2bError::new(
        Code::NotFound,
        StatusCode::NOT_FOUND,
        format!("no watcher {id} in this sandbox"),
    )
}
