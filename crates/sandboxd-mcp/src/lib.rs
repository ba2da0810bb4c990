//! The sandboxd MCP server: tools with which an agent opens sandboxes, runs commands and code
//! in them, and reads and writes their files.
//!
//! Every tool forwards to the sandboxd HTTP API through [`sandboxd_client`], with the
//! `X-Sandboxd-Client: mcp` header, so MCP operations show in the activity log with interface
//! `mcp`. There is one implementation and two ways to reach it:
//!
//! - [`serve_stdio`]: `sandboxd mcp` speaks MCP on stdin/stdout, for an agent that launches it
//!   as a subprocess, and forwards to a running service with the token it was given.
//! - [`http_service`]: the streamable HTTP transport the service mounts at `/mcp`, behind its
//!   own token check and Host/Origin guard. Each tool call forwards to the service's own
//!   loopback address with the bearer token of the HTTP request that carried it.

mod tools;

pub use tools::SandboxTools;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use sandboxd_client::{Client, Interface};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// The streamable HTTP service for `/mcp` of the service listening on `api_address`: each
/// tool call goes to the API there (over loopback when it listens on all addresses) with the
/// bearer token of the HTTP request that carried it.
///
/// It is stateless (no MCP session ids, plain JSON answers): the tools keep no state between
/// calls, the sandbox session id is an argument of each. The service's guard checks `Host` and
/// `Origin` before a request gets here, by the service's rules (which also accept the IP
/// addresses and the names the operator allows), so rmcp's own loopback-only Host list is
/// turned off rather than kept as a second, different policy.
pub fn http_service(
    api_address: SocketAddr,
) -> StreamableHttpService<SandboxTools, NeverSessionManager> {
    let mut reachable = api_address;
    if reachable.ip().is_unspecified() {
        reachable.set_ip(match reachable.ip() {
            IpAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
            IpAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
        });
    }
    let client = Client::new(&format!("http://{reachable}"), "", Interface::Mcp)
        .expect("the http URL of a socket address is valid");
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .disable_allowed_hosts();
    StreamableHttpService::new(
        move || Ok(SandboxTools::with_request_token(client.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

/// Serves MCP on stdin/stdout until the client closes it, forwarding to the service `client`
/// points at with the client's own token.
pub async fn serve_stdio(client: Client) -> Result<(), StdioError> {
    let running = SandboxTools::with_client_token(client)
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
