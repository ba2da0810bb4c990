//! The thread that writes sessions' activity entries in batches, from a bounded queue, each
//! entry in the journal first (see `activity`).

use crate::error::StoreError;
use crate::journal::{self, Journal, Numbered};
use crate::sql::execute_cached;
use rusqlite::{params, Connection};
use sandboxd_api::ActivityEntry;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// Activity entries kept per session: the most recent, older ones dropped.
pub const ACTIVITY_PER_SESSION: u32 = 200;

/// Entries queued at most before recording waits for the writer.
pub(crate) const QUEUE_LEN: usize = 4096;
/// Entries written in one transaction at most.
const MAX_BATCH: usize = 512;
/// How long the writer gathers entries before it commits them.
const GATHER: Duration = Duration::from_millis(10);
/// How soon entries whose write failed are tried again when no others come.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// Entries whose write failed kept for another try, at most.
const MAX_UNWRITTEN: usize = 4 * QUEUE_LEN;

enum Job {
    /// Boxed, so the queue's slots (allocated up front) stay small.
    Record(Box<Numbered>),
    /// Answered once everything queued before it is written.
    Flush(mpsc::Sender<()>),
}

/// The writer thread and its queue.
pub(crate) struct Writer {
    queue: Option<SyncSender<Job>>,
    /// Entries queued and not yet written: a read need not wait when there are none.
    pending: Arc<AtomicUsize>,
    /// Taken to append and queue an entry, so the queue's order is the journal's.
    journal: Arc<Mutex<Journal>>,
    thread: Option<JoinHandle<()>>,
}

/// Opens the activity journal beside `database`, first writing the entries it holds that the
/// database lacks (a killed service's).
pub(crate) fn open_journal(
    database: &Path,
    connection: &mut Connection,
) -> Result<Journal, StoreError> {
    let failed = |source| StoreError::Journal {
        database: database.to_path_buf(),
        source,
    };
    let (mut journal, missing) = Journal::open(database, connection).map_err(failed)?;
    if !missing.is_empty() {
        tracing::warn!(
            entries = missing.len(),
            "writing the activity entries the last run recorded and did not write"
        );
        write_batch(connection, &missing)?;
    }
    // The database has every entry now; the numbers go on from the highest either had.
    journal.empty();
    Ok(journal)
}

impl Writer {
    pub(crate) fn start(connection: Arc<Mutex<Connection>>, journal: Journal) -> Writer {
        let (queue, jobs) = mpsc::sync_channel(QUEUE_LEN);
        let pending = Arc::new(AtomicUsize::new(0));
        let journal = Arc::new(Mutex::new(journal));
        let (counted, trimmed) = (pending.clone(), journal.clone());
        // Without a thread, entries are written in place (see `Store::record_activity`).
        let thread = std::thread::Builder::new()
            .name("activity-writer".into())
            .spawn(move || write_queued(&connection, &jobs, &counted, &trimmed))
            .ok();
        Writer {
            queue: thread.is_some().then_some(queue),
            pending,
            journal,
            thread,
        }
    }

    /// Queues the entry; gives it back when there is no writer to take it.
    pub(crate) fn record(&self, session_id: &str, entry: &ActivityEntry) -> Option<ActivityEntry> {
        let Some(queue) = &self.queue else {
            return Some(entry.clone());
        };
        let mut journal = self.journal.lock().unwrap_or_else(PoisonError::into_inner);
        let number = journal.append(session_id, entry);
        self.pending.fetch_add(1, Ordering::AcqRel);
        let job = Job::Record(Box::new((number, session_id.to_string(), entry.clone())));
        // Sent under the journal's lock; the writer never waits for that lock, so waiting
        // here for room cannot hold it up.
        let sent = match queue.try_send(job) {
            Ok(()) => Ok(()),
            // The writer is behind: wait for room rather than queue without bound.
            Err(TrySendError::Full(job)) => queue.send(job).map_err(|e| e.0),
            Err(TrySendError::Disconnected(job)) => Err(job),
        };
        match sent {
            Ok(()) => None,
            Err(Job::Record(record)) => {
                self.pending.fetch_sub(1, Ordering::AcqRel);
                Some(record.2)
            }
            Err(Job::Flush(_)) => None,
        }
    }

    /// Waits until every entry queued so far is written.
    pub(crate) fn flush(&self) {
        let Some(queue) = &self.queue else { return };
        if self.pending.load(Ordering::Acquire) == 0 {
            return;
        }
        let (done, written) = mpsc::channel();
        if queue.send(Job::Flush(done)).is_ok() {
            // It may be gathering entries: the flush ends that wait.
            if let Some(thread) = &self.thread {
                thread.thread().unpark();
            }
            // An error means the writer ended: nothing more will be written by it.
            let _ = written.recv();
        }
    }
}

