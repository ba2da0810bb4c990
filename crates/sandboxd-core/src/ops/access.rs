//! How an operation reaches its session: who may (the one check every operation on a session
//! makes first: a tenant reaches only its own sessions; another tenant's is "not found" exactly
//! like an id that does not exist, so ids cannot be probed, and the attempt goes to the audit
//! log), the operation's activity entry, and a connection to the session's agent.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::{Caller, PendingEntry};
use crate::state::sessions::{self, rfc3339, Session};
use sandboxd_api::{AuditEntry, Remedy};
use sandboxd_backend::AgentStream;
use time::OffsetDateTime;

impl Core {
    /// Starts the activity entry of an operation on a session the caller may reach.
    pub(crate) fn entry(
        &self,
        caller: &Caller,
        session: &Session,
        action: &'static str,
        target: &str,
    ) -> PendingEntry {
        PendingEntry::new(self.sessions(), &session.id, caller.actor(), action, target)
    }

    /// A connection to the session's agent, ready for a request; a paused session is
    /// resumed first.
    pub(crate) async fn connect(&self, session: &Session) -> Result<AgentStream, Error> {
        self.resume_if_paused(session).await?;
        Ok(self.backend().agent(&session.sandbox).await?)
    }

    /// The session, running or ended, if the caller may reach it for `action`: a tenant
    /// reaches only its own, and another tenant's is "not found" exactly like an id that does
    /// not exist, so ids cannot be probed; the attempt goes to the audit log.
    pub(crate) fn session(
        &self,
        caller: &Caller,
        id: &str,
        action: &'static str,
    ) -> Result<Session, Error> {
        let session = self.sessions().get(id)?;
        match caller.principal.tenant() {
            Some(tenant) if session.tenant.as_deref() != Some(tenant) => {
                self.record_denied(caller, action, id);
                Err(sessions::not_found(id))
            }
            _ => Ok(session),
        }
    }

    /// Whether a session is still open (running or paused): for a face that keeps things of
    /// its own per session, to let go of them once it ended (see [`Core::session_changes`]).
    pub fn is_session_open(&self, id: &str) -> bool {
        self.sessions().is_open(id)
    }

    /// The session, if the caller may reach it for `action` and it is still open.
    pub(crate) fn running_session(
        &self,
        caller: &Caller,
        id: &str,
        action: &'static str,
    ) -> Result<Session, Error> {
        let session = self.session(caller, id, action)?;
        match &session.ended {
            None => Ok(session),
            Some((_, why)) => Err(
                Error::SessionEnded(format!("session {id} has ended ({why})"))
                    .with_remedy(Remedy::OpenSession),
            ),
        }
    }

    /// Records that `caller` was refused `action` on another tenant's session.
    pub(crate) fn record_denied(&self, caller: &Caller, action: &str, session_id: &str) {
        let entry = AuditEntry {
            at: rfc3339(OffsetDateTime::now_utc()),
            principal: caller.principal.name(),
            interface: caller.interface.name().into(),
            action: action.into(),
            session_id: session_id.into(),
            outcome: "denied".into(),
        };
        tracing::warn!(principal = %entry.principal, action, session = session_id, "cross-tenant attempt refused");
        if let Err(e) = self.sessions().store().record_audit(&entry) {
            tracing::error!(error = %e, "cannot write the audit log");
        }
    }
}
