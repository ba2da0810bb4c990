//! The session operations of sandboxd, with no HTTP in them.
//!
//! [`Core`] is the one place that touches the backend and the sandboxes' agents: it opens
//! sessions (tenant quota, a slot, a pooled or new sandbox, rollback), runs commands, moves
//! files, drives background processes and terminals, closes, expires and restores sessions.
//! Each operation checks that the [`Caller`] may reach the session, records its own activity
//! entry and returns an [`Error`] that every face (REST, MCP, the dashboard) reports in its
//! own terms.
//!
//! Its parts are leaf state that never take the core back: [`sessions`] (the open-session
//! table and its slots), [`pool`] (warm sandboxes), [`images`] (image provisioning), [`auth`]
//! (tokens and failed attempts) and [`activity`] (the log's entries).

mod acting;
pub mod activity;
mod agent;
pub mod auth;
mod error;
mod exec;
#[cfg(feature = "fake")]
pub mod fake;
mod files;
pub mod images;
mod lifecycle;
mod maintenance;
pub mod pool;
pub mod processes;
pub mod sessions;

pub use acting::Acting;
pub use activity::{Actor, Caller, Interface, Outcome};
pub use auth::Principal;
pub use error::Error;
pub use files::Download;
pub use maintenance::RestoreReport;
pub use processes::{Attachment, Terminal};

use sandboxd_backend::Backend;
use sandboxd_config::Config;
use sandboxd_store::Store;
use sessions::{Session, Sessions};
use std::sync::{Arc, OnceLock};

/// The session operations over one backend, one config and one store. Cheap to clone.
#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    backend: Arc<dyn Backend>,
    sessions: Sessions,
    pools: pool::Pools,
    images: images::Images,
    auth: auth::Tokens,
    /// What the backend said about its engine at start (`GET /v1/engine`).
    engine: OnceLock<serde_json::Value>,
}

impl Core {
    /// `token` is the service token, the administrator's credential.
    pub fn new(
        config: Config,
        token: String,
        backend: Arc<dyn Backend>,
        store: Arc<Store>,
    ) -> Core {
        let sessions = Sessions::new(store, config.max_sessions);
        Core {
            inner: Arc::new(Inner {
                auth: auth::Tokens::new(token),
                config,
                backend,
                sessions,
                pools: pool::Pools::default(),
                images: images::Images::default(),
                engine: OnceLock::new(),
            }),
        }
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Keeps what the backend reported about its engine; the first report set stays.
    pub fn set_engine_report(&self, report: serde_json::Value) {
        let _ = self.inner.engine.set(report);
    }

    /// The engine report, for the administrator.
    pub fn engine_report(&self, caller: &Caller) -> Result<serde_json::Value, Error> {
        caller.principal.require_admin("the engine report")?;
        self.inner
            .engine
            .get()
            .cloned()
            .ok_or_else(|| Error::NotFound("the backend reported nothing about its engine".into()))
    }

    fn backend(&self) -> &dyn Backend {
        self.inner.backend.as_ref()
    }

    fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    fn pools(&self) -> &pool::Pools {
        &self.inner.pools
    }

    /// The session, running or ended, if the caller may reach it: a tenant reaches only its
    /// own, and another tenant's is "not found" exactly like an id that does not exist, so ids
    /// cannot be probed.
    fn session(&self, caller: &Caller, id: &str) -> Result<Session, Error> {
        let session = self.sessions().get(id)?;
        match caller.principal.tenant() {
            Some(tenant) if session.tenant.as_deref() != Some(tenant) => {
                Err(sessions::not_found(id))
            }
            _ => Ok(session),
        }
    }

    /// The session, if the caller may reach it and it is still open.
    fn running_session(&self, caller: &Caller, id: &str) -> Result<Session, Error> {
        let session = self.session(caller, id)?;
        match &session.ended {
            None => Ok(session),
            Some((_, why)) => Err(Error::SessionEnded(format!(
                "session {id} has ended ({why}); open a new one with POST /v1/sessions"
            ))),
        }
    }
}
