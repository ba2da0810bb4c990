//! The MCP tools. Each is one or a few calls to the sandboxd API; a failed call comes back as
//! a tool error whose text is the service's error code and message, plus what to do next in
//! this interface's words, so an agent can read it and act.
//!
//! Descriptions name the limits in force with placeholders (`{default_timeout}`,
//! `{max_timeout}`, `{output_budget}`, `{upload_cap}`), filled in from the service's policy
//! when the tools are listed.

use crate::answer::{Answer, Refusal};
use crate::errors::tool_error;
use crate::output::{captured, size, CommandResult};
use crate::params::*;
use crate::running::{cancellable, watched};
use crate::schemas::portable;
use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
// Logging is deprecated by SEP-2577; handshake-era clients still send logging/setLevel.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use sandboxd_api::{
    CreateSession, ExecRequest, FileList, FileWritten, KilledProcesses, OutputWatch, Policy,
    RuntimeList, Sandboxes, SessionInfo, SessionList,
};
use std::sync::Arc;

/// The largest file `read_file` returns: more would flood an agent's context.
const MAX_READ_BYTES: u64 = 256 << 10;

/// Where the tools act, for one tool call: the service's core in process, or the API over HTTP.
pub trait Connector: Send + Sync + 'static {
    /// The sandboxes to act on with the credentials of the call, whose HTTP request (when it
    /// came over HTTP) is `request`; an error is the tool error to answer.
    fn connect(&self, request: Option<&http::request::Parts>)
        -> Result<Box<dyn Sandboxes>, String>;
}

/// The sandboxd tools.
#[derive(Clone)]
pub struct SandboxTools {
    connector: Arc<dyn Connector>,
    tool_router: ToolRouter<SandboxTools>,
}

#[tool_router]
impl SandboxTools {
    pub fn new(connector: Arc<dyn Connector>) -> SandboxTools {
        SandboxTools {
            connector,
            tool_router: Self::tool_router()
                + Self::snapshot_tool_router()
                + Self::port_tool_router()
                + Self::network_tool_router()
                + Self::volume_tool_router(),
        }
    }

