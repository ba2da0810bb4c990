//! The MCP tools. Each is one or a few calls to the sandboxd API; a failed call comes back as
//! a tool error whose text is the service's error code and message, plus what to do next
//! where that is not obvious, so an agent can read it and act.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, RoleServer, ServerHandler};
use sandboxd_api::{
    CreateSession, ExecRequest, ExecResult, FileList, FileWritten, KilledProcesses, RuntimeList,
    SessionInfo, SessionList,
};
use sandboxd_api::{Failure, Sandboxes};
use schemars::JsonSchema;
use serde::Deserialize;
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

#[derive(Debug, Deserialize, JsonSchema)]
pub struct OpenSessionParams {
    /// The runtime to open: one of the names list_runtimes returns (e.g. "python"). Omit it
    /// for the service's default runtime.
    #[serde(default)]
    pub runtime: Option<String>,
    /// A tenant to file the session under (1 to 128 characters), for your own bookkeeping.
    #[serde(default)]
    pub tenant: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListSessionsParams {
    /// Also list the most recently ended sessions (with why they ended).
    #[serde(default)]
    pub include_ended: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunCommandParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// A shell command line, run by /bin/sh -c (pipes, redirections and && work).
    pub command: String,
    /// The directory to run in; default /workspace.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Seconds before the command is killed; default and maximum are the service's policy.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Text given to the command on its standard input; none by default.
    #[serde(default)]
    pub stdin: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunCodeParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The complete program source, in the language of the session's runtime.
    pub code: String,
    /// Seconds before the program is killed; default and maximum are the service's policy.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteFileParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The file to write: relative to /workspace, or absolute under /workspace or /tmp.
    pub path: String,
    /// The whole text of the file (UTF-8).
    pub content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadFileParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The file to read: relative to /workspace, or absolute.
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDirectoryParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The directory to list: relative to /workspace, or absolute; default /workspace.
    #[serde(default)]
    pub path: Option<String>,
}

#[tool_router]
impl SandboxTools {
    pub fn new(connector: Arc<dyn Connector>) -> SandboxTools {
        SandboxTools {
            connector,
            tool_router: Self::tool_router() + Self::snapshot_tool_router(),
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
        description = "List the runtimes this service allows: for each, its name (pass it to open_session), image, memory_limit_bytes, cpus, pids_limit, network_mode (\"none\" means no network) and interpreter (the program run_code uses; absent when the runtime has none). default_runtime is used when open_session names none.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_runtimes(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<RuntimeList>, String> {
        let client = self.client(&context)?;
        client.runtimes().await.map(Json).map_err(tool_error)
    }

    #[tool(
        description = "Open a new sandbox session: an isolated container of the chosen runtime, with /workspace (the working directory) and /tmp writable and kept for the session's life, everything else read-only, and no network unless the runtime's network_mode allows it. Returns the session; pass its `id` as session_id to the other tools. Close it with close_session when done: the service allows a limited number of open sessions, and idle ones expire.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn open_session(
        &self,
        Parameters(params): Parameters<OpenSessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<SessionInfo>, String> {
        let client = self.client(&context)?;
        let request = CreateSession {
            runtime: params.runtime,
            tenant: params.tenant,
            ..CreateSession::default()
        };
        client
            .open_session(request)
            .await
            .map(Json)
            .map_err(tool_error)
    }

    #[tool(
        description = "List the open sessions (id, runtime, state, created_at, idle_secs, memory_bytes, process_count), and with include_ended also the recently ended ones with end_reason.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_sessions(
        &self,
        Parameters(params): Parameters<ListSessionsParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<SessionList>, String> {
        let client = self.client(&context)?;
        client
            .list_sessions(params.include_ended)
            .await
            .map(Json)
            .map_err(tool_error)
    }

    #[tool(
        description = "Close a session at once: its sandbox, processes and files are removed. Returns the ended session. Copy out anything you need with read_file first.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn close_session(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<SessionInfo>, String> {
        let client = self.client(&context)?;
        client
            .close_session(&params.session_id)
            .await
            .map(Json)
            .map_err(tool_error)
    }

    #[tool(
        description = "Kill every process running in a session: what a command left running in the background, including processes that detached themselves (setsid, daemons), which a command's timeout does not reach. Use it when commands hang or fail with `Resource temporarily unavailable` because leftovers fill the session's process limit. The session, its files and /workspace stay. Returns killed and remaining (remaining > 0: something forks faster than it can be killed; call again or close the session).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn kill_all_processes(
        &self,
        Parameters(params): Parameters<SessionParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<KilledProcesses>, String> {
        let client = self.client(&context)?;
        client
            .kill_all_processes(&params.session_id)
            .await
            .map(Json)
            .map_err(tool_error)
    }

