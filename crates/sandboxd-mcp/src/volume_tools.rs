//! The volumes tool: a router of its own, added to the other tools' in
//! [`SandboxTools::new`]. Volumes are mounted with open_session's `volumes`.

use crate::answer::{Answer, Refusal};
use crate::errors::tool_error;
use crate::params::NoParams;
use crate::tools::SandboxTools;
use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use sandboxd_api::VolumeList;

#[tool_router(router = volume_tool_router, vis = "pub(crate)")]
impl SandboxTools {
    #[tool(
        title = "List volumes",
        description = "List the volumes you may mount: storage that outlives sessions and is shared between them (name, size_bytes, used_bytes, the open sessions mounting it). Mount one when opening a session with open_session's `volumes`.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<VolumeList>()
    )]
    async fn list_volumes(
        &self,
        Parameters(NoParams {}): Parameters<NoParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let volumes = client.list_volumes().await.map_err(tool_error)?;
        Ok(Answer::json(&volumes))
    }
}