    /// The sandboxes to act on for this call.
    pub(crate) fn client(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Box<dyn Sandboxes>, String> {
        let request = context.extensions.get::<http::request::Parts>();
        self.connector.connect(request)
    }

    #[tool(
        title = "List runtimes",
        description = "List the runtimes this service allows: for each, its name (pass it to open_session), description (what it is for), image or recipe, mem_limit_bytes, cpus, pids_limit, network_mode (\"none\" means no network), tmpfs_size_bytes, interpreter (the program run_code uses; empty when the runtime has none) and state (\"ready\", or not built yet: the first session then waits for its build). default_runtime is used when open_session names none.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<RuntimeList>()
    )]
    async fn list_runtimes(
        &self,
        Parameters(NoParams {}): Parameters<NoParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let runtimes = client.runtimes().await.map_err(tool_error)?;
        Ok(Answer::json(&runtimes))
    }

    #[tool(
        title = "Open a session",
        description = "Open a new sandbox session: an isolated container of the chosen runtime, with /workspace (the working directory) and /tmp writable and kept for the session's life, everything else read-only, and no network unless the runtime's network_mode allows it. Returns the session (id, runtime, tenant, labels, state, created_at, ...); pass its `id` as session_id to the other tools. Close it with close_session when done: the service allows a limited number of open sessions, and idle ones expire.{runtimes}",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<SessionInfo>()
    )]
    async fn open_session(
        &self,
        Parameters(params): Parameters<OpenSessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let request = CreateSession {
            runtime: params.runtime,
            tenant: params.tenant,
            labels: params.labels,
            snapshot: None,
            egress: params.egress,
            volumes: params.volumes,
        };
        let opened = cancellable(&context, None, async {
            client.open_session(request).await.map_err(tool_error)
        })
        .await?;
        Ok(Answer::json(&opened))
    }

    #[tool(
        title = "List sessions",
        description = "List the open sessions (id, runtime, tenant, labels, state, created_at, idle_secs, memory_bytes, process_count), and with include_ended also the recently ended ones with end_reason.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SessionList>()
    )]
    async fn list_sessions(
        &self,
        Parameters(params): Parameters<ListSessionsParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let sessions = client
            .list_sessions(params.include_ended)
            .await
            .map_err(tool_error)?;
        Ok(Answer::json(&sessions))
    }

    #[tool(
        title = "Close a session",
        description = "Close a session at once: its sandbox, processes and files are removed. Returns the ended session. Copy out anything you need with read_file first.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<SessionInfo>()
    )]
    async fn close_session(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let closed = client
            .close_session(&params.session_id)
            .await
            .map_err(tool_error)?;
        Ok(Answer::json(&closed))
    }

    #[tool(
        title = "Kill all processes",
        description = "Kill every process running in a session: what a command left running in the background, including processes that detached themselves (setsid, daemons), which a command's timeout does not reach. Use it when commands hang or fail with `Resource temporarily unavailable` because leftovers fill the session's process limit. The session, its files and /workspace stay. Returns killed and remaining (remaining > 0: something forks faster than it can be killed; call again or close the session).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<KilledProcesses>()
    )]
    async fn kill_all_processes(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let killed = client
            .kill_all_processes(&params.session_id)
            .await
            .map_err(tool_error)?;
        Ok(Answer::json(&killed))
    }

    #[tool(
        title = "Run a shell command",
        description = "Run a shell command in a session with /bin/sh -c and wait for it to end (timeout {default_timeout} s by default, at most {max_timeout} s with timeout_secs). The text shows how it ended and the output: at most about {output_budget} bytes of both streams together; a longer stream shows its head and tail around a line saying what was left out and which file in the session holds it (read it in parts with sed -n, grep, tail). The structured content has exit_code (null when a signal killed it; `signal` says which), the bytes each stream wrote, timed_out and oom_killed. A non-zero exit code is a result, not a tool error. Each command is its own process: a `cd`, an exported variable or a background job does not carry over, so chain steps with && (e.g. `cd src && make`) or pass cwd and env. Files in /workspace and /tmp stay for the session. Cancelling the call kills the command.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<CommandResult>()
    )]
    async fn run_command(
        &self,
        Parameters(params): Parameters<RunCommandParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let request = ExecRequest {
            command: Some(params.command),
            cwd: params.cwd,
            env: params.env,
            stdin: params.stdin,
            timeout_secs: params.timeout_secs,
            ..ExecRequest::default()
        };
        run(client.as_ref(), &context, &params.session_id, request).await
    }

    #[tool(
        title = "Run code",
        description = "Run source code in a session and wait for it. With a kernel (`kernels` in list_runtimes) it runs in a stateful context: variables persist, plots come back as images, `context` picks another context. Otherwise a fresh `interpreter` process runs it. Timeout {default_timeout} s by default, at most {max_timeout} s. Output is sized as run_command's. Cancelling the call stops the code.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<CommandResult>()
    )]
    async fn run_code(
        &self,
        Parameters(params): Parameters<RunCodeParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let session = client
            .session(&params.session_id)
            .await
            .map_err(tool_error)?;
        let runtimes = client.runtimes().await.map_err(tool_error)?;
        let runtime = runtimes
            .runtimes
            .into_iter()
            .find(|entry| entry.runtime.name == session.runtime)
            .map(|entry| entry.runtime);
        if runtime.as_ref().is_some_and(|r| !r.kernels.is_empty()) || params.context.is_some() {
            let policy = client.policy().await.map_err(tool_error)?;
            let limit = params.timeout_secs.unwrap_or(policy.default_timeout_secs);
            let request = sandboxd_api::RunCode {
                cwd: None,
                code: params.code,
                context: params.context,
                timeout_secs: params.timeout_secs,
                ..sandboxd_api::RunCode::default()
            };
            return crate::code_tools::run_in_context(
                client.as_ref(),
                &context,
                &params.session_id,
                request,
                limit,
            )
            .await;
        }
        let interpreter = runtime.map(|r| r.interpreter).unwrap_or_default();
        if interpreter.is_empty() {
            return Err(Refusal::Tool(format!(
                "no_interpreter: runtime \"{}\" of this session names no interpreter for source code; run a program with run_command instead (e.g. write it with write_file and run it)",
                session.runtime
            )));
        }
        let request = ExecRequest {
            argv: Some(interpreter),
            stdin: Some(params.code),
            cwd: params.cwd,
            env: params.env,
            timeout_secs: params.timeout_secs,
            ..ExecRequest::default()
        };
        run(client.as_ref(), &context, &params.session_id, request).await
    }

    #[tool(
        title = "Write a file",
        description = "Write a text file in a session, replacing it whole if it exists and creating missing parent directories. Writable places are /workspace (where relative paths point) and /tmp. Files of up to {upload_cap} bytes: a larger request is refused whole. Returns the path and the bytes written.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<FileWritten>()
    )]
    async fn write_file(
        &self,
        Parameters(params): Parameters<WriteFileParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let policy = client.policy().await.map_err(tool_error)?;
        let size = params.content.len() as u64;
        if size > policy.max_upload_bytes {
            return Err(Refusal::Request(too_large(size, policy.max_upload_bytes)));
        }
        let written = cancellable(&context, None, async {
            client
                .write_file(
                    &params.session_id,
                    &params.path,
                    params.content.into_bytes(),
                )
                .await
                .map_err(tool_error)
        })
        .await?;
        Ok(Answer::json(&written))
    }

    #[tool(
        title = "Read a file",
        description = "Read a text file from a session and return its contents. Files over 256 KiB or not UTF-8 text are refused with a tool error: look at those with run_command (head, tail, grep, wc, base64).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn read_file(
        &self,
        Parameters(params): Parameters<ReadFileParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<String, Refusal> {
        let client = self.client(&context)?;
        let contents = client
            .read_file(&params.session_id, &params.path, MAX_READ_BYTES)
            .await
            .map_err(tool_error)?
            .ok_or_else(|| {
                format!(
                    "file_too_large: {} is over {} KiB, more than read_file returns; read parts of it with run_command (head -c, tail, grep)",
                    params.path,
                    MAX_READ_BYTES >> 10
                )
            })?;
        String::from_utf8(contents).map_err(|_| {
            Refusal::Tool(format!(
                "not_text: {} is not UTF-8 text; inspect it with run_command (e.g. `file`, `xxd | head`, `base64`)",
                params.path
            ))
        })
    }

    #[tool(
        title = "List a directory",
        description = "List a directory in a session: each entry's name, type (file, dir, symlink or other), size in bytes, mode and modified time, sorted by name. `truncated` is true when the directory holds more entries than one listing returns.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<FileList>()
    )]
    async fn list_directory(
        &self,
        Parameters(params): Parameters<ListDirectoryParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Answer, Refusal> {
        let client = self.client(&context)?;
        let listing = client
            .list_files(&params.session_id, params.path)
            .await
            .map_err(tool_error)?;
        Ok(Answer::json(&listing))
    }
}

