//! The tools for a session's egress allow-list: a router of their own, added to the other
//! tools' in [`SandboxTools::new`].

use crate::answer::{Answer, Refusal};
use crate::errors::tool_error;
use crate::params::SessionParams;
use crate::tools::SandboxTools;
use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use sandboxd_api::{EgressRule, SessionNetwork};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetNetworkParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The names it may reach from now on, e.g. ["pypi.org", "*.github.com"]; each one
    /// allowed by its runtime's list. An empty list allows nothing.
    pub egress: Vec<EgressRule>,
}

#[tool_router(router = network_tool_router, vis = "pub(crate)")]
impl SandboxTools {
    #[tool(
        title = "Get network access",
        description = "The names a session of a runtime with network_mode \"egress\" may reach (e.g. \"pypi.org\", \"*.github.com\", \"api.example.com:8443\"; ports 80 and 443 when none is named). Everything else is refused by the service's proxy, as are private and host addresses.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SessionNetwork>()
    )]
    async fn get_network(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let network = client
            .session_network(&params.session_id)
            .await
            .map_err(tool_error)?;
        Ok(Answer::json(&network))
    }

    #[tool(
        title = "Narrow network access",
        description = "Narrow the names a session may reach: replaces its list with one its runtime's list allows (never more). New connections follow it at once.",
        annotations(idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SessionNetwork>()
    )]
    async fn set_network(
        &self,
        Parameters(params): Parameters<SetNetworkParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let network = SessionNetwork {
            egress: params.egress,
        };
        let network = client
            .set_session_network(&params.session_id, network)
            .await
            .map_err(tool_error)?;
        Ok(Answer::json(&network))
    }
}
