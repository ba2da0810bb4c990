//! What the volume operations share in memory: one turn at a time for the steps that check
//! and change who uses which volume (create, delete, mounts at open), and the sessions being
//! opened with volumes, which use them before the session table knows them.

use std::collections::HashSet;
use std::sync::Mutex;

#[derive(Default)]
pub struct VolumeTable {
    turn: tokio::sync::Mutex<()>,
    opening: Mutex<HashSet<String>>,
}

/// A session being opened with volumes; dropping it forgets it.
pub struct Opening<'a> {
    table: &'a VolumeTable,
    session_id: String,
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.table
            .opening
            .lock()
            .expect("volume table lock")
            .remove(&self.session_id);
    }
}

impl VolumeTable {
    /// Held while a volume operation checks and changes who uses what.
    pub async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn.lock().await
    }

    /// Counts `session_id` as using its volumes until the guard is dropped (once the session
    /// is in the session table, or failed to open).
    pub fn opening(&self, session_id: &str) -> Opening<'_> {
        self.opening
            .lock()
            .expect("volume table lock")
            .insert(session_id.to_string());
        Opening {
            table: self,
            session_id: session_id.to_string(),
        }
    }

    pub fn is_opening(&self, session_id: &str) -> bool {
        self.opening
            .lock()
            .expect("volume table lock")
            .contains(session_id)
    }
}
