//! Who may reach which session: the one check every operation on a session makes first. A
//! tenant reaches only its own sessions; another tenant's is "not found" exactly like an id
//! that does not exist, so ids cannot be probed, and the attempt goes to the audit log.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::Caller;
use crate::state::sessions::{self, rfc3339, Session};
use sandboxd_api::{AuditEntry, Remedy};
use time::OffsetDateTime;

impl Core {
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
