//! The state store: sessions, their activity logs and the audit log in an embedded SQLite database, so a
//! restart (or a crash) of the service loses nothing and a closed session can still be audited.
//!
//! Times are RFC 3339 strings, as the API shows them. Calls are short and synchronous; the
//! connection is shared behind a mutex. Activity entries, written on every operation, are the
//! exception: a thread of the store's own writes them in batches (see `activity`).

mod activity;
mod activity_writer;
mod audit;
mod egress;
mod error;
mod journal;
mod schema;
mod snapshots;
mod sql;
mod store;
mod volumes;

pub use activity_writer::ACTIVITY_PER_SESSION;
pub use audit::AUDIT_KEPT;
pub use error::StoreError;
pub use snapshots::SnapshotRecord;
pub use store::{SessionRecord, Store, ENDED_SESSIONS_KEPT};
pub use volumes::{MountRecord, VolumeRecord, VolumeState};
