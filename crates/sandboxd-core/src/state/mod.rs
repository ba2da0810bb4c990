//! The core's leaf state: the tables and logs the session operations share, each behind its
//! own lock. Nothing here takes the [`Core`](crate::Core) or an operation back: the operations
//! (`ops/`) hold the state through the core and call into it, never the other way round.

pub mod activity;
pub mod auth;
pub(crate) mod context_table;
pub mod images;
pub(crate) mod lifecycle;
#[cfg(test)]
mod limit_tests;
pub(crate) mod narrowed_lists;
pub mod pool;
pub(crate) mod port_connections;
pub(crate) mod program;
pub mod sessions;
pub(crate) mod share_table;
pub(crate) mod snapshot_files;
pub mod tickets;
pub(crate) mod volume_table;
pub(crate) mod watch_table;
