//! The tools' arguments. Each struct refuses fields it does not know (the error names the
//! accepted ones), so a misspelt or invented argument is never silently ignored, and its JSON
//! Schema (`additionalProperties: false`) says so to the client.

use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenSessionParams {
    /// The runtime to open: one of the names list_runtimes returns (e.g. "python"). Omit it
    /// for the service's default runtime.
    #[serde(default)]
    pub runtime: Option<String>,
    /// A tenant to file the session under (1 to 128 characters), for your own bookkeeping.
    #[serde(default)]
    pub tenant: Option<String>,
    /// Labels to keep with the session (name to value), for your own bookkeeping.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// For a runtime with network_mode "egress": the names it may reach, narrower than the
    /// runtime's list (e.g. ["pypi.org"]); omit it for the runtime's whole list.
    #[serde(default)]
    pub egress: Option<Vec<sandboxd_api::EgressRule>>,
    /// Volumes of yours (list_volumes) to mount, each at a path below /workspace, /home/user
    /// or /tmp, e.g. [{"name": "data", "path": "/workspace/data", "read_only": true}].
    #[serde(default)]
    pub volumes: Vec<sandboxd_api::VolumeMountRequest>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSessionsParams {
    /// Also list the most recently ended sessions (with why they ended).
    #[serde(default)]
    pub include_ended: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// A shell command line, run by /bin/sh -c (pipes, redirections and && work).
    pub command: String,
    /// The directory to run in; default /workspace.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Environment variables to set for the command (name to value).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds before the command is killed (at least 1; the default and the maximum are in
    /// the tool's description).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_secs: Option<u64>,
    /// Text given to the command on its standard input; none by default.
    #[serde(default)]
    pub stdin: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCodeParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The complete program source, in the language of the session's runtime.
    pub code: String,
    /// The directory to run in; default /workspace.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Environment variables to set for the program (name to value).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds before the program is killed (at least 1; the default and the maximum are in
    /// the tool's description).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_secs: Option<u64>,
    /// For a runtime with a kernel: the code context to run in (one made with the REST API
    /// or the CLI); the default context of the runtime's language when absent.
    #[serde(default)]
    pub context: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The file to write: relative to /workspace, or absolute under /workspace or /tmp.
    pub path: String,
    /// The whole text of the file (UTF-8).
    pub content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The file to read: relative to /workspace, or absolute.
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirectoryParams {
    /// The session's id, as open_session returned it.
    pub session_id: String,
    /// The directory to list: relative to /workspace, or absolute; default /workspace.
    #[serde(default)]
    pub path: Option<String>,
}
