//! Where snapshots' archives are kept: one directory per snapshot under `snapshots/` in the
//! state directory (0700), holding one tar per sandbox directory (0600), as opaque bytes the
//! host never unpacks. A snapshot is written into a hidden directory, each file synced, then
//! renamed into place and the parent synced, so a crash leaves either nothing or the whole
//! set; its record goes into the store after that, and files with no record are removed at
//! start.

use std::collections::{HashMap, HashSet};
use std::fs::{DirBuilder, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

const HIDDEN_PREFIX: &str = ".partial-";

/// The snapshots' directory.
#[derive(Debug, Clone)]
pub struct SnapshotFiles {
    root: PathBuf,
}

/// Snapshot ids are made by the service: lowercase hex. Nothing else names a path.
fn checked(id: &str) -> io::Result<&str> {
    if !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a snapshot id",
        ))
    }
}

fn part_name(index: usize) -> String {
    format!("{index}.tar")
}

impl SnapshotFiles {
    pub fn new(root: PathBuf) -> SnapshotFiles {
        SnapshotFiles { root }
    }

    /// Makes the directory, private to the service's user whatever was there.
    fn ensure_root(&self) -> io::Result<()> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.root)?;
        std::fs::set_permissions(&self.root, Permissions::from_mode(0o700))
    }

    /// Starts writing a snapshot's files; dropped unfinished, it leaves nothing.
    pub fn begin(&self, id: &str) -> io::Result<PartialSnapshot> {
        self.ensure_root()?;
        let id = checked(id)?;
        let dir = self.root.join(format!("{HIDDEN_PREFIX}{id}"));
        DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(PartialSnapshot {
            dir,
            done: self.root.join(id),
            root: self.root.clone(),
            committed: false,
        })
    }

    /// One archive of a snapshot, to read.
    pub async fn open(&self, id: &str, index: usize) -> io::Result<tokio::fs::File> {
        let path = self.root.join(checked(id)?).join(part_name(index));
        tokio::fs::OpenOptions::new().read(true).open(path).await
    }

    /// Removes a snapshot's files; removing what is gone is no error.
    pub async fn remove(&self, id: &str) -> io::Result<()> {
        match tokio::fs::remove_dir_all(self.root.join(checked(id)?)).await {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Removes what a crash left: unfinished snapshots, and finished ones whose record was
    /// never written. Returns how many were removed.
    /// The directory is made private again at the same time (as at every start).
    pub fn remove_unrecorded(&self, recorded: &HashSet<String>) -> io::Result<usize> {
        self.ensure_root()?;
        let entries = std::fs::read_dir(&self.root)?;
        let mut removed = 0;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if recorded.contains(&name) {
                continue;
            }
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
            removed += 1;
        }
        Ok(removed)
    }
}

/// A snapshot being written.
pub struct PartialSnapshot {
    dir: PathBuf,
    done: PathBuf,
    root: PathBuf,
    committed: bool,
}

impl PartialSnapshot {
    /// A new archive file, to write.
    pub async fn create(&self, index: usize) -> io::Result<tokio::fs::File> {
        tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(self.dir.join(part_name(index)))
            .await
    }

    /// Puts the snapshot in place, durably: its files were synced as they were closed.
    pub async fn commit(mut self) -> io::Result<()> {
        let (dir, done, root) = (self.dir.clone(), self.done.clone(), self.root.clone());
        tokio::task::spawn_blocking(move || {
            sync_dir(&dir)?;
            std::fs::rename(&dir, &done)?;
            sync_dir(&root)
        })
        .await
        .map_err(io::Error::other)??;
        self.committed = true;
        Ok(())
    }
}

impl Drop for PartialSnapshot {
    fn drop(&mut self) {
        if !self.committed {
            if let Err(e) = std::fs::remove_dir_all(&self.dir) {
                tracing::warn!(dir = %self.dir.display(), error = %e, "cannot remove an unfinished snapshot");
            }
        }
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// The snapshots' files, a lock per session (two snapshots or forks of one session take
/// turns; different sessions never wait on each other), and the bytes of the snapshots being
/// taken, per tenant, counted against the quota with the kept ones.
pub(crate) struct Snapshots {
    pub files: SnapshotFiles,
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    in_flight: Mutex<HashMap<Option<String>, InFlight>>,
}

/// A tenant's snapshots being taken.
#[derive(Default)]
struct InFlight {
    count: u32,
    bytes: u64,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Snapshots {
    pub fn new(files: SnapshotFiles) -> Snapshots {
        Snapshots {
            files,
            turns: Mutex::default(),
            in_flight: Mutex::default(),
        }
    }

    /// Waits for the session's turn: no other snapshot or fork of it runs until it is dropped.
    pub(crate) async fn turn_of(&self, session_id: &str) -> SessionTurn<'_> {
        let lock = locked(&self.turns)
            .entry(session_id.to_string())
            .or_default()
            .clone();
        SessionTurn {
            guard: Some(lock.lock_owned().await),
            session_id: session_id.to_string(),
            snapshots: self,
        }
    }

    /// Counts a snapshot of the tenant as being taken, if `kept` (its kept snapshots) and
    /// the ones being taken leave room under `quota_count`.
    pub(crate) fn start_taking(
        &self,
        tenant: Option<&str>,
        kept: u32,
        quota_count: u32,
    ) -> Option<Taking<'_>> {
        let tenant = tenant.map(str::to_string);
        let mut in_flight = locked(&self.in_flight);
        let entry = in_flight.entry(tenant.clone()).or_default();
        if kept.saturating_add(entry.count) >= quota_count {
            return None;
        }
        entry.count += 1;
        Some(Taking {
            snapshots: self,
            tenant,
            bytes: 0,
        })
    }

    /// Runs `record` (the quota's last check and the record's insertion) while no other
    /// snapshot is recorded: two snapshots cannot both take the quota's last room.
    pub(crate) fn recording<T>(&self, record: impl FnOnce() -> T) -> T {
        let _recording = locked(&self.in_flight);
        record()
    }
}

/// A session's turn to take a snapshot or fork; the lock is forgotten when nobody waits.
pub(crate) struct SessionTurn<'a> {
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    session_id: String,
    snapshots: &'a Snapshots,
}