/// Runs a command for run_command or run_code, until it ends or the call is cancelled, and
/// sizes its output for a model.
async fn run(
    client: &dyn Sandboxes,
    context: &RequestContext<RoleServer>,
    session_id: &str,
    request: ExecRequest,
) -> Result<Answer, Refusal> {
    let policy = client.policy().await.map_err(tool_error)?;
    let limit = request.timeout_secs.unwrap_or(policy.default_timeout_secs);
    let output = OutputWatch::default();
    let result = watched(context, Some(limit), Some(&output), async {
        client
            .exec_watched(session_id, request, &output)
            .await
            .map_err(tool_error)
    })
    .await?;
    let (stdout, stderr) = captured(&result);
    let streams = size(client, session_id, policy.mcp_output_bytes, stdout, stderr).await;
    let sized = CommandResult::new(&result, streams);
    Ok(Answer::with_text(sized.text(), &sized))
}

/// The JSON-RPC error for a request over the policy's upload cap, as `/mcp` also answers it
/// for a request body over the cap.
pub fn too_large(size: u64, limit: u64) -> ErrorData {
    ErrorData::invalid_request(too_large_message(Some(size), limit), None)
}

/// What a request over the limit is told.
pub fn too_large_message(size: Option<u64>, limit: u64) -> String {
    let size = size.map(|s| format!(" of {s} bytes")).unwrap_or_default();
    format!(
        "payload_too_large: the request{size} is over this service's limit of {limit} bytes (policy.max_upload_bytes); write large files in parts, or have the operator raise the limit"
    )
}

