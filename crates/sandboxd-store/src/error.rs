//! What can go wrong with the store.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("state database schema: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    #[error("the state database {path} was written by a newer sandboxd than this one: run that version (or newer), or restore the state directory's backup taken before the upgrade")]
    NewerSchema { path: PathBuf },
    #[error("cannot make {path} private: {source}")]
    Permissions {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("activity journal beside {database}: {source}")]
    Journal {
        database: PathBuf,
        source: std::io::Error,
    },
}
