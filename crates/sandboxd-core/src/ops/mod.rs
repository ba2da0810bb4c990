//! The session operations: every `impl Core` block but the core's own constructor and
//! accessors, one module per kind of operation. Each checks that the caller may reach the
//! session, records its activity entry and uses the leaf state (`state/`) through the core.

pub(crate) mod access;
pub(crate) mod acting;
pub(crate) mod archive;
pub mod audit;
pub mod code_run;
pub mod computer;
pub(crate) mod computer_commands;
pub mod contexts;
pub(crate) mod egress;
pub(crate) mod exec;
pub(crate) mod files;
pub mod files_meta;
pub(crate) mod fork;
pub(crate) mod lifecycle;
pub(crate) mod maintenance;
pub(crate) mod memory_copy;
pub(crate) mod pause;
pub mod ports;
pub mod processes;
pub(crate) mod rfb_gate;
pub(crate) mod screen_recording;
pub(crate) mod screen_view;
pub(crate) mod screenshot_image;
pub(crate) mod session_tokens;
pub mod shares;
pub(crate) mod snapshots;
pub mod terminal;
pub(crate) mod tickets;
pub mod volume_entries;
pub(crate) mod volume_files;
pub(crate) mod volume_mounts;
pub(crate) mod volumes;
pub(crate) mod webhooks;
