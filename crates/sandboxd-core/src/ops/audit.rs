//! The audit log: what the service refused, for the administrator. A tenant that addresses
//! another tenant's session gets the same "not found" as for an unknown id, and the access
//! check (`ops/access.rs`) records the attempt with who tried, through which interface, what
//! and on which session; the administrator lists the entries here.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::Caller;
use sandboxd_api::AuditList;

/// Entries `GET /v1/audit` returns at most, and by default.
pub const MAX_LISTED: u32 = 500;

impl Core {
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