impl Drop for Writer {
    /// Closing the queue ends the writer once it has written what is queued.
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

/// The writer thread: takes what is queued, up to [`MAX_BATCH`], and writes it in one
/// transaction, until the queue closes. After the first entry of a batch it sleeps up to
/// [`GATHER`] (entries queued meanwhile wake nobody), so a steady stream of operations costs a
/// wakeup and a commit per window rather than one each; a flush unparks it at once. After a
/// batch it empties or compacts the journal, if nobody holds it.
///
/// Entries whose write failed (a full disk) stay first in line and are written with the next
/// batch, or after [`RETRY_AFTER`] when none comes: the database's mark of what it has written
/// only moves past an entry once it has it, so the journal keeps it for the next start until
/// then. Past [`MAX_UNWRITTEN`] the oldest are given up, so recording never waits on a
/// database that cannot be written.
fn write_queued(
    connection: &Mutex<Connection>,
    jobs: &Receiver<Job>,
    pending: &AtomicUsize,
    journal: &Mutex<Journal>,
) {
    let mut batch: Vec<Numbered> = Vec::new();
    let mut flushes = Vec::new();
    // The highest number the database has from this writer.
    let mut written = 0;
    loop {
        let first = match batch.is_empty() {
            true => jobs.recv().map_err(|_| RecvTimeoutError::Disconnected),
            false => jobs.recv_timeout(RETRY_AFTER),
        };
        let closed = matches!(first, Err(RecvTimeoutError::Disconnected));
        if let Ok(first) = first {
            if matches!(first, Job::Record(_)) {
                std::thread::park_timeout(GATHER);
            }
            let room = batch.len() + MAX_BATCH;
            let mut next = Some(first);
            while let Some(job) = next {
                match job {
                    Job::Record(record) => batch.push(*record),
                    Job::Flush(done) => flushes.push(done),
                }
                next = if batch.len() < room {
                    jobs.try_recv().ok()
                } else {
                    None
                };
            }
        }
        if !batch.is_empty() {
            let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
            match write_batch(&mut connection, &batch) {
                Ok(()) => {
                    written = batch.last().map_or(written, |record| record.0);
                    pending.fetch_sub(batch.len(), Ordering::AcqRel);
                    batch.clear();
                }
                Err(e) => {
                    tracing::error!(entries = batch.len(), error = %e, "cannot write the activity log; trying again with the next entries");
                    let given_up = batch.len().saturating_sub(MAX_UNWRITTEN);
                    if given_up > 0 {
                        tracing::error!(
                            entries = given_up,
                            "activity entries lost: the database could not be written for too long"
                        );
                        batch.drain(..given_up);
                        pending.fetch_sub(given_up, Ordering::AcqRel);
                    }
                }
            }
            // Entries are appended and counted under this lock: with it held, none pending
            // means the database has every entry the journal holds.
            if let Ok(mut journal) = journal.try_lock() {
                if pending.load(Ordering::Acquire) == 0 {
                    journal.empty();
                } else {
                    journal.compact_if_large(written);
                }
            }
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
        if closed {
            break;
        }
    }
}

/// Appends the entries, notes the highest journal number among them as written, and drops
/// what falls out of each session's ring.
pub(crate) fn write_batch(connection: &mut Connection, batch: &[Numbered]) -> rusqlite::Result<()> {
    let transaction = connection.transaction()?;
    for (_, session_id, entry) in batch {
        insert(&transaction, session_id, entry)?;
    }
    if let Some(highest) = batch.iter().map(|record| record.0).max() {
        journal::note_written(&transaction, highest)?;
    }
    let sessions: BTreeSet<&str> = batch.iter().map(|(_, id, _)| id.as_str()).collect();
    for session_id in sessions {
        execute_cached(
            &transaction,
            "DELETE FROM activity WHERE session_id = ?1 AND seq <= (
                SELECT seq FROM activity WHERE session_id = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)",
            params![session_id, ACTIVITY_PER_SESSION],
        )?;
    }
    transaction.commit()
}

fn insert(c: &Connection, session_id: &str, entry: &ActivityEntry) -> rusqlite::Result<()> {
    execute_cached(
        c,
        "INSERT INTO activity (session_id, at, principal, interface, action, target, status, exit_code, bytes, duration_ms, error)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            session_id,
            entry.at,
            entry.principal,
            entry.interface,
            entry.action,
            entry.target,
            entry.status,
            entry.exit_code,
            entry.bytes.map(|b| b.min(i64::MAX as u64) as i64),
            entry.duration_ms.min(i64::MAX as u64) as i64,
            entry.error
        ],
    )
    .map(drop)
}
