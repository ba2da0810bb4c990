//! The egress allow-list a session narrowed its runtime's to. A session without a row has its
//! runtime's list; a row outlives a restart, so a narrowed session never widens again.

use crate::error::StoreError;
use crate::sql::execute_cached;
use crate::store::Store;
use rusqlite::{params, OptionalExtension};

impl Store {
    /// Keeps the session's rules (as they are written), replacing those it had.
    pub fn set_session_egress(&self, session_id: &str, rules: &[String]) -> Result<(), StoreError> {
        let rules = serde_json::to_string(rules).unwrap_or_else(|_| "[]".into());
        self.with(|c| {
            execute_cached(
                c,
                "INSERT INTO session_egress (session_id, rules) VALUES (?1, ?2)
                 ON CONFLICT (session_id) DO UPDATE SET rules = excluded.rules",
                params![session_id, rules],
            )
            .map(drop)
        })
    }

    /// The session's own rules, if it narrowed its runtime's.
    pub fn session_egress(&self, session_id: &str) -> Result<Option<Vec<String>>, StoreError> {
        let text: Option<String> = self.with(|c| {
            c.prepare_cached("SELECT rules FROM session_egress WHERE session_id = ?1")?
                .query_row(params![session_id], |row| row.get(0))
                .optional()
        })?;
        Ok(text.map(|t| serde_json::from_str(&t).unwrap_or_default()))
    }
}
