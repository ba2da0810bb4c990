//! Open sessions and the records of ended ones, with `max_sessions` enforced honestly: a slot
//! is reserved before the sandbox starts and released if it fails.

use crate::error::ApiError;
use rand::Rng;
use sandboxd_api::{SessionInfo, SessionState};
use sandboxd_backend::{Backend, Sandbox, Usage};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// How many ended sessions' records are kept in memory for `GET /v1/sessions/{id}`.
const ENDED_RECORDS_KEPT: usize = 1000;

#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub runtime: String,
    pub tenant: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub created_at: OffsetDateTime,
    pub last_activity: Instant,
    pub last_activity_at: OffsetDateTime,
    pub sandbox: Sandbox,
    pub ended: Option<(OffsetDateTime, String)>,
}

impl Session {
    pub fn info(&self, usage: Usage) -> SessionInfo {
        SessionInfo {
            id: self.id.clone(),
            runtime: self.runtime.clone(),
            tenant: self.tenant.clone(),
            labels: self.labels.clone(),
            state: if self.ended.is_some() {
                SessionState::Ended
            } else {
                SessionState::Running
            },
            created_at: rfc3339(self.created_at),
            last_activity_at: rfc3339(self.last_activity_at),
            idle_secs: self.last_activity.elapsed().as_secs(),
            memory_bytes: usage.memory_bytes,
            process_count: usage.processes,
            ended_at: self.ended.as_ref().map(|(at, _)| rfc3339(*at)),
            end_reason: self.ended.as_ref().map(|(_, why)| why.clone()),
        }
    }

    pub fn is_running(&self) -> bool {
        self.ended.is_none()
    }
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
    sessions: HashMap<String, Session>,
    /// Slots taken by sessions whose sandbox is still starting.
    starting: u32,
    ended_order: VecDeque<String>,
}

impl Table {
    fn running(&self) -> u32 {
        self.sessions.values().filter(|s| s.is_running()).count() as u32
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
    max_sessions: u32,
}

impl Sessions {
    pub fn new(max_sessions: u32) -> Sessions {
        Sessions {
            table: Arc::default(),
            max_sessions,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().expect("session table lock")
    }

    pub fn reserve(&self) -> Result<Reservation, ApiError> {
        let mut table = self.lock();
        let taken = table.running() + table.starting;
        if taken >= self.max_sessions {
            return Err(ApiError::ServiceFull(format!(
                "the service is full: {taken} of {} sessions are open; close one (DELETE /v1/sessions/{{id}}) or try again later",
                self.max_sessions
            )));
        }
        table.starting += 1;
        Ok(Reservation {
            table: self.table.clone(),
        })
    }

    /// Turns a reservation into an open session.
    pub fn insert(&self, reservation: Reservation, session: Session) {
        let mut table = self.lock();
        table.sessions.insert(session.id.clone(), session);
        drop(table);
        drop(reservation);
    }

    pub fn get(&self, id: &str) -> Result<Session, ApiError> {
        self.lock().sessions.get(id).cloned().ok_or_else(|| {
            ApiError::NotFound(format!(
                "no session with id \"{id}\"; list them with GET /v1/sessions"
            ))
        })
    }

    /// The session, if it is still open.
    pub fn get_running(&self, id: &str) -> Result<Session, ApiError> {
        let session = self.get(id)?;
        match &session.ended {
            None => Ok(session),
            Some((_, why)) => Err(ApiError::SessionEnded(format!(
                "session {id} has ended ({why}); open a new one with POST /v1/sessions"
            ))),
        }
    }

    pub fn list(&self) -> Vec<Session> {
        let mut sessions: Vec<Session> = self.lock().sessions.values().cloned().collect();
        sessions.sort_by_key(|s| s.created_at);
        sessions
    }

    pub fn running(&self) -> Vec<Session> {
        self.list()
            .into_iter()
            .filter(Session::is_running)
            .collect()
    }

    pub fn touch(&self, id: &str) {
        if let Some(session) = self.lock().sessions.get_mut(id) {
            session.last_activity = Instant::now();
            session.last_activity_at = OffsetDateTime::now_utc();
        }
    }

    /// Marks a session ended, keeping its record; returns it if this call ended it.
    pub fn end(&self, id: &str, reason: &str) -> Option<Session> {
        let mut table = self.lock();
        let session = table.sessions.get_mut(id).filter(|s| s.is_running())?;
        session.ended = Some((OffsetDateTime::now_utc(), reason.to_string()));
        let ended = session.clone();
        table.ended_order.push_back(id.to_string());
        while table.ended_order.len() > ENDED_RECORDS_KEPT {
            if let Some(oldest) = table.ended_order.pop_front() {
                table.sessions.remove(&oldest);
            }
        }
        Some(ended)
    }

    /// Ends a session and removes its sandbox.
    pub async fn close(
        &self,
        backend: &dyn Backend,
        id: &str,
        reason: &str,
    ) -> Result<Session, ApiError> {
        match self.end(id, reason) {
            Some(session) => {
                backend.destroy(&session.sandbox).await?;
                Ok(session)
            }
            None => self.get(id),
        }
    }
}
