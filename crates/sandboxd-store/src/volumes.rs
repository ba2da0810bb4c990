//! Volumes' records and the mounts of sessions. A volume's record is written before its data
//! is made and marked ready after, and marked deleting before its data goes and removed
//! after: a crash between leaves a record in its transitional state, which the service
//! repairs at its next start (a half-made volume is removed, a half-deleted one finished), so
//! a record and its data are never out of step for long.

use crate::error::StoreError;
use crate::sql::execute_cached;
use crate::store::Store;
use rusqlite::{params, OptionalExtension, Row};

/// Where a volume is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumeState {
    /// Recorded, its data perhaps not made yet.
    Creating,
    Ready,
    /// Being removed, its data perhaps still there.
    Deleting,
}

impl VolumeState {
    fn as_str(self) -> &'static str {
        match self {
            VolumeState::Creating => "creating",
            VolumeState::Ready => "ready",
            VolumeState::Deleting => "deleting",
        }
    }

    fn parse(text: &str) -> VolumeState {
        match text {
            "ready" => VolumeState::Ready,
            "creating" => VolumeState::Creating,
            // Anything unknown is treated as on its way out.
            _ => VolumeState::Deleting,
        }
    }
}

/// A volume as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeRecord {
    /// The service's own id, which names its data on the host.
    pub id: String,
    pub name: String,
    pub tenant: Option<String>,
    pub size_bytes: u64,
    pub created_at: String,
    pub state: VolumeState,
}

/// A volume mounted in a session, as recorded when the session was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountRecord {
    pub session_id: String,
    pub volume_id: String,
    pub path: String,
    pub read_only: bool,
}

const COLUMNS: &str = "id, name, tenant, size_bytes, created_at, state";

fn from_row(row: &Row<'_>) -> rusqlite::Result<VolumeRecord> {
    let state: String = row.get(5)?;
    Ok(VolumeRecord {
        id: row.get(0)?,
        name: row.get(1)?,
        tenant: row.get(2)?,
        size_bytes: row.get::<_, i64>(3)?.max(0) as u64,
        created_at: row.get(4)?,
        state: VolumeState::parse(&state),
    })
}

fn mount_from_row(row: &Row<'_>) -> rusqlite::Result<MountRecord> {
    Ok(MountRecord {
        session_id: row.get(0)?,
        volume_id: row.get(1)?,
        path: row.get(2)?,
        read_only: row.get(3)?,
    })
}

impl Store {
    /// Records a new volume; refused (false) when the tenant has one of that name.
    pub fn insert_volume(&self, volume: &VolumeRecord) -> Result<bool, StoreError> {
        self.with(|c| {
            execute_cached(
                c,
                &format!(
                    "INSERT OR IGNORE INTO volumes ({COLUMNS}, owner) VALUES (?1, ?2, ?3, ?4, ?5, ?6, COALESCE(?3, ''))"
                ),
                params![
                    volume.id,
                    volume.name,
                    volume.tenant,
                    volume.size_bytes.min(i64::MAX as u64) as i64,
                    volume.created_at,
                    volume.state.as_str()
                ],
            )
            .map(|n| n > 0)
        })
    }

    pub fn set_volume_state(&self, id: &str, state: VolumeState) -> Result<(), StoreError> {
        self.with(|c| {
            execute_cached(
                c,
                "UPDATE volumes SET state = ?2 WHERE id = ?1",
                params![id, state.as_str()],
            )
            .map(drop)
        })
    }

