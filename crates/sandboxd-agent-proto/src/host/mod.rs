//! The service side of the protocol: async framing, the dial-in [`AgentHub`] and the clients.
//!
//! Each topic's clients are re-exported whole (`pub use process::*`): a client added to its
//! topic's file is reachable as `host::name` without a line here.

mod archive;
mod exec;
mod files;
mod files_meta;
mod framing;
mod hub;
mod kernel;
mod ports;
mod process;
mod secret;
mod wake;

pub use archive::*;
pub use exec::*;
pub use files::*;
pub use files_meta::*;
pub use framing::{read_frame, write_frame, write_json};
pub use hub::{AgentHub, AgentLease, HELLO_TIMEOUT, MAX_IDLE};
pub use kernel::*;
pub use ports::*;
pub use process::*;
pub use secret::{claim, AgentKey};
pub use wake::{make_wake_fifo, wake_agent};
