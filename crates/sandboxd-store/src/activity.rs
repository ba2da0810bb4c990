//! Sessions' activity logs. Every operation records an entry, so recording must not make the
//! operation wait for the database: [`Store::record_activity`] only queues the entry, and a
//! thread of the store's own writes what is queued in batches (one transaction each). A read
//! of a log waits for the entries queued before it, so it sees every operation that ended
//! before it was asked; [`Store::flush`] and dropping the store wait for the whole queue.
//!
//! The queue is bounded: when the writer falls that far behind, recording waits for room
//! instead of holding more. Should the writer thread be gone, entries are written in place.
//! Each queued entry is in the [`Journal`] first, so a service killed before the writer got to
//! it loses none.

use crate::activity_writer::{write_batch, ACTIVITY_PER_SESSION};
use crate::error::StoreError;
use crate::store::Store;
use rusqlite::params;
use sandboxd_api::ActivityEntry;

impl Store {
    /// Records an entry in the session's log (written shortly after; a read of the log waits
    /// for it). Older entries beyond [`ACTIVITY_PER_SESSION`] are dropped.
    pub fn record_activity(
        &self,
        session_id: &str,
        entry: &ActivityEntry,
    ) -> Result<(), StoreError> {
        match self.activity.record(session_id, entry) {
            None => Ok(()),
            Some(entry) => {
                let mut connection = self.connection.lock().expect("store lock");
                // Not in the journal: number 0, which notes nothing as written.
                Ok(write_batch(
                    &mut connection,
                    &[(0, session_id.to_string(), entry)],
                )?)
            }
        }
    }

    /// Waits until every activity entry recorded so far is written: on a clean shutdown.
    pub fn flush(&self) {
        self.activity.flush();
    }

    /// The session's log, newest first, with every entry recorded before the call.
    pub fn activity(&self, session_id: &str) -> Result<Vec<ActivityEntry>, StoreError> {
        self.activity.flush();
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT at, principal, interface, action, target, status, exit_code, bytes, duration_ms, error
                 FROM activity WHERE session_id = ?1 ORDER BY seq DESC LIMIT ?2",
            )?;
            let rows = statement.query_map(params![session_id, ACTIVITY_PER_SESSION], |row| {
                Ok(ActivityEntry {
                    at: row.get(0)?,
                    principal: row.get(1)?,
                    interface: row.get(2)?,
                    action: row.get(3)?,
                    target: row.get(4)?,
                    status: row.get(5)?,
                    exit_code: row.get(6)?,
                    bytes: row.get::<_, Option<i64>>(7)?.map(|b| b.max(0) as u64),
                    duration_ms: row.get::<_, i64>(8)?.max(0) as u64,
                    error: row.get(9)?,
                })
            })?;
            rows.collect()
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::activity_writer::QUEUE_LEN;
    use std::sync::Arc;

    fn entry(n: usize) -> ActivityEntry {
        ActivityEntry {
            at: format!("2026-11-29T10:00:{:02}Z", n % 60),
            principal: "admin".into(),
            interface: "api".into(),
            action: "exec".into(),
            target: format!("prog{n}"),
            status: "ok".into(),
            exit_code: Some(0),
            bytes: None,
            duration_ms: 3,
            error: None,
        }
    }

    #[test]
    fn activity_is_a_ring_of_the_most_recent_entries() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        for n in 0..(ACTIVITY_PER_SESSION as usize + 25) {
            store.record_activity("a", &entry(n)).unwrap();
        }
        store.record_activity("b", &entry(0)).unwrap();
        let log = store.activity("a").unwrap();
        assert_eq!(log.len(), ACTIVITY_PER_SESSION as usize);
        assert_eq!(
            log[0].target,
            format!("prog{}", ACTIVITY_PER_SESSION + 24),
            "newest first"
        );
        assert_eq!(
            log.last().unwrap().target,
            "prog25",
            "the oldest were dropped"
        );
        assert_eq!(
            store.activity("b").unwrap().len(),
            1,
            "rings are per session"
        );
    }

    #[test]
    fn a_read_sees_every_entry_recorded_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        for round in 1..=50 {
            store.record_activity("a", &entry(round)).unwrap();
            let log = store.activity("a").unwrap();
            assert_eq!(log.len(), round, "read right after recording");
            assert_eq!(log[0].target, format!("prog{round}"));
        }
    }

    #[test]
    fn queued_entries_are_written_when_the_store_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let store = Store::open(&path).unwrap();
        // More than the queue holds, recorded from several threads at once.
        let store = Arc::new(store);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let store = store.clone();
                std::thread::spawn(move || {
                    for n in 0..(QUEUE_LEN / 2) {
                        store.record_activity(&format!("s{t}"), &entry(n)).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        drop(Arc::into_inner(store).expect("the only reference"));
        let store = Store::open(&path).unwrap();
        for t in 0..4 {
            let log = store.activity(&format!("s{t}")).unwrap();
            assert_eq!(log.len(), ACTIVITY_PER_SESSION as usize);
            assert_eq!(log[0].target, format!("prog{}", QUEUE_LEN / 2 - 1));
        }
    }

    /// Makes every write of an activity entry fail, as a full disk does, until the trigger
    /// `no_room` is dropped.
    fn break_writes(store: &Store) {
        store
            .with(|c| {
                c.execute_batch(
                    "CREATE TEMP TRIGGER no_room BEFORE INSERT ON activity
                     BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
                )
            })
            .unwrap();
    }

    /// The targets of the session's log, oldest first.
    pub(crate) fn targets(store: &Store, session_id: &str) -> Vec<String> {
        let mut targets: Vec<String> = store
            .activity(session_id)
            .unwrap()
            .into_iter()
            .map(|e| e.target)
            .collect();
        targets.reverse();
        targets
    }

    #[test]
    fn entries_whose_write_failed_are_written_with_the_next_ones_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        store.record_activity("a", &entry(1)).unwrap();
        store.flush();
        break_writes(&store);
        store.record_activity("a", &entry(2)).unwrap();
        store.record_activity("a", &entry(3)).unwrap();
        assert_eq!(targets(&store, "a"), ["prog1"], "the database took none");
        store
            .with(|c| c.execute_batch("DROP TRIGGER no_room"))
            .unwrap();
        store.record_activity("a", &entry(4)).unwrap();
        assert_eq!(targets(&store, "a"), ["prog1", "prog2", "prog3", "prog4"]);
    }

    #[test]
    fn entries_whose_write_failed_are_still_journaled_for_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let store = Store::open(&path).unwrap();
        break_writes(&store);
        store.record_activity("a", &entry(1)).unwrap();
        store.record_activity("a", &entry(2)).unwrap();
        store.flush();
        // The writer tries once more as the store closes, and fails again.
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(targets(&store, "a"), ["prog1", "prog2"]);
    }
}