    #[tool(
        description = "Run a shell command in a session with /bin/sh -c and wait for it to end. Returns exit_code (null when a signal killed it; `signal` then says which), stdout, stderr, stdout_truncated and stderr_truncated (true when output went past the service's per-stream limit and was cut), timed_out (true when it ran past its timeout and was killed), oom_killed and duration_ms. A non-zero exit code is a normal result, not a tool error. Each command is its own process: a `cd`, an exported variable or a background job does not carry over to the next call, so chain steps with && in one command (e.g. `cd src && make`) or pass cwd. Commands start in /workspace; files written there or in /tmp stay for the session.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn run_command(
        &self,
        Parameters(params): Parameters<RunCommandParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<ExecResult>, String> {
        let client = self.client(&context)?;
        let request = ExecRequest {
            command: Some(params.command),
            cwd: params.cwd,
            stdin: params.stdin,
            timeout_secs: params.timeout_secs,
            ..ExecRequest::default()
        };
        client
            .exec(&params.session_id, request)
            .await
            .map(Json)
            .map_err(tool_error)
    }

    #[tool(
        description = "Run a program's source code with the interpreter of the session's runtime (the `interpreter` list_runtimes shows, e.g. python3 for a Python runtime) and wait for it to end: the code-interpreter tool. The result has the same fields as run_command's (exit_code, stdout, stderr, truncation flags, timed_out). The code reaches the interpreter on its standard input, so the program cannot read stdin itself. Each call is a fresh process starting in /workspace: variables and imports do not persist between calls, files do. For a runtime without an interpreter, use run_command.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn run_code(
        &self,
        Parameters(params): Parameters<RunCodeParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<ExecResult>, String> {
        let client = self.client(&context)?;
        let session = client
            .session(&params.session_id)
            .await
            .map_err(tool_error)?;
        let runtimes = client.runtimes().await.map_err(tool_error)?;
        let interpreter = runtimes
            .runtimes
            .into_iter()
            .find(|entry| entry.runtime.name == session.runtime)
            .map(|entry| entry.runtime.interpreter)
            .unwrap_or_default();
        if interpreter.is_empty() {
            return Err(format!(
                "no_interpreter: runtime \"{}\" of this session names no interpreter for source code; run a program with run_command instead (e.g. write it with write_file and run it)",
                session.runtime
            ));
        }
        let request = ExecRequest {
            argv: Some(interpreter),
            stdin: Some(params.code),
            timeout_secs: params.timeout_secs,
            ..ExecRequest::default()
        };
        client
            .exec(&params.session_id, request)
            .await
            .map(Json)
            .map_err(tool_error)
    }

    #[tool(
        description = "Write a text file in a session, replacing it whole if it exists and creating missing parent directories. Writable places are /workspace (where relative paths point) and /tmp. Returns the path and the bytes written.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn write_file(
        &self,
        Parameters(params): Parameters<WriteFileParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<FileWritten>, String> {
        let client = self.client(&context)?;
        client
            .write_file(
                &params.session_id,
                &params.path,
                params.content.into_bytes(),
            )
            .await
            .map(Json)
            .map_err(tool_error)
    }

    #[tool(
        description = "Read a text file from a session and return its contents. Files over 256 KiB or not UTF-8 text are refused with a tool error: look at those with run_command (head, tail, grep, wc, base64).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn read_file(
        &self,
        Parameters(params): Parameters<ReadFileParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<String, String> {
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
            format!(
                "not_text: {} is not UTF-8 text; inspect it with run_command (e.g. `file`, `xxd | head`, `base64`)",
                params.path
            )
        })
    }

    #[tool(
        description = "List a directory in a session: each entry's name, type (file, dir, symlink or other), size in bytes, mode and modified time, sorted by name. `truncated` is true when the directory holds more entries than one listing returns.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_directory(
        &self,
        Parameters(params): Parameters<ListDirectoryParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<FileList>, String> {
        let client = self.client(&context)?;
        client
            .list_files(&params.session_id, params.path)
            .await
            .map(Json)
            .map_err(tool_error)
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "sandboxd",
    instructions = "sandboxd runs code in isolated sandboxes on this host. Typical use: list_runtimes, open_session, then write_file / run_command / run_code / read_file / list_directory with the session's id, then close_session. A session keeps its files in /workspace and /tmp between calls, but every command is a new process. There is no network unless the runtime allows it. Close sessions you no longer need: the service allows a limited number."
)]
impl ServerHandler for SandboxTools {}

/// A failed API call as a tool error: the service's code and message, and a next step where
/// the message alone does not give one.
pub(crate) fn tool_error(error: Failure) -> String {
    let next_step = match error.code.as_deref() {
        Some("unknown_runtime") => Some("list_runtimes shows each allowed runtime"),
        Some("service_full") => Some(
            "close sessions you no longer need (list_sessions, close_session) or try again later",
        ),
        Some("session_ended") => Some("open a new session with open_session"),
        _ => None,
    };
    match next_step {
        Some(step) => format!("{error}; {step}"),
        None => error.to_string(),
    }
}
