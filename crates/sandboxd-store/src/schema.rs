//! The database's schema: every migration, in the order they run. A migration is never
//! edited once released; a change is a new one at the end.

use rusqlite_migration::{Migrations, M};

const AUDIT: &str = "CREATE TABLE audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        principal TEXT NOT NULL,
        interface TEXT NOT NULL,
        action TEXT NOT NULL,
        session_id TEXT NOT NULL,
        outcome TEXT NOT NULL
    );";

const SESSION_EGRESS: &str = "CREATE TABLE session_egress (
        session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        rules TEXT NOT NULL
    );";

const JOURNAL: &str =
    "CREATE TABLE activity_journal (written INTEGER NOT NULL); INSERT INTO activity_journal VALUES (0);";

const SNAPSHOTS: &str = "CREATE TABLE snapshots (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        tenant TEXT,
        runtime TEXT NOT NULL,
        labels TEXT NOT NULL,
        session_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        paths TEXT NOT NULL
    );
    CREATE INDEX snapshots_by_tenant ON snapshots (tenant);";

/// The environment the session's commands started with, kept since the second version.
const SNAPSHOTS_ENV: &str = "ALTER TABLE snapshots ADD COLUMN env TEXT NOT NULL DEFAULT '{}';";

/// Volumes (their owner is the tenant, or '' for the untenanted, so names are unique per
/// tenant) and the volumes each session mounts.
const VOLUMES: &str = "CREATE TABLE volumes (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        tenant TEXT,
        owner TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        state TEXT NOT NULL,
        UNIQUE (owner, name)
    );
    CREATE TABLE session_volumes (
        session_id TEXT NOT NULL,
        volume_id TEXT NOT NULL,
        path TEXT NOT NULL,
        read_only INTEGER NOT NULL,
        PRIMARY KEY (session_id, path)
    );
    CREATE INDEX session_volumes_by_volume ON session_volumes (volume_id);";

pub(crate) fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(
            "CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            runtime TEXT NOT NULL,
            tenant TEXT,
            labels TEXT NOT NULL,
            backend_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            last_activity_at TEXT NOT NULL,
            ended_at TEXT,
            end_reason TEXT
        );
        CREATE INDEX sessions_open ON sessions (ended_at);
        CREATE TABLE activity (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            at TEXT NOT NULL,
            principal TEXT NOT NULL,
            interface TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            status TEXT NOT NULL,
            exit_code INTEGER,
            bytes INTEGER,
            duration_ms INTEGER NOT NULL,
            error TEXT
        );
        CREATE INDEX activity_by_session ON activity (session_id, seq);",
        ),
        M::up(AUDIT),
        M::up("ALTER TABLE sessions ADD COLUMN paused_at TEXT;"),
        M::up(SNAPSHOTS),
        M::up(SNAPSHOTS_ENV),
        M::up(SESSION_EGRESS),
        M::up(JOURNAL),
        M::up(VOLUMES),
        M::up("ALTER TABLE sessions ADD COLUMN paused_memory TEXT;"),
        M::up("ALTER TABLE snapshots ADD COLUMN memory INTEGER NOT NULL DEFAULT 0;"),
    ])
}
