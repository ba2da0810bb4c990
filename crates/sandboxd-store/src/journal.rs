//! The activity journal: each entry is appended to a file as it is recorded (one write, no
//! fsync: it survives the process, which is what a crash or SIGKILL takes), before it is
//! queued for the database. Entries carry a number, and the database keeps the highest it has
//! written in the same transaction as the entries, so the next open writes exactly the
//! entries the database lacks. The file is emptied whenever the database has every entry in
//! it, and rewritten with only the missing ones should it grow past [`COMPACT_AT`].
//!
//! The service holds the journal locked while it runs, so a second service started on the
//! same state directory is refused rather than replaying, emptying, or taking back the
//! first one's sessions and sandboxes.

use crate::sql::execute_cached;
use rusqlite::{params, Connection};
use sandboxd_api::ActivityEntry;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Past this size (while entries keep coming, so it is never found empty) the journal is
/// rewritten with the entries the database lacks.
const COMPACT_AT: u64 = 4 << 20;
/// The most of a journal read at an open: far more than [`COMPACT_AT`] lets it hold.
const MAX_REPLAY_BYTES: u64 = 64 << 20;

/// An entry with its journal number and its session: one journal line.
pub(crate) type Numbered = (u64, String, ActivityEntry);

pub(crate) struct Journal {
    path: PathBuf,
    file: File,
    /// The number of the next entry.
    next: u64,
    bytes: u64,
    /// The size past which it is compacted: [`COMPACT_AT`], or twice what the last compaction
    /// kept, so entries the database cannot take yet are not rewritten after every batch.
    compact_at: u64,
    /// The last append failed: said once in the log, not for every entry.
    failing: bool,
}

impl Journal {
    /// Opens the journal beside the database at `database`, with the entries it holds that
    /// the database lacks (a crash's): the caller writes those, then empties the journal
    /// ([`Journal::empty`]).
    pub(crate) fn open(
        database: &Path,
        connection: &Connection,
    ) -> io::Result<(Journal, Vec<Numbered>)> {
        let mut path = database.as_os_str().to_owned();
        path.push("-activity");
        let path = PathBuf::from(path);
        let file = open_locked(&path)?;
        let written = written(connection).map_err(io::Error::other)?;
        let lines = read_lines(&path)?;
        let last = lines.iter().map(|line| line.0).max().unwrap_or(0);
        let missing: Vec<Numbered> = lines.into_iter().filter(|line| line.0 > written).collect();
        let journal = Journal {
            path,
            file,
            next: written.max(last) + 1,
            bytes: 0,
            compact_at: COMPACT_AT,
            failing: false,
        };
        Ok((journal, missing))
    }

    /// Appends the entry; returns its number. A failed write (a full disk) is logged, once
    /// until a write succeeds again, and the entry goes on to the database all the same.
    pub(crate) fn append(&mut self, session_id: &str, entry: &ActivityEntry) -> u64 {
        let number = self.next;
        self.next += 1;
        let mut line = Vec::new();
        if self.failing {
            // A failed write may have left part of a line: this one starts on a line of its own.
            line.push(b'\n');
        }
        let _ = serde_json::to_writer(&mut line, &(number, session_id, entry));
        line.push(b'\n');
        match self.file.write_all(&line) {
            Ok(()) => {
                self.bytes += line.len() as u64;
                self.failing = false;
            }
            Err(e) if !self.failing => {
                self.failing = true;
                tracing::error!(error = %e, "cannot append to the activity journal: entries recorded until it can are lost should the service be killed before they are written");
            }
            Err(_) => {}
        }
        number
    }

    /// Empties the file, once the database has every entry.
    pub(crate) fn empty(&mut self) {
        match self.file.set_len(0) {
            Ok(()) => {
                self.bytes = 0;
                self.compact_at = COMPACT_AT;
            }
            Err(e) => tracing::error!(error = %e, "cannot empty the activity journal"),
        }
    }

