//! Snapshots' records: what each holds and whose it is. Their archives are files of their own
//! beside the database; a record is written only once its files are in place, so a record
//! always has its files (files without a record are left over from a crash, and removed).

use crate::error::StoreError;
use crate::sql::execute_cached;
use crate::store::Store;
use rusqlite::{params, OptionalExtension, Row};
use std::collections::BTreeMap;

/// A snapshot as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRecord {
    pub id: String,
    pub name: String,
    pub tenant: Option<String>,
    pub runtime: String,
    pub labels: BTreeMap<String, String>,
    /// The session it was taken from.
    pub session_id: String,
    pub created_at: String,
    /// The size of its archives together.
    pub bytes: u64,
    /// The sandbox directories its archives hold, in the order of its archive files.
    pub paths: Vec<String>,
    /// The environment the session's commands started with (its own, under each command's).
    pub env: BTreeMap<String, String>,
    /// Whether it keeps the session's processes and memory (a copy the backend holds under
    /// the snapshot's id), rather than archives of its files.
    pub memory: bool,
}

const COLUMNS: &str =
    "id, name, tenant, runtime, labels, session_id, created_at, bytes, paths, env, memory";

fn from_row(row: &Row<'_>) -> rusqlite::Result<SnapshotRecord> {
    let labels: String = row.get(4)?;
    let paths: String = row.get(8)?;
    let env: String = row.get(9)?;
    Ok(SnapshotRecord {
        id: row.get(0)?,
        name: row.get(1)?,
        tenant: row.get(2)?,
        runtime: row.get(3)?,
        labels: serde_json::from_str(&labels).unwrap_or_default(),
        session_id: row.get(5)?,
        created_at: row.get(6)?,
        bytes: row.get::<_, i64>(7)?.max(0) as u64,
        paths: serde_json::from_str(&paths).unwrap_or_default(),
        env: serde_json::from_str(&env).unwrap_or_default(),
        memory: row.get(10)?,
    })
}

impl Store {
    pub fn insert_snapshot(&self, snapshot: &SnapshotRecord) -> Result<(), StoreError> {
        let labels = serde_json::to_string(&snapshot.labels).unwrap_or_else(|_| "{}".into());
        let paths = serde_json::to_string(&snapshot.paths).unwrap_or_else(|_| "[]".into());
        let env = serde_json::to_string(&snapshot.env).unwrap_or_else(|_| "{}".into());
        self.with(|c| {
            execute_cached(
                c,
                &format!(
                    "INSERT INTO snapshots ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
                ),
                params![
                    snapshot.id,
                    snapshot.name,
                    snapshot.tenant,
                    snapshot.runtime,
                    labels,
                    snapshot.session_id,
                    snapshot.created_at,
                    snapshot.bytes.min(i64::MAX as u64) as i64,
                    paths,
                    env,
                    snapshot.memory
                ],
            )
            .map(drop)
        })
    }

    pub fn snapshot(&self, id: &str) -> Result<Option<SnapshotRecord>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM snapshots WHERE id = ?1"),
                params![id],
                from_row,
            )
            .optional()
        })
    }

    /// Every snapshot, oldest first; or with `tenant`, that tenant's (`Some(None)`: the
    /// untenanted ones).
    pub fn snapshots(
        &self,
        tenant: Option<Option<&str>>,
    ) -> Result<Vec<SnapshotRecord>, StoreError> {
        self.with(|c| {
            let rows = match tenant {
                None => c
                    .prepare(&format!(
                        "SELECT {COLUMNS} FROM snapshots ORDER BY created_at, id"
                    ))?
                    .query_map(params![], from_row)?
                    .collect(),
                Some(tenant) => c
                    .prepare(&format!(
                        "SELECT {COLUMNS} FROM snapshots WHERE tenant IS ?1 ORDER BY created_at, id"
                    ))?
                    .query_map(params![tenant], from_row)?
                    .collect(),
            };
            rows
        })
    }

    /// How many snapshots a tenant (`None`: the untenanted ones) keeps, and their bytes.
    pub fn snapshot_usage(&self, tenant: Option<&str>) -> Result<(u32, u64), StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM snapshots WHERE tenant IS ?1",
                params![tenant],
                |row| Ok((row.get::<_, u32>(0)?, row.get::<_, i64>(1)?.max(0) as u64)),
            )
        })
    }

    /// Removes a snapshot's record; whether there was one.
    pub fn delete_snapshot(&self, id: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            execute_cached(c, "DELETE FROM snapshots WHERE id = ?1", params![id]).map(|n| n > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, tenant: Option<&str>, bytes: u64) -> SnapshotRecord {
        SnapshotRecord {
            id: id.into(),
            name: format!("snap {id}"),
            tenant: tenant.map(str::to_string),
            runtime: "sh".into(),
            labels: BTreeMap::from([("k".into(), "v".into())]),
            session_id: "s1".into(),
            created_at: format!("2026-12-01T10:00:0{id}Z"),
            bytes,
            paths: vec!["/workspace".into(), "/tmp".into()],
            env: BTreeMap::from([("TOKEN".into(), format!("t{id}"))]),
            memory: id == "2",
        }
    }

    #[test]
    fn snapshots_are_kept_per_tenant_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        {
            let store = Store::open(&path).unwrap();
            store
                .insert_snapshot(&record("1", Some("alpha"), 100))
                .unwrap();
            store
                .insert_snapshot(&record("2", Some("alpha"), 50))
                .unwrap();
            store.insert_snapshot(&record("3", None, 7)).unwrap();
            assert!(
                store.insert_snapshot(&record("3", None, 7)).is_err(),
                "ids are unique"
            );
        }
        let store = Store::open(&path).unwrap();
        for id in ["1", "2"] {
            assert_eq!(
                store.snapshot(id).unwrap().unwrap(),
                record(id, Some("alpha"), if id == "1" { 100 } else { 50 })
            );
        }
        assert_eq!(store.snapshot_usage(Some("alpha")).unwrap(), (2, 150));
        assert_eq!(store.snapshot_usage(None).unwrap(), (1, 7));
        assert_eq!(store.snapshot_usage(Some("beta")).unwrap(), (0, 0));
        let ids = |list: Vec<SnapshotRecord>| list.into_iter().map(|s| s.id).collect::<Vec<_>>();
        assert_eq!(ids(store.snapshots(None).unwrap()), ["1", "2", "3"]);
        assert_eq!(
            ids(store.snapshots(Some(Some("alpha"))).unwrap()),
            ["1", "2"]
        );
        assert_eq!(ids(store.snapshots(Some(None)).unwrap()), ["3"]);
        assert!(store.delete_snapshot("1").unwrap());
        assert!(!store.delete_snapshot("1").unwrap());
        assert_eq!(store.snapshot_usage(Some("alpha")).unwrap(), (1, 50));
    }
}