impl Drop for SessionTurn<'_> {
    fn drop(&mut self) {
        let mut turns = locked(&self.snapshots.turns);
        drop(self.guard.take());
        // Waiters hold a clone: only the map's own is left when none does.
        if turns
            .get(&self.session_id)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            turns.remove(&self.session_id);
        }
    }
}

/// A snapshot being taken, counted in its tenant's snapshots in flight until dropped.
pub(crate) struct Taking<'a> {
    snapshots: &'a Snapshots,
    tenant: Option<String>,
    bytes: u64,
}

impl Taking<'_> {
    /// Counts `more` bytes written; false when the tenant's kept bytes (`kept`) and those of
    /// all its snapshots being taken would be over `quota`.
    pub(crate) fn add(&mut self, more: u64, kept: u64, quota: u64) -> bool {
        self.bytes += more;
        let mut in_flight = locked(&self.snapshots.in_flight);
        let entry = in_flight.entry(self.tenant.clone()).or_default();
        entry.bytes += more;
        kept.saturating_add(entry.bytes) <= quota
    }
}

impl Drop for Taking<'_> {
    fn drop(&mut self) {
        let mut in_flight = locked(&self.snapshots.in_flight);
        if let Some(entry) = in_flight.get_mut(&self.tenant) {
            entry.count -= 1;
            entry.bytes -= self.bytes;
            if entry.count == 0 {
                in_flight.remove(&self.tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::time::Duration;
    use tokio::io::AsyncWriteExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().mode() & 0o777
    }

    #[tokio::test]
    async fn a_snapshot_appears_whole_and_private_or_not_at_all() {
        let state = tempfile::tempdir().unwrap();
        let files = SnapshotFiles::new(state.path().join("snapshots"));
        let partial = files.begin("ab12").unwrap();
        let mut part = partial.create(0).await.unwrap();
        part.write_all(b"tar bytes").await.unwrap();
        part.sync_all().await.unwrap();
        assert!(
            files.open("ab12", 0).await.is_err(),
            "not there before the commit"
        );
        partial.commit().await.unwrap();
        let mut read = String::new();
        tokio::io::AsyncReadExt::read_to_string(
            &mut files.open("ab12", 0).await.unwrap(),
            &mut read,
        )
        .await
        .unwrap();
        assert_eq!(read, "tar bytes");
        let root = state.path().join("snapshots");
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&root.join("ab12")), 0o700);
        assert_eq!(mode(&root.join("ab12/0.tar")), 0o600);

        // Dropped unfinished: nothing is left.
        let partial = files.begin("cd34").unwrap();
        partial.create(0).await.unwrap();
        drop(partial);
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);

        // A crash's leftovers go at start; recorded snapshots stay.
        std::mem::forget(files.begin("ef56").unwrap());
        std::fs::create_dir(root.join("0099")).unwrap();
        let recorded = HashSet::from(["ab12".to_string()]);
        assert_eq!(files.remove_unrecorded(&recorded).unwrap(), 2);
        assert!(files.open("ab12", 0).await.is_ok());
        files.remove("ab12").await.unwrap();
        files.remove("ab12").await.unwrap();
        assert!(files.begin("../x").is_err(), "only ids name paths");
    }

    #[tokio::test]
    async fn one_sessions_snapshots_take_turns_and_the_lock_is_forgotten_after() {
        let state = tempfile::tempdir().unwrap();
        let snapshots = Snapshots::new(SnapshotFiles::new(state.path().join("snapshots")));
        let first = snapshots.turn_of("a").await;
        let other = tokio::time::timeout(Duration::from_secs(5), snapshots.turn_of("b")).await;
        assert!(other.is_ok(), "another session does not wait");
        drop(other);
        let mut second = std::pin::pin!(snapshots.turn_of("a"));
        assert!(
            futures_util::poll!(second.as_mut()).is_pending(),
            "the same session waits for its turn"
        );
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(5), second).await;
        assert!(second.is_ok(), "its turn comes once the first is done");
        drop(second);
        assert!(locked(&snapshots.turns).is_empty(), "no lock is kept");
    }
}