    /// Past [`COMPACT_AT`] (or twice what it kept last time), keeps only the entries after
    /// `written`.
    pub(crate) fn compact_if_large(&mut self, written: u64) {
        if self.bytes > self.compact_at {
            if let Err(e) = self.compact(written) {
                tracing::error!(error = %e, "cannot compact the activity journal");
            }
        }
    }

    fn compact(&mut self, written: u64) -> io::Result<()> {
        let kept: Vec<Numbered> = read_lines(&self.path)?
            .into_iter()
            .filter(|line| line.0 > written)
            .collect();
        let mut staging = self.path.as_os_str().to_owned();
        staging.push(".new");
        let staging = PathBuf::from(staging);
        let mut text = Vec::new();
        for line in &kept {
            serde_json::to_writer(&mut text, line)?;
            text.push(b'\n');
        }
        // Private and locked before it takes the journal's name, so the name is never
        // unlocked; emptied first, should a compaction cut short have left it behind.
        let mut compacted = open_locked(&staging)?;
        compacted.set_len(0)?;
        compacted.write_all(&text)?;
        std::fs::rename(&staging, &self.path)?;
        self.file = compacted;
        self.bytes = text.len() as u64;
        self.compact_at = COMPACT_AT.max(2 * self.bytes);
        Ok(())
    }
}

/// The number of the last entry the database has.
pub(crate) fn written(connection: &Connection) -> rusqlite::Result<u64> {
    connection.query_row("SELECT written FROM activity_journal", [], |row| {
        row.get::<_, i64>(0).map(|n| n.max(0) as u64)
    })
}

/// Notes in the transaction writing entries up to `number` that the database has them.
pub(crate) fn note_written(connection: &Connection, number: u64) -> rusqlite::Result<()> {
    execute_cached(
        connection,
        "UPDATE activity_journal SET written = MAX(written, ?1)",
        params![number.min(i64::MAX as u64) as i64],
    )
    .map(drop)
}

/// The journal's lines; a line cut short by the crash, or otherwise unreadable, is skipped.
fn read_lines(path: &Path) -> io::Result<Vec<Numbered>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut lines = Vec::new();
    for text in BufReader::new(file.take(MAX_REPLAY_BYTES)).split(b'\n') {
        if let Ok(line) = serde_json::from_slice::<Numbered>(&text?) {
            lines.push(line);
        }
    }
    Ok(lines)
}

