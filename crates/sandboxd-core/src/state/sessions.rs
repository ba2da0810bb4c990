//! Open sessions, in memory for speed and written through to the state store, with
//! `max_sessions` enforced honestly: a slot is reserved before the sandbox starts and released
//! if it fails. Ended sessions live on in the store, so they can still be read and audited.

use super::lifecycle::{Lifecycle, LifecycleEvent};
use crate::error::Error;
use rand::Rng;
use sandboxd_api::{LifecycleKind, PausedMemory, Remedy, SessionChange, SessionInfo, SessionState};
use sandboxd_backend::{Sandbox, Usage};
use sandboxd_store::{SessionRecord, Store};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};
use tokio::sync::{broadcast, mpsc};

/// Activity times are written to the store at most this often per session.
const TOUCH_PERSIST_INTERVAL: Duration = Duration::seconds(1);
/// Changes kept for a slow follower of [`Sessions::changes`]; one further behind is told it
/// lagged and reads the table again.
const CHANGES_KEPT: usize = 256;

#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub runtime: String,
    pub tenant: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub created_at: OffsetDateTime,
    pub last_activity_at: OffsetDateTime,
    /// The activity time last written to the store.
    persisted_activity_at: OffsetDateTime,
    pub sandbox: Sandbox,
    pub ended: Option<(OffsetDateTime, String)>,
    /// Its own idle expiry, shorter than `policy.idle_timeout_secs` (the E2B face's timeout);
    /// kept in memory only, so after a restart the policy's applies again.
    pub idle_timeout_secs: Option<u64>,
    /// Environment every command of the session starts with, under the command's own (the
    /// E2B face's `envVars`); in memory only, like `idle_timeout_secs`.
    pub env: BTreeMap<String, String>,
    /// Its own idle expiry pauses it instead of closing it (the E2B face's `autoPause`); in
    /// memory only, like `idle_timeout_secs`.
    pub pause_at_own_timeout: bool,
    /// When it was paused, while it is.
    pub paused_at: Option<OffsetDateTime>,
    /// Where its memory is while paused; learned again from the backend after a restart.
    pub paused_memory: Option<PausedMemory>,
    /// The bytes of its image while it is paused to disk (0 otherwise), counted against its
    /// tenant's `policy.pause_quota_bytes`; learned again from the backend after a restart.
    pub paused_image_bytes: u64,
    /// Held while the session is paused or resumed, so the two never cross; shared by every
    /// copy of the session.
    pub(crate) transition: Arc<tokio::sync::Mutex<()>>,
}

impl Session {
    pub fn new(
        id: String,
        runtime: String,
        tenant: Option<String>,
        labels: BTreeMap<String, String>,
        sandbox: Sandbox,
    ) -> Session {
        let now = OffsetDateTime::now_utc();
        Session {
            id,
            runtime,
            tenant,
            labels,
            created_at: now,
            last_activity_at: now,
            persisted_activity_at: now,
            sandbox,
            ended: None,
            idle_timeout_secs: None,
            env: BTreeMap::new(),
            pause_at_own_timeout: false,
            paused_at: None,
            paused_memory: None,
            paused_image_bytes: 0,
            transition: Arc::default(),
        }
    }

    pub fn info(&self, usage: Usage) -> SessionInfo {
        let idle_until = self
            .ended
            .as_ref()
            .map_or_else(OffsetDateTime::now_utc, |(at, _)| *at);
        SessionInfo {
            id: self.id.clone(),
            runtime: self.runtime.clone(),
            tenant: self.tenant.clone(),
            labels: self.labels.clone(),
            state: self.state(),
            created_at: rfc3339(self.created_at),
            last_activity_at: rfc3339(self.last_activity_at),
            idle_secs: self.idle(idle_until).whole_seconds().max(0) as u64,
            memory_bytes: usage.memory_bytes,
            memory_limit_bytes: usage.memory_limit_bytes,
            process_count: usage.processes,
            ended_at: self.ended.as_ref().map(|(at, _)| rfc3339(*at)),
            end_reason: self.ended.as_ref().map(|(_, why)| why.clone()),
            idle_timeout_secs: self.idle_timeout_secs,
            paused_at: self.paused_at.map(rfc3339),
            paused_memory: self.paused_at.and(self.paused_memory),
        }
    }