    /// The tenant's volume of that name (`tenant` `None`: the untenanted ones).
    pub fn volume_named(
        &self,
        tenant: Option<&str>,
        name: &str,
    ) -> Result<Option<VolumeRecord>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!(
                    "SELECT {COLUMNS} FROM volumes WHERE owner = COALESCE(?1, '') AND name = ?2"
                ),
                params![tenant, name],
                from_row,
            )
            .optional()
        })
    }

    /// Every volume, by name; or with `tenant`, that tenant's (`Some(None)`: the untenanted).
    pub fn volumes(&self, tenant: Option<Option<&str>>) -> Result<Vec<VolumeRecord>, StoreError> {
        self.with(|c| match tenant {
            None => c
                .prepare(&format!("SELECT {COLUMNS} FROM volumes ORDER BY name, id"))?
                .query_map(params![], from_row)?
                .collect(),
            Some(tenant) => c
                .prepare(&format!(
                    "SELECT {COLUMNS} FROM volumes WHERE owner = COALESCE(?1, '') ORDER BY name, id"
                ))?
                .query_map(params![tenant], from_row)?
                .collect(),
        })
    }

    /// How many volumes a tenant (`None`: the untenanted) has, in any state, and their sizes.
    pub fn volume_usage(&self, tenant: Option<&str>) -> Result<(u32, u64), StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT COUNT(*), COALESCE(SUM(size_bytes), 0) FROM volumes WHERE owner = COALESCE(?1, '')",
                params![tenant],
                |row| Ok((row.get::<_, u32>(0)?, row.get::<_, i64>(1)?.max(0) as u64)),
            )
        })
    }

    /// Removes a volume's record and its mounts' records.
    pub fn delete_volume(&self, id: &str) -> Result<(), StoreError> {
        self.with(|c| {
            execute_cached(
                c,
                "DELETE FROM session_volumes WHERE volume_id = ?1",
                params![id],
            )?;
            execute_cached(c, "DELETE FROM volumes WHERE id = ?1", params![id]).map(drop)
        })
    }

    /// Records the volumes a session mounts, before its sandbox is made.
    pub fn insert_mounts(&self, mounts: &[MountRecord]) -> Result<(), StoreError> {
        self.with(|c| {
            for mount in mounts {
                execute_cached(
                    c,
                    "INSERT OR REPLACE INTO session_volumes (session_id, volume_id, path, read_only) VALUES (?1, ?2, ?3, ?4)",
                    params![mount.session_id, mount.volume_id, mount.path, mount.read_only],
                )?;
            }
            Ok(())
        })
    }

    /// Forgets a session's mounts (its sandbox was never made, or it ended).
    pub fn delete_mounts(&self, session_id: &str) -> Result<(), StoreError> {
        self.with(|c| {
            execute_cached(
                c,
                "DELETE FROM session_volumes WHERE session_id = ?1",
                params![session_id],
            )
            .map(drop)
        })
    }

    /// The mounts of a volume, by any session (the caller tells the open ones).
    pub fn mounts_of_volume(&self, volume_id: &str) -> Result<Vec<MountRecord>, StoreError> {
        self.mounts_where(
            "SELECT session_id, volume_id, path, read_only FROM session_volumes WHERE volume_id = ?1 ORDER BY session_id",
            volume_id,
        )
    }

    /// The volumes a session mounts.
    pub fn mounts_of_session(&self, session_id: &str) -> Result<Vec<MountRecord>, StoreError> {
        self.mounts_where(
            "SELECT session_id, volume_id, path, read_only FROM session_volumes WHERE session_id = ?1 ORDER BY path",
            session_id,
        )
    }

    fn mounts_where(&self, query: &str, key: &str) -> Result<Vec<MountRecord>, StoreError> {
        self.with(|c| {
            c.prepare_cached(query)?
                .query_map(params![key], mount_from_row)?
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, name: &str, tenant: Option<&str>, size: u64) -> VolumeRecord {
        VolumeRecord {
            id: id.into(),
            name: name.into(),
            tenant: tenant.map(str::to_string),
            size_bytes: size,
            created_at: "2026-12-06T10:00:00Z".into(),
            state: VolumeState::Creating,
        }
    }

    #[test]
    fn volumes_are_named_per_tenant_counted_and_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        {
            let store = Store::open(&path).unwrap();
            assert!(store
                .insert_volume(&record("1", "data", Some("a"), 100))
                .unwrap());
            assert!(store
                .insert_volume(&record("2", "data", Some("b"), 50))
                .unwrap());
            assert!(store.insert_volume(&record("3", "data", None, 7)).unwrap());
            assert!(
                !store
                    .insert_volume(&record("4", "data", Some("a"), 1))
                    .unwrap(),
                "a tenant's names are unique"
            );
            assert!(!store.insert_volume(&record("5", "data", None, 1)).unwrap());
            store.set_volume_state("1", VolumeState::Ready).unwrap();
            store
                .insert_mounts(&[MountRecord {
                    session_id: "s1".into(),
                    volume_id: "1".into(),
                    path: "/workspace/data".into(),
                    read_only: true,
                }])
                .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let a = store.volume_named(Some("a"), "data").unwrap().unwrap();
        assert_eq!((a.id.as_str(), a.state), ("1", VolumeState::Ready));
        assert_eq!(store.volume_named(None, "data").unwrap().unwrap().id, "3");
        assert!(store.volume_named(Some("c"), "data").unwrap().is_none());
        assert_eq!(store.volume_usage(Some("a")).unwrap(), (1, 100));
        assert_eq!(store.volume_usage(None).unwrap(), (1, 7));
        assert_eq!(store.volumes(None).unwrap().len(), 3);
        assert_eq!(store.volumes(Some(Some("b"))).unwrap()[0].id, "2");
        let mounts = store.mounts_of_volume("1").unwrap();
        assert_eq!(mounts.len(), 1);
        assert!(mounts[0].read_only);
        assert_eq!(store.mounts_of_session("s1").unwrap(), mounts);
        assert!(store.mounts_of_session("s2").unwrap().is_empty());
        store.delete_volume("1").unwrap();
        assert!(store.mounts_of_volume("1").unwrap().is_empty());
        assert_eq!(store.volume_usage(Some("a")).unwrap(), (0, 0));
    }
}
