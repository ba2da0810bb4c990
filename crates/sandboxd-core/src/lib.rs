//! The session operations of sandboxd, with no HTTP in them.
//!
//! [`Core`] is the one place that touches the backend and the sandboxes' agents: it opens
//! sessions (tenant quota, a slot, a pooled or new sandbox, rollback), runs commands, moves
//! files, drives background processes and terminals, closes, expires and restores sessions.
//! Each operation checks that the [`Caller`] may reach the session, records its own activity
//! entry and returns an [`Error`] that every face (REST, MCP, the dashboard) reports in its
//! own terms.
//!
//! Its parts are leaf state that never take the core back: [`sessions`] (the open-session
//! table and its slots), [`pool`] (warm sandboxes), [`images`] (image provisioning), [`auth`]
//! (tokens and failed attempts), [`tickets`] (single-use connection tickets), [`activity`]
//! (the log's entries) and [`audit`] (refused cross-tenant attempts, for the administrator).

mod acting;
mod agent;
mod archive;
pub mod audit;
pub mod code_run;
pub mod contexts;
mod core;
mod egress;
mod error;
mod exec;
#[cfg(feature = "fake")]
pub mod fake;
mod files;
pub mod files_meta;
mod fork;
mod lifecycle;
mod maintenance;
mod pause;
pub mod ports;
pub mod processes;
mod session_tokens;
pub mod shares;
mod snapshots;
mod state;
pub mod terminal;

pub use crate::core::Core;
pub use crate::egress::EgressEvent;
pub use acting::Acting;
pub use archive::ArchiveDownload;
pub use error::Error;
pub use files::Download;
pub use maintenance::{RestoreReport, TakenBack};
pub use processes::Attachment;
pub use sandboxd_backend::{HOME_DIR, WORKDIR};
pub use state::activity::{Actor, Caller, Interface, Outcome};
pub use state::auth::Principal;
pub use state::{activity, auth, images, pool, sessions, tickets};
pub use terminal::Terminal;