    pub fn state(&self) -> SessionState {
        match (&self.ended, self.paused_at) {
            (Some(_), _) => SessionState::Ended,
            (None, Some(_)) => SessionState::Paused,
            (None, None) => SessionState::Running,
        }
    }

    /// Open (not ended), paused or not.
    pub fn is_running(&self) -> bool {
        self.ended.is_none()
    }

    pub fn idle(&self, now: OffsetDateTime) -> Duration {
        now - self.last_activity_at
    }

    pub fn age(&self, now: OffsetDateTime) -> Duration {
        now - self.created_at
    }

    fn record(&self) -> SessionRecord {
        SessionRecord {
            id: self.id.clone(),
            runtime: self.runtime.clone(),
            tenant: self.tenant.clone(),
            labels: self.labels.clone(),
            backend_id: self.sandbox.backend_id.clone(),
            created_at: rfc3339(self.created_at),
            last_activity_at: rfc3339(self.last_activity_at),
            ended_at: self.ended.as_ref().map(|(at, _)| rfc3339(*at)),
            end_reason: self.ended.as_ref().map(|(_, why)| why.clone()),
            paused_at: self.paused_at.map(rfc3339),
            paused_memory: self
                .paused_at
                .and(self.paused_memory)
                .map(|memory| memory_word(memory).to_string()),
        }
    }

    fn from_record(record: SessionRecord) -> Session {
        let parse = |text: &str| {
            OffsetDateTime::parse(text, &Rfc3339).unwrap_or(OffsetDateTime::UNIX_EPOCH)
        };
        let last_activity_at = parse(&record.last_activity_at);
        Session {
            sandbox: Sandbox {
                session_id: record.id.clone(),
                backend_id: record.backend_id,
            },
            id: record.id,
            runtime: record.runtime,
            tenant: record.tenant,
            labels: record.labels,
            created_at: parse(&record.created_at),
            last_activity_at,
            persisted_activity_at: last_activity_at,
            ended: record
                .ended_at
                .map(|at| (parse(&at), record.end_reason.unwrap_or_default())),
            idle_timeout_secs: None,
            env: BTreeMap::new(),
            pause_at_own_timeout: false,
            paused_at: record.paused_at.as_deref().map(parse),
            paused_memory: record.paused_memory.as_deref().map(|word| match word {
                "disk" => PausedMemory::Disk,
                _ => PausedMemory::Ram,
            }),
            paused_image_bytes: 0,
            transition: Arc::default(),
        }
    }
}

/// How a message names a tenant: `tenant "NAME"`, or the untenanted `things` (which count as
/// one tenant).
pub(crate) fn tenant_name(tenant: Option<&str>, things: &str) -> String {
    tenant.map_or_else(
        || format!("the untenanted {things}"),
        |t| format!("tenant \"{t}\""),
    )
}

/// How the store keeps a [`PausedMemory`].
fn memory_word(memory: PausedMemory) -> &'static str {
    match memory {
        PausedMemory::Ram => "ram",
        PausedMemory::Disk => "disk",
    }
}

/// The answer for a session id that does not exist (or is not the caller's to see).
pub fn not_found(id: &str) -> Error {
    Error::NotFound(format!("no session with id \"{id}\"")).with_remedy(Remedy::ListSessions)
}

/// A count of sessions as the tables keep it: `max_sessions` (a u32) bounds every count, so
/// the saturation is never reached.
pub(crate) fn session_count(sessions: usize) -> u32 {
    u32::try_from(sessions).unwrap_or(u32::MAX)
}

pub fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap_or_default()
}

pub fn new_session_id() -> String {
    let bytes: [u8; 12] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Default)]
struct Table {
    running: HashMap<String, Session>,
    /// Slots taken by sessions whose sandbox is still starting.
    starting: u32,
    /// Per tenant, its sessions that are still starting: counted against its quota with the
    /// running ones, so a burst of creates cannot pass the quota check together.
    starting_by_tenant: HashMap<String, u32>,
}

/// A place under a tenant's quota, held while its session opens; dropping it frees it.
pub struct TenantSlot {
    table: Arc<Mutex<Table>>,
    tenant: String,
}

