//! The store itself: the database opened private to the service and migrated, the session
//! records, and what is kept of ended sessions.

use crate::activity_writer;
use crate::error::StoreError;
use crate::schema::migrations;
use crate::sql::execute_cached;
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::collections::BTreeMap;
use std::fs::{OpenOptions, Permissions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Records of ended sessions kept, with their activity; the oldest go first.
pub const ENDED_SESSIONS_KEPT: u32 = 10_000;

/// A session as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub id: String,
    pub runtime: String,
    pub tenant: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// The backend's id for the sandbox (a container id).
    pub backend_id: String,
    pub created_at: String,
    pub last_activity_at: String,
    pub ended_at: Option<String>,
    pub end_reason: Option<String>,
    /// When it was paused, while it is.
    pub paused_at: Option<String>,
    /// Where its memory is while paused (`ram` or `disk`).
    pub paused_memory: Option<String>,
}

pub struct Store {
    pub(crate) connection: Arc<Mutex<Connection>>,
    /// The directory the database is in: the service's state directory.
    directory: PathBuf,
    pub(crate) activity: activity_writer::Writer,
}

const SESSION_COLUMNS: &str =
    "id, runtime, tenant, labels, backend_id, created_at, last_activity_at, ended_at, end_reason, paused_at, paused_memory";

fn session_from_row(row: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    let labels: String = row.get(3)?;
    Ok(SessionRecord {
        id: row.get(0)?,
        runtime: row.get(1)?,
        tenant: row.get(2)?,
        labels: serde_json::from_str(&labels).unwrap_or_default(),
        backend_id: row.get(4)?,
        created_at: row.get(5)?,
        last_activity_at: row.get(6)?,
        ended_at: row.get(7)?,
        end_reason: row.get(8)?,
        paused_at: row.get(9)?,
        paused_memory: row.get(10)?,
    })
}

/// Creates the database file 0600 before SQLite does (SQLite gives its `-wal` and `-shm`
/// files the database's mode), and tightens the three files if they exist.
fn make_private(path: &Path) -> Result<(), StoreError> {
    let private = |path: PathBuf| {
        let made = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .and_then(|file| file.set_permissions(Permissions::from_mode(0o600)));
        made.map_err(|source| StoreError::Permissions { path, source })
    };
    private(path.to_path_buf())?;
    for suffix in ["-wal", "-shm"] {
        let mut companion = path.as_os_str().to_owned();
        companion.push(suffix);
        let companion = PathBuf::from(companion);
        if companion.exists() {
            private(companion)?;
        }
    }
    Ok(())
}

