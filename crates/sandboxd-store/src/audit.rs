//! The audit log: refused attempts (a tenant addressing another tenant's session), kept for the
//! administrator in one bounded table, the oldest rows dropped first.

use crate::error::StoreError;
use crate::sql::execute_cached;
use crate::store::Store;
use rusqlite::params;
use sandboxd_api::AuditEntry;

/// Audit entries kept at most; a flood of attempts drops the oldest.
pub const AUDIT_KEPT: u32 = 10_000;

impl Store {
    /// Appends an entry and drops the oldest beyond [`AUDIT_KEPT`].
    pub fn record_audit(&self, entry: &AuditEntry) -> Result<(), StoreError> {
        self.with(|c| {
            execute_cached(
                c,
                "INSERT INTO audit (at, principal, interface, action, session_id, outcome)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    entry.at,
                    entry.principal,
                    entry.interface,
                    entry.action,
                    entry.session_id,
                    entry.outcome
                ],
            )?;
            execute_cached(
                c,
                "DELETE FROM audit WHERE seq <= (
                    SELECT seq FROM audit ORDER BY seq DESC LIMIT 1 OFFSET ?1)",
                params![AUDIT_KEPT],
            )
            .map(drop)
        })
    }

    /// The most recent `limit` entries, newest first.
    pub fn audit(&self, limit: u32) -> Result<Vec<AuditEntry>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare(
                "SELECT at, principal, interface, action, session_id, outcome
                 FROM audit ORDER BY seq DESC LIMIT ?1",
            )?;
            let rows = statement.query_map(params![limit], |row| {
                Ok(AuditEntry {
                    at: row.get(0)?,
                    principal: row.get(1)?,
                    interface: row.get(2)?,
                    action: row.get(3)?,
                    session_id: row.get(4)?,
                    outcome: row.get(5)?,
                })
            })?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u32) -> AuditEntry {
        AuditEntry {
            at: "2026-11-29T10:00:00Z".into(),
            principal: "tenant:a".into(),
            interface: "api".into(),
            action: "exec".into(),
            session_id: format!("s{n}"),
            outcome: "denied".into(),
        }
    }

    #[test]
    fn the_audit_log_keeps_the_newest_entries_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        {
            let store = Store::open(&path).unwrap();
            for n in 0..(AUDIT_KEPT + 3) {
                store.record_audit(&entry(n)).unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        let all = store.audit(AUDIT_KEPT + 100).unwrap();
        assert_eq!(all.len(), AUDIT_KEPT as usize, "the oldest were dropped");
        assert_eq!(
            all[0].session_id,
            format!("s{}", AUDIT_KEPT + 2),
            "newest first"
        );
        assert_eq!(all.last().unwrap().session_id, "s3");
        assert_eq!(store.audit(2).unwrap().len(), 2);
    }
}