impl Drop for TenantSlot {
    fn drop(&mut self) {
        let mut table = self.table.lock().expect("session table lock");
        if let Some(starting) = table.starting_by_tenant.get_mut(&self.tenant) {
            *starting -= 1;
            if *starting == 0 {
                table.starting_by_tenant.remove(&self.tenant);
            }
        }
    }
}

/// A slot under `max_sessions`, held while a sandbox starts; dropping it releases the slot.
pub struct Reservation {
    table: Arc<Mutex<Table>>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.table.lock().expect("session table lock").starting -= 1;
    }
}

#[derive(Clone)]
pub struct Sessions {
    table: Arc<Mutex<Table>>,
    store: Arc<Store>,
    max_sessions: u32,
    changes: broadcast::Sender<SessionChange>,
    lifecycle: Lifecycle,
}

impl Sessions {
    pub fn new(store: Arc<Store>, max_sessions: u32) -> Sessions {
        Sessions {
            table: Arc::default(),
            store,
            max_sessions,
            changes: broadcast::channel(CHANGES_KEPT).0,
            lifecycle: Lifecycle::default(),
        }
    }

    /// Sessions opened and ended from now on.
    pub fn changes(&self) -> broadcast::Receiver<SessionChange> {
        self.changes.subscribe()
    }

    /// Every session opened, paused, resumed and ended from now on, in order, `capacity` of
    /// them waiting at most (past it they are given up, never waited for); only the first
    /// caller gets them.
    pub fn lifecycle(&self, capacity: usize) -> Option<mpsc::Receiver<LifecycleEvent>> {
        self.lifecycle.follow(capacity)
    }

