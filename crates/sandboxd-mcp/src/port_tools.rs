//! The tools for a session's ports: what listens in the sandbox, and share links that show a
//! server running there in a browser without the token. A router of their own, added to the
//! other tools' in [`SandboxTools::new`].

use crate::answer::{Answer, Refusal};
use crate::errors::tool_error;
use crate::params::SessionParams;
use crate::tools::SandboxTools;
use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use sandboxd_api::{PortList, ShareInfo, ShareList};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write;

/// Ports the text of list_ports names at most; the structured answer has them all.
const MAX_PORTS_SHOWN: usize = 50;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SharePortParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The TCP port a server listens on inside the sandbox (list_ports shows them).
    #[schemars(range(min = 1))]
    pub port: u16,
    /// How long the link works, in seconds (default and at most 3600).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub ttl_secs: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevokeShareParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The link's `id`, as share_port or list_shares returned it.
    pub share_id: String,
}

#[tool_router(router = port_tool_router, vis = "pub(crate)")]
impl SandboxTools {
    #[tool(
        title = "List listening ports",
        description = "List the TCP ports listening inside a session's sandbox: port, address (127.0.0.1 and 0.0.0.0 are both reachable) and the process (pid, program) holding each. Use it to check that a server you started (e.g. `python3 -m http.server 8000 &` with run_command) is up before share_port.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<PortList>()
    )]
    async fn list_ports(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let ports = client
            .list_ports(&params.session_id)
            .await
            .map_err(tool_error)?;
        Ok(Answer::with_text(ports_text(&ports), &ports))
    }

    #[tool(
        title = "Share a port",
        description = "Make a link that opens a server running in the session (on the sandbox's own loopback, at `port`) in a browser, without a token and without giving the sandbox a network: give `url` to the user. It reaches only that port of that session, stops working after ttl_secs (default and at most 3600), when revoked with revoke_share, or when the session closes. The sandbox sees none of the service's credentials. The link is shown this once; list_shares lists links without it.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<ShareInfo>()
    )]
    async fn share_port(
        &self,
        Parameters(params): Parameters<SharePortParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let mut share = client
            .share_port(&params.session_id, params.port, params.ttl_secs)
            .await
            .map_err(tool_error)?;
        if share.url.is_none() {
            share.url = service_url(&context, share.path.as_deref());
        }
        let text = format!(
            "Link to port {} (works without a token until {}): {}\nid {} (revoke_share ends it)",
            share.port,
            share.expires_at,
            share
                .url
                .as_deref()
                .or(share.path.as_deref())
                .unwrap_or_default(),
            share.id
        );
        Ok(Answer::with_text(text, &share))
    }

    #[tool(
        title = "List share links",
        description = "List a session's share links that still work: id, port, created_at, expires_at, created_by (not the link itself, which only share_port shows).",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ShareList>()
    )]
    async fn list_shares(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let shares = client.list_shares(&params.session_id).await;
        Ok(Answer::json(&shares.map_err(tool_error)?))
    }

    #[tool(
        title = "Revoke a share link",
        description = "Revoke a share link at once: the next request through it fails. Returns the link revoked.",
        annotations(
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<ShareInfo>()
    )]
    async fn revoke_share(
        &self,
        Parameters(params): Parameters<RevokeShareParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let revoked = client
            .revoke_share(&params.session_id, &params.share_id)
            .await;
        Ok(Answer::json(&revoked.map_err(tool_error)?))
    }
}

/// One line a port, as many as a model needs.
fn ports_text(list: &PortList) -> String {
    if list.ports.is_empty() {
        return "No TCP port is listening in the sandbox.".into();
    }
    let mut text = String::new();
    for port in list.ports.iter().take(MAX_PORTS_SHOWN) {
        let _ = write!(text, "{} on {}", port.port, port.address);
        match (&port.program, port.pid) {
            (Some(program), Some(pid)) => {
                let _ = write!(text, " ({program}, pid {pid})");
            }
            (None, Some(pid)) => {
                let _ = write!(text, " (pid {pid})");
            }
            _ => {}
        }
        text.push('\n');
    }
    if list.ports.len() > MAX_PORTS_SHOWN {
        let _ = writeln!(
            text,
            "... and {} more (all in the structured answer)",
            list.ports.len() - MAX_PORTS_SHOWN
        );
    }
    text
}

/// The link as the client reached the service, for tools served in process (over HTTP, whose
/// `Host` the service's guard has already checked).
fn service_url(context: &RequestContext<RoleServer>, path: Option<&str>) -> Option<String> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    let host = parts.headers.get(http::header::HOST)?.to_str().ok()?;
    Some(format!("http://{host}{}", path?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandboxd_api::PortInfo;

    #[test]
    fn the_port_text_is_bounded_and_names_the_process() {
        let port = |n| PortInfo {
            port: n,
            address: "0.0.0.0".into(),
            pid: Some(7),
            program: Some("python3".into()),
        };
        let text = ports_text(&PortList {
            ports: (1..=60).map(port).collect(),
        });
        assert!(
            text.starts_with("1 on 0.0.0.0 (python3, pid 7)\n"),
            "{text}"
        );
        assert_eq!(text.lines().count(), MAX_PORTS_SHOWN + 1);
        assert!(text.ends_with("and 10 more (all in the structured answer)\n"));
        let empty = ports_text(&PortList { ports: vec![] });
        assert!(empty.contains("No TCP port"));
    }
}
