//! The E2B-compatible face of sandboxd: the control plane of E2B's API (with its volumes and
//! their content API) and the API of its in-sandbox daemon (envd), so that the official E2B
//! SDKs run unchanged against sandboxd.
//! Translation only: every call is one or a few operations of [`sandboxd_core::Core`], made
//! as interface `e2b`; sandboxes are sessions, commands background processes.
//!
//! One address serves both, routed per request: a request naming a sandbox (the SDKs'
//! `E2b-Sandbox-Id` header with `E2b-Sandbox-Port`, or a `PORT-SANDBOXID.DOMAIN` host when
//! `e2b.domain` is set) goes to envd for envd's port, to the sandbox's own server through the
//! service's port proxy for any other, and anything else on E2B's control-plane paths (or on `api.DOMAIN`) to the control
//! plane, and the rest to the service's own answer for unknown routes. A signed file URL
//! (`/files?signature=...`) goes to envd once its signature names the sandbox. Mounted as the
//! service's fallback, so it never shadows a route of sandboxd's own; a request naming a
//! sandbox is handed to it first ([`names_a_sandbox`]), as every path is the sandbox's.

mod app;
mod call;
mod caller;
mod connect;
mod control;
mod envd;
mod errors;
mod files;
mod filesystem;
mod interpreter;
mod listing;
mod naming;
mod network;
mod paging;
mod pause;
mod ports;
mod process;
mod routing;
mod signed;
mod snapshots;
mod state;
mod volume_content;
mod volumes;
mod watch_limits;
mod watchers;

pub use app::router;
pub use naming::{ACCESS_TOKEN_HEADERS, SANDBOX_ID_HEADER};
pub use ports::PortRequest;
pub use routing::names_a_sandbox;
pub use state::{ClientAddress, Face, ENVD_VERSION};