    fn announce(&self, session: &Session, kind: LifecycleKind) {
        self.lifecycle.tell(|| LifecycleEvent {
            kind,
            session_id: session.id.clone(),
            runtime: session.runtime.clone(),
            tenant: session.tenant.clone(),
            labels: session.labels.clone(),
            created_at: session.created_at,
            at: OffsetDateTime::now_utc(),
            reason: session.ended.as_ref().map(|(_, why)| why.clone()),
        });
        let change = SessionChange {
            id: session.id.clone(),
            state: session.state(),
            tenant: session.tenant.clone(),
            end_reason: session.ended.as_ref().map(|(_, reason)| reason.clone()),
        };
        // Nobody following is no error.
        let _ = self.changes.send(change);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().expect("session table lock")
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn reserve(&self) -> Result<Reservation, Error> {
        let mut table = self.lock();
        let taken = session_count(table.running.len()) + table.starting;
        if taken >= self.max_sessions {
            return Err(Error::ServiceFull(format!(
                "the service is full: {taken} of {} sessions are open",
                self.max_sessions
            ))
            .with_remedy(Remedy::CloseSession));
        }
        table.starting += 1;
        Ok(Reservation {
            table: self.table.clone(),
        })
    }

    /// Fails unless `count` more sessions fit under `max_sessions` now (a check ahead of
    /// opening several; each still takes its own slot).
    pub fn check_room(&self, count: u32) -> Result<(), Error> {
        let table = self.lock();
        let taken = session_count(table.running.len()) + table.starting;
        if taken + count > self.max_sessions {
            return Err(Error::ServiceFull(format!(
                "the service has room for {} more sessions ({taken} of {} are open), not {count}",
                self.max_sessions.saturating_sub(taken),
                self.max_sessions
            )));
        }
        Ok(())
    }

    /// A place under the tenant's quota of `max_sessions`, counting its open sessions and
    /// those still starting, taken in the same step as the check.
    pub fn admit_tenant(&self, tenant: &str, max_sessions: u32) -> Result<TenantSlot, Error> {
        let mut table = self.lock();
        let open = session_count(
            table
                .running
                .values()
                .filter(|s| s.tenant.as_deref() == Some(tenant))
                .count(),
        );
        let starting = table.starting_by_tenant.get(tenant).copied().unwrap_or(0);
        if open + starting >= max_sessions {
            return Err(Error::LimitReached {
                code: "tenant_quota",
                message: format!(
                    "tenant \"{tenant}\" may have {max_sessions} sessions open at once and has that many"
                ),
            }
            .with_remedy(Remedy::CloseSession));
        }
        *table
            .starting_by_tenant
            .entry(tenant.to_string())
            .or_default() += 1;
        Ok(TenantSlot {
            table: self.table.clone(),
            tenant: tenant.to_string(),
        })
    }

    /// Turns a reservation (and the tenant's slot) into an open session, recorded in the
    /// store first.
    pub fn insert(
        &self,
        reservation: Reservation,
        tenant_slot: Option<TenantSlot>,
        session: Session,
    ) -> Result<(), Error> {
        self.store.insert_session(&session.record())?;
        self.announce(&session, LifecycleKind::Created);
        self.lock().running.insert(session.id.clone(), session);
        drop(reservation);
        drop(tenant_slot);
        Ok(())
    }

    /// Takes back sessions that were open when the service last stopped.
    pub fn restore(&self, session: Session) {
        self.lock().running.insert(session.id.clone(), session);
    }

    /// Open sessions as the store knows them (used at start, before any is restored).
    pub fn stored_open(&self) -> Result<Vec<Session>, Error> {
        Ok(self
            .store
            .open_sessions()?
            .into_iter()
            .map(Session::from_record)
            .collect())
    }

    pub fn get(&self, id: &str) -> Result<Session, Error> {
        if let Some(session) = self.lock().running.get(id) {
            return Ok(session.clone());
        }
        self.store
            .session(id)?
            .map(Session::from_record)
            .ok_or_else(|| not_found(id))
    }

    /// The tenant of an open session (`Some(None)` for the administrator's), from memory only.
    pub fn open_tenant(&self, id: &str) -> Option<Option<String>> {
        self.lock()
            .running
            .get(id)
            .map(|session| session.tenant.clone())
    }

    /// Open sessions, oldest first.
    pub fn running(&self) -> Vec<Session> {
        self.running_where(|_| true)
    }

    /// The open sessions `wanted` picks, oldest first.
    pub fn running_where(&self, mut wanted: impl FnMut(&Session) -> bool) -> Vec<Session> {
        self.running_picked(|s| wanted(s).then(|| s.clone()))
    }

    /// What `pick` makes of each open session it picks, oldest first. Only those are copied:
    /// a copy of thousands, taken under the lock every second, held up the requests waiting
    /// for it.
    pub fn running_picked<T>(&self, mut pick: impl FnMut(&Session) -> Option<T>) -> Vec<T> {
        let mut picked: Vec<(OffsetDateTime, T)> = self
            .lock()
            .running
            .values()
            .filter_map(|s| Some((s.created_at, pick(s)?)))
            .collect();
        picked.sort_by_key(|(created_at, _)| *created_at);
        picked.into_iter().map(|(_, t)| t).collect()
    }

    /// The most recently ended sessions, newest first.
    pub fn ended(&self, limit: u32) -> Result<Vec<Session>, Error> {
        Ok(self
            .store
            .ended_sessions(limit)?
            .into_iter()
            .map(Session::from_record)
            .collect())
    }

    pub fn touch(&self, id: &str) {
        let now = OffsetDateTime::now_utc();
        let persist = {
            let mut table = self.lock();
            let Some(session) = table.running.get_mut(id) else {
                return;
            };
            session.last_activity_at = now;
            let due = now - session.persisted_activity_at >= TOUCH_PERSIST_INTERVAL;
            if due {
                session.persisted_activity_at = now;
            }
            due
        };
        if persist {
            if let Err(e) = self.store.touch_session(id, &rfc3339(now)) {
                tracing::warn!(session = id, error = %e, "cannot record activity time");
            }
        }
    }

    /// Gives a running session its own idle expiry, counted from now (the session is touched).
    pub fn set_idle_timeout(&self, id: &str, secs: u64) -> Option<Session> {
        let updated = {
            let mut table = self.lock();
            let session = table.running.get_mut(id)?;
            session.idle_timeout_secs = Some(secs);
            session.clone()
        };
        self.touch(id);
        Some(updated)
    }

    /// Sets the environment a running session's commands start with.
    pub fn set_env(&self, id: &str, env: BTreeMap<String, String>) -> Option<()> {
        self.lock().running.get_mut(id)?.env = env;
        Some(())
    }

    /// Whether a running session's own idle expiry pauses it rather than closing it.
    pub fn set_pause_at_own_timeout(&self, id: &str, pause: bool) -> Option<()> {
        self.lock().running.get_mut(id)?.pause_at_own_timeout = pause;
        Some(())
    }

    /// Records that an open session was paused at `at` with its memory where `memory` says,
    /// or (`None`) that it runs again. A session already so is left as it is (taking
    /// thousands back at start writes nothing).
    pub fn set_paused(&self, id: &str, paused: Option<(OffsetDateTime, PausedMemory)>) {
        let at = paused.map(|(at, _)| at);
        let memory = paused.map(|(_, memory)| memory);
        let changed = {
            let mut table = self.lock();
            let Some(session) = table.running.get_mut(id) else {
                return;
            };
            let moved = session.paused_memory != memory && session.paused_at.is_some();
            session.paused_memory = memory;
            if memory != Some(PausedMemory::Disk) {
                session.paused_image_bytes = 0;
            }
            if session.paused_at.is_some() == at.is_some() {
                // Only where its memory is may have changed (learned again after a restart).
                moved.then_some(None)
            } else {
                session.paused_at = at;
                Some(Some(session.clone()))
            }
        };
        let Some(changed) = changed else {
            return;
        };
        if let Some(changed) = changed {
            let kind = if at.is_some() {
                LifecycleKind::Paused
            } else {
                LifecycleKind::Resumed
            };
            self.announce(&changed, kind);
        }
        let stored = paused.map(|(at, memory)| (rfc3339(at), memory_word(memory)));
        let stored = stored.as_ref().map(|(at, memory)| (at.as_str(), *memory));
        if let Err(e) = self.store.set_paused(id, stored) {
            tracing::error!(session = id, error = %e, "cannot record a pause or resume");
        }
    }

    /// Counts an image of `bytes` for the open session `id`, paused to disk, unless its
    /// tenant's sessions paused to disk would then hold more than `quota` together: then
    /// nothing changes and the error is what the others hold. Checked and counted at once,
    /// so pauses of one tenant side by side never pass the quota together.
    pub fn hold_image(&self, id: &str, bytes: u64, quota: Option<u64>) -> Result<(), u64> {
        let mut table = self.lock();
        let tenant = table.running.get(id).map(|s| s.tenant.clone());
        let Some(tenant) = tenant else {
            return Ok(());
        };
        let held: u64 = table
            .running
            .values()
            .filter(|s| s.id != id && s.tenant == tenant)
            .map(|s| s.paused_image_bytes)
            .sum();
        if quota.is_some_and(|quota| held.saturating_add(bytes) > quota) {
            return Err(held);
        }
        if let Some(session) = table.running.get_mut(id) {
            session.paused_image_bytes = bytes;
        }
        Ok(())
    }

    /// Counts an image of `bytes` that is on disk already for the open session `id`, whatever
    /// the quota says (taken back after a restart, or one that could not be restored).
    pub fn count_image(&self, id: &str, bytes: u64) {
        if let Some(session) = self.lock().running.get_mut(id) {
            session.paused_image_bytes = bytes;
        }
    }

    /// Whether a session is open (running or paused).
    pub fn is_open(&self, id: &str) -> bool {
        self.lock().running.contains_key(id)
    }

    /// Whether an open session is paused now.
    pub fn is_paused(&self, id: &str) -> bool {
        self.lock()
            .running
            .get(id)
            .is_some_and(|s| s.paused_at.is_some())
    }

    /// Marks a session ended, keeping its record; returns it if this call ended it.
    pub fn end(&self, id: &str, reason: &str) -> Option<Session> {
        let mut session = self.lock().running.remove(id)?;
        let now = OffsetDateTime::now_utc();
        session.ended = Some((now, reason.to_string()));
        let last_activity_at = rfc3339(session.last_activity_at);
        if let Err(e) = self
            .store
            .end_session(id, &last_activity_at, &rfc3339(now), reason)
        {
            tracing::error!(session = id, error = %e, "cannot record that the session ended");
        }
        self.announce(&session, LifecycleKind::Killed);
        Some(session)
    }
}