impl Store {
    /// Opens (creating if needed) the database and brings its schema up to date. The database
    /// and its `-wal` and `-shm` files are readable by the service's user only (0600), whatever
    /// the umask, also when an earlier version left them looser.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        make_private(path)?;
        let mut connection = Connection::open(path)?;
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.pragma_update(None, "foreign_keys", "ON")?;
        migrations()
            .to_latest(&mut connection)
            .map_err(|e| match e {
                // A downgrade: the schema has steps this version does not know, and cannot undo.
                rusqlite_migration::Error::MigrationDefinition(
                    rusqlite_migration::MigrationDefinitionError::DatabaseTooFarAhead,
                ) => StoreError::NewerSchema {
                    path: path.to_path_buf(),
                },
                other => other.into(),
            })?;
        let journal = activity_writer::open_journal(path, &mut connection)?;
        let connection = Arc::new(Mutex::new(connection));
        Ok(Store {
            activity: activity_writer::Writer::start(connection.clone(), journal),
            connection,
            directory: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        })
    }

    /// The directory the database is in, where the state that is not in it is kept too.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let connection = self.connection.lock().expect("store lock");
        Ok(f(&connection)?)
    }

    pub fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        let labels = serde_json::to_string(&session.labels).unwrap_or_else(|_| "{}".into());
        self.with(|c| {
            execute_cached(c,
                &format!("INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"),
                params![
                    session.id,
                    session.runtime,
                    session.tenant,
                    labels,
                    session.backend_id,
                    session.created_at,
                    session.last_activity_at,
                    session.ended_at,
                    session.end_reason,
                    session.paused_at,
                    session.paused_memory
                ],
            )
            .map(drop)
        })
    }

    pub fn touch_session(&self, id: &str, at: &str) -> Result<(), StoreError> {
        self.with(|c| {
            execute_cached(
                c,
                "UPDATE sessions SET last_activity_at = ?2 WHERE id = ?1",
                params![id, at],
            )
            .map(drop)
        })
    }

    /// Records that a session was paused at `at` with its memory where `memory` says, or
    /// (`None`) that it runs again.
    pub fn set_paused(&self, id: &str, paused: Option<(&str, &str)>) -> Result<(), StoreError> {
        let (at, memory) = (paused.map(|p| p.0), paused.map(|p| p.1));
        self.with(|c| {
            execute_cached(
                c,
                "UPDATE sessions SET paused_at = ?2, paused_memory = ?3 WHERE id = ?1",
                params![id, at, memory],
            )
            .map(drop)
        })
    }

    /// Marks a session ended (once: a later call keeps the first reason), and drops the
    /// oldest ended records beyond what is kept.
    pub fn end_session(
        &self,
        id: &str,
        last_activity_at: &str,
        at: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.with(|c| {
            execute_cached(
                c,
                "UPDATE sessions SET last_activity_at = ?2, ended_at = ?3, end_reason = ?4,
                 paused_at = NULL, paused_memory = NULL WHERE id = ?1 AND ended_at IS NULL",
                params![id, last_activity_at, at, reason],
            )?;
            execute_cached(
                c,
                "DELETE FROM activity WHERE session_id IN (
                    SELECT id FROM sessions WHERE ended_at IS NOT NULL
                    ORDER BY ended_at DESC LIMIT -1 OFFSET ?1)",
                params![ENDED_SESSIONS_KEPT],
            )?;
            execute_cached(
                c,
                "DELETE FROM sessions WHERE id IN (
                    SELECT id FROM sessions WHERE ended_at IS NOT NULL
                    ORDER BY ended_at DESC LIMIT -1 OFFSET ?1)",
                params![ENDED_SESSIONS_KEPT],
            )
            .map(drop)
        })
    }

    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
                params![id],
                session_from_row,
            )
            .optional()
        })
    }

    /// Sessions that have not ended, oldest first.
    pub fn open_sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        self.query_sessions("WHERE ended_at IS NULL ORDER BY created_at", params![])
    }

    /// The most recently ended sessions, newest first.
    pub fn ended_sessions(&self, limit: u32) -> Result<Vec<SessionRecord>, StoreError> {
        self.query_sessions(
            "WHERE ended_at IS NOT NULL ORDER BY ended_at DESC LIMIT ?1",
            params![limit],
        )
    }

    fn query_sessions(
        &self,
        clause: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<SessionRecord>, StoreError> {
        self.with(|c| {
            let mut statement =
                c.prepare(&format!("SELECT {SESSION_COLUMNS} FROM sessions {clause}"))?;
            let rows = statement.query_map(params, session_from_row)?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> SessionRecord {
        SessionRecord {
            id: id.into(),
            runtime: "sh".into(),
            tenant: Some("team".into()),
            labels: BTreeMap::from([("k".into(), "v".into())]),
            backend_id: "abc".into(),
            created_at: "2026-11-29T10:00:00Z".into(),
            last_activity_at: "2026-11-29T10:00:00Z".into(),
            ended_at: None,
            end_reason: None,
            paused_at: None,
            paused_memory: None,
        }
    }

    #[test]
    fn a_database_of_a_newer_version_is_refused_in_words() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        drop(Store::open(&path).unwrap());
        let newer = Connection::open(&path).unwrap();
        let known: i64 = newer
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        newer
            .pragma_update(None, "user_version", known + 1)
            .unwrap();
        drop(newer);
        let error = Store::open(&path).err().expect("refused");
        assert!(matches!(error, StoreError::NewerSchema { .. }), "{error}");
        assert!(
            error.to_string().contains("written by a newer sandboxd"),
            "{error}"
        );
    }

    #[test]
    fn the_database_files_are_private_whatever_the_umask() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let companions = ["state.db", "state.db-wal", "state.db-shm"].map(|f| dir.path().join(f));
        let modes = || {
            companions
                .clone()
                .map(|f| std::fs::metadata(f).unwrap().mode() & 0o777)
        };
        let store = Store::open(&path).unwrap();
        store.insert_session(&record("a")).unwrap();
        assert_eq!(modes(), [0o600; 3]);
        drop(store);
        // Left readable by an earlier version: tightened at the next open.
        for file in &companions {
            if file.exists() {
                std::fs::set_permissions(file, Permissions::from_mode(0o644)).unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        store.insert_session(&record("b")).unwrap();
        assert_eq!(modes(), [0o600; 3]);
    }

    #[test]
    fn sessions_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        {
            let store = Store::open(&path).unwrap();
            store.insert_session(&record("a")).unwrap();
            store.insert_session(&record("b")).unwrap();
            store.touch_session("a", "2026-11-29T11:00:00Z").unwrap();
            store
                .set_paused("a", Some(("2026-11-29T11:10:00Z", "disk")))
                .unwrap();
            store
                .set_paused("b", Some(("2026-11-29T11:20:00Z", "ram")))
                .unwrap();
            store
                .end_session(
                    "b",
                    "2026-11-29T11:30:00Z",
                    "2026-11-29T12:00:00Z",
                    "closed by the client",
                )
                .unwrap();
            store
                .end_session("b", "2026-11-29T11:30:00Z", "2026-11-29T13:00:00Z", "again")
                .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let open = store.open_sessions().unwrap();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].last_activity_at, "2026-11-29T11:00:00Z");
        assert_eq!(open[0].labels["k"], "v");
        assert_eq!(open[0].paused_at.as_deref(), Some("2026-11-29T11:10:00Z"));
        assert_eq!(open[0].paused_memory.as_deref(), Some("disk"));
        let ended = store.session("b").unwrap().unwrap();
        assert_eq!(
            ended.end_reason.as_deref(),
            Some("closed by the client"),
            "the first reason stays"
        );
        assert_eq!(ended.paused_at, None, "an ended session is not paused");
        assert_eq!(ended.paused_memory, None);
        assert_eq!(ended.last_activity_at, "2026-11-29T11:30:00Z");
        assert_eq!(store.ended_sessions(10).unwrap().len(), 1);
        assert!(store.session("zzz").unwrap().is_none());
    }
}
