//! The session operations of sandboxd, with no HTTP in them.
//!
//! [`Core`] is the one place that touches the backend and the sandboxes' agents: it opens
//! sessions (tenant quota, a slot, a pooled or new sandbox, rollback), runs commands, moves
//! files, drives background processes and terminals, closes, expires and restores sessions.
//! Each operation checks that the [`Caller`] may reach the session, records its own activity
//! entry and returns an [`Error`] that every face (REST, MCP, the dashboard) reports in its
//! own terms.
//!
//! Its parts: the leaf state (`state/`), which never takes the core back: [`sessions`] (the
//! open-session table and its slots), [`pool`] (warm sandboxes), [`images`] (image
//! provisioning), [`auth`] (tokens and failed attempts), [`tickets`] (single-use connection
//! tickets), [`activity`] (the log's entries) and the per-session tables; the [`Core`] that
//! holds them (`core.rs`); and the operations (`ops/`), every one an `impl Core` block in the
//! module of its kind, [`audit`] (refused cross-tenant attempts) among them. This root only
//! declares the modules and hands their public names on.

mod agent_error;
mod core;
mod error;
#[cfg(feature = "fake")]
pub mod fake;
mod ops;
mod state;

pub use crate::core::Core;
pub use error::{Error, CODE_EXISTS, CODE_SPAWN_FAILED};
pub use ops::acting::Acting;
pub use ops::archive::ArchiveDownload;
pub use ops::computer::ScreenshotPng;
pub use ops::egress::EgressEvent;
pub use ops::files::Download;
pub use ops::maintenance::{RestoreReport, TakenBack};
pub use ops::processes::Attachment;
pub use ops::screen_view::ScreenView;
pub use ops::terminal::Terminal;
pub use ops::volume_files::VolumeDownload;
pub use ops::{
    audit, code_run, contexts, files_meta, ports, processes, shares, terminal, volume_entries,
};
pub use sandboxd_backend::{VolumeEntry, VolumeEntryKind, VolumePathOp, HOME_DIR, WORKDIR};
pub use state::activity::{Actor, Caller, Interface, Outcome};
pub use state::auth::Principal;
pub use state::lifecycle::LifecycleEvent;
pub use state::{activity, auth, images, pool, sessions, tickets};