impl SandboxTools {
    /// The tools as listed: the limits in `policy` and the runtimes in their descriptions,
    /// their schemas portable.
    pub(crate) fn tools(
        &self,
        policy: Option<&Policy>,
        runtimes: Option<&RuntimeList>,
    ) -> Vec<Tool> {
        let mut tools = self.tool_router.list_all();
        for tool in &mut tools {
            if let Some(description) = &tool.description {
                tool.description = Some(describe(description, policy, runtimes).into());
            }
        }
        tools.into_iter().map(portable).collect()
    }
}

/// The most runtimes open_session's description names; list_runtimes has them all.
const MAX_DESCRIBED_RUNTIMES: usize = 32;

/// The runtimes with what each is for, as open_session's description ends: the `{runtimes}`
/// placeholder. Empty when they cannot be listed.
fn runtimes_help(list: Option<&RuntimeList>) -> String {
    let Some(list) = list.filter(|l| !l.runtimes.is_empty()) else {
        return String::new();
    };
    let named: Vec<String> = list
        .runtimes
        .iter()
        .take(MAX_DESCRIBED_RUNTIMES)
        .map(|entry| {
            let runtime = &entry.runtime;
            let default = if runtime.name == list.default_runtime {
                " (the default)"
            } else {
                ""
            };
            match runtime.description.as_str() {
                "" => format!("\"{}\"{default}", runtime.name),
                description => format!("\"{}\"{default}: {description}", runtime.name),
            }
        })
        .collect();
    let more = list.runtimes.len().saturating_sub(MAX_DESCRIBED_RUNTIMES);
    let more = if more > 0 {
        format!("; and {more} more (list_runtimes)")
    } else {
        String::new()
    };
    format!(" Runtimes: {}{more}.", named.join("; "))
}

/// A tool's description with the limits in force and the runtimes filled in.
fn describe(description: &str, policy: Option<&Policy>, runtimes: Option<&RuntimeList>) -> String {
    let figures = [
        ("{default_timeout}", policy.map(|p| p.default_timeout_secs)),
        ("{max_timeout}", policy.map(|p| p.max_timeout_secs)),
        ("{output_budget}", policy.map(|p| p.mcp_output_bytes)),
        ("{upload_cap}", policy.map(|p| p.max_upload_bytes)),
    ];
    let mut text = description.to_string();
    for (placeholder, figure) in figures {
        let figure = figure.map_or_else(|| "the policy's".to_string(), |f| f.to_string());
        text = text.replace(placeholder, &figure);
    }
    if text.contains("{runtimes}") {
        text = text.replace("{runtimes}", &runtimes_help(runtimes));
    }
    text
}

const INSTRUCTIONS: &str = "sandboxd runs code in isolated sandboxes on this host. Typical use: list_runtimes, open_session, then write_file / run_command / run_code / read_file / list_directory with the session's id, then close_session. A session keeps its files in /workspace and /tmp between calls, but every command is a new process. There is no network unless the runtime allows it. Close sessions you no longer need: the service allows a limited number.";

#[tool_handler(router = self.tool_router)]
impl ServerHandler for SandboxTools {
    #[allow(deprecated)] // logging: see SetLevelRequestParams
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("sandboxd", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS.to_string())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (policy, runtimes) = match self.client(&context) {
            Ok(client) => {
                let (policy, runtimes) = tokio::join!(client.policy(), client.runtimes());
                (policy.ok(), runtimes.ok())
            }
            Err(_) => (None, None),
        };
        Ok(ListToolsResult::with_all_items(
            self.tools(policy.as_ref(), runtimes.as_ref()),
        ))
    }

    /// The tools log nothing to the client; any level is accepted.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}
