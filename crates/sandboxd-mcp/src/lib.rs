//! The sandboxd MCP server: tools with which an agent opens sandboxes, runs commands and code
//! in them, and reads and writes their files.
//!
//! The tools act through [`sandboxd_api::Sandboxes`], reached by a [`Connector`] per call, so
//! there is one implementation and two ways to reach it:
//!
//! - [`serve_stdio`]: `sandboxd mcp` speaks MCP on stdin/stdout, for an agent that launches it
//!   as a subprocess, and forwards to a running service over HTTP with the token it was given
//!   (interface `mcp` in the activity log).
//! - [`http_service`]: the streamable HTTP transport the service mounts at `/mcp`, behind its
//!   own token check and Host/Origin guard; its connector calls the service's core in process,
//!   as the principal that request's token belongs to.

mod answer;
mod code_tools;
mod errors;
mod network_tools;
mod output;
mod params;
mod port_tools;
mod running;
mod schemas;
mod sessions;
mod snapshot_tools;
mod tools;
mod volume_tools;

pub use output::{CommandResult, OUTPUT_DIR};
pub use running::RequestGone;
pub use sessions::MAX_SESSIONS;
pub use tools::{too_large_message, Connector, SandboxTools};

use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use sandboxd_api::Sandboxes;
use sandboxd_client::Client;
use sessions::BoundedSessions;
use std::sync::Arc;

/// The streamable HTTP service for `/mcp`: each tool call acts through `connector` with the
/// HTTP request that carried it, and answers stream (Server-Sent Events), so progress
/// notifications reach the client while a command runs.
///
/// Clients that begin with the `initialize` handshake get an MCP session (`Mcp-Session-Id`),
/// through which their `notifications/cancelled` reaches the call it names; at most
/// [`sessions::MAX_SESSIONS`] are kept, each until it idles for five minutes or its client
/// ends it. Clients of the per-request protocol (2026-07-28) are served without one. The
/// tools keep no state between calls either way: the sandbox session id is an argument of
/// each. The service's guard checks `Host` and `Origin` before a request gets here, by the
/// service's rules, so rmcp's own loopback-only Host list is turned off rather than kept as a
/// second, different policy; the service also bounds the request body, answering a JSON-RPC
/// error above it.
pub fn http_service(
    connector: Arc<dyn Connector>,
) -> StreamableHttpService<SandboxTools, BoundedSessions> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_json_response(false)
        .disable_allowed_hosts()
        .with_max_request_body_bytes(usize::MAX);
    StreamableHttpService::new(
        move || Ok(SandboxTools::new(connector.clone())),
        Arc::new(BoundedSessions::default()),
        config,
    )
}

/// Acts with one client's own token, whatever the request.
struct ClientConnector(Client);

impl Connector for ClientConnector {
    fn connect(&self, _: Option<&http::request::Parts>) -> Result<Box<dyn Sandboxes>, String> {
        Ok(Box::new(self.0.clone()))
    }
}

/// Serves MCP on stdin/stdout until the client closes it, forwarding to the service `client`
/// points at with the client's own token.
pub async fn serve_stdio(client: Client) -> Result<(), StdioError> {
    let running = SandboxTools::new(Arc::new(ClientConnector(client)))
        .serve(rmcp::transport::stdio())
        .await
        .map_err(Box::new)?;
    running.waiting().await?;
    Ok(())
}

/// The MCP session on stdin/stdout could not start or ended abnormally.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    #[error("the MCP client on stdin/stdout did not complete the handshake: {0}")]
    Handshake(#[from] Box<rmcp::service::ServerInitializeError>),
    #[error("the MCP server stopped abnormally: {0}")]
    Stopped(#[from] tokio::task::JoinError),
}