/// The journal for appending, readable by the service's user only, locked for this process.
fn open_locked(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            "another sandboxd is serving from this state directory (it holds the journal locked); stop it first, or give this one a --state-dir of its own",
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn entry(target: &str) -> ActivityEntry {
        ActivityEntry {
            at: "2026-12-05T10:00:00Z".into(),
            principal: "admin".into(),
            interface: "api".into(),
            action: "exec".into(),
            target: target.into(),
            status: "ok".into(),
            exit_code: Some(0),
            bytes: None,
            duration_ms: 3,
            error: None,
        }
    }

    /// A journal beside a new database, which holds nothing yet.
    fn new_journal(dir: &Path) -> Journal {
        let database = dir.join("state.db");
        let mut connection = Connection::open(&database).unwrap();
        crate::schema::migrations()
            .to_latest(&mut connection)
            .unwrap();
        let (journal, missing) = Journal::open(&database, &connection).unwrap();
        assert!(missing.is_empty());
        journal
    }

    fn mode(path: &Path) -> u32 {
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(path).unwrap().permissions())
            & 0o777
    }

    fn line(number: u64, target: &str) -> String {
        serde_json::to_string(&(number, "s", entry(target))).unwrap() + "\n"
    }

    /// The targets of session "s"'s log, oldest first.
    fn targets(store: &Store) -> Vec<String> {
        crate::activity::tests::targets(store, "s")
    }

    #[test]
    fn what_a_killed_service_journaled_and_did_not_write_is_written_at_the_next_open_once() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("state.db");
        let journal = dir.path().join("state.db-activity");
        let store = Store::open(&database).unwrap();
        store.record_activity("s", &entry("one")).unwrap();
        store.record_activity("s", &entry("two")).unwrap();
        assert_eq!(targets(&store), ["one", "two"]);
        assert_eq!(
            std::fs::metadata(&journal).unwrap().len(),
            0,
            "emptied once the database has every entry"
        );
        drop(store);
        // As a service killed before its writer got to three and four leaves the journal: two
        // is there still (the database has it), four was cut short after a whole line.
        let left = line(2, "two") + &line(3, "three") + &line(4, "four") + "[5,\"s\",{\"at\"";
        std::fs::write(&journal, left).unwrap();
        let store = Store::open(&database).unwrap();
        assert_eq!(targets(&store), ["one", "two", "three", "four"]);
        assert_eq!(std::fs::metadata(&journal).unwrap().len(), 0);
        store.record_activity("s", &entry("five")).unwrap();
        drop(store);
        let store = Store::open(&database).unwrap();
        assert_eq!(targets(&store), ["one", "two", "three", "four", "five"]);
        assert_eq!(mode(&journal), 0o600);
    }

    #[test]
    fn a_second_store_on_the_same_state_is_refused_while_the_first_is_open() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("state.db");
        let first = Store::open(&database).unwrap();
        let Err(refused) = Store::open(&database) else {
            panic!("a second store opened")
        };
        assert!(
            refused.to_string().contains("another sandboxd is serving"),
            "{refused}"
        );
        drop(first);
        Store::open(&database).expect("opens once the first is closed");
    }

    #[test]
    fn after_a_failed_append_the_next_entry_starts_a_line_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = new_journal(dir.path());
        journal.append("s", &entry("one"));
        // What a write cut short by a full disk leaves, and the failure it reported.
        journal.file.write_all(b"[2,\"s\",{\"at\"").unwrap();
        journal.failing = true;
        journal.append("s", &entry("three"));
        let targets: Vec<String> = read_lines(&journal.path)
            .unwrap()
            .into_iter()
            .map(|(_, _, entry)| entry.target)
            .collect();
        assert_eq!(targets, ["one", "three"]);
    }

    #[test]
    fn compacting_keeps_only_the_entries_the_database_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = new_journal(dir.path());
        for target in ["one", "two", "three"] {
            journal.append("s", &entry(target));
        }
        journal.compact(2).unwrap();
        journal.append("s", &entry("four"));
        let kept: Vec<(u64, String)> = read_lines(&journal.path)
            .unwrap()
            .into_iter()
            .map(|(number, _, entry)| (number, entry.target))
            .collect();
        assert_eq!(kept, [(3, "three".into()), (4, "four".into())]);
        assert_eq!(
            mode(&journal.path),
            0o600,
            "the compacted journal is private"
        );
        journal.empty();
        assert_eq!(read_lines(&journal.path).unwrap().len(), 0);
    }

    #[test]
    fn what_a_compaction_keeps_is_not_rewritten_after_every_batch() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = new_journal(dir.path());
        let inode =
            |path: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).unwrap());
        // Past the threshold, with nothing the database has: a compaction keeps all of it.
        while journal.bytes <= COMPACT_AT {
            journal.append("s", &entry("unwritten"));
        }
        journal.compact_if_large(0);
        let compacted = inode(&journal.path);
        journal.append("s", &entry("next"));
        journal.compact_if_large(0);
        assert_eq!(inode(&journal.path), compacted, "rewritten again at once");
        // Once it has grown to twice what it kept, it is compacted again.
        while journal.bytes <= 2 * COMPACT_AT + 1000 {
            journal.append("s", &entry("more"));
        }
        journal.compact_if_large(0);
        assert_ne!(inode(&journal.path), compacted);
    }
}
