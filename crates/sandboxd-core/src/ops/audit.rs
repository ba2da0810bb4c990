//! The audit log: what the service refused, for the administrator. A tenant that addresses
//! another tenant's session gets the same "not found" as for an unknown id, and the attempt is
//! recorded here with who tried, through which interface, what and on which session.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::Caller;
use crate::state::sessions::rfc3339;
use sandboxd_api::{AuditEntry, AuditList};
use time::OffsetDateTime;

/// Entries `GET /v1/audit` returns at most, and by default.
pub const MAX_LISTED: u32 = 500;

impl Core {
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

    /// The most recent audit entries, newest first: at most `limit` (default and cap
    /// [`MAX_LISTED`]). Administrator only.
    pub fn audit(&self, caller: &Caller, limit: Option<u32>) -> Result<AuditList, Error> {
        caller.principal.require_admin("the audit log")?;
        let limit = limit.unwrap_or(MAX_LISTED);
        if !(1..=MAX_LISTED).contains(&limit) {
            return Err(Error::bad_request(
                "invalid_request",
                format!("`limit` must be 1 to {MAX_LISTED}"),
            ));
        }
        Ok(AuditList {
            entries: self.sessions().store().audit(limit)?,
        })
    }
}
