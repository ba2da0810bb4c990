//! The sandboxd HTTP service: the REST API under `/v1`, `/healthz`, `/metrics`, the MCP
//! endpoint at `/mcp` and the dashboard, all thin faces over [`sandboxd_core::Core`].
//!
//! [`app`] builds the router; [`serve`] runs it on a listener until the shutdown future
//! completes. [`assemble()`] puts the whole service together (state directory, backend, egress
//! proxy, listener) the way `sandboxd serve` runs it: the binary only parses flags and calls it.

mod admission;
mod app;
mod assemble;
mod auth;
mod connections;
mod dashboard;
mod error;
mod extract;
mod inflight;
mod linger;
mod mcp;
mod mcp_owners;
mod metrics;
mod openapi;
mod origin;
mod proxy;
mod proxy_doc;
mod routes;
mod state;

pub use app::{app, serve};
pub use assemble::{assemble, new_token, AssembleError, Service, ServiceOptions};
pub use error::ApiError;
pub use mcp::MCP_PATH;
pub use state::AppState;
