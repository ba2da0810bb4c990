//! The body of every error answer: a stable code and a message.

use serde::{Deserialize, Serialize};

/// Every error response: `{"error": {"code": "...", "message": "..."}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorDetail {
    /// Stable, machine-readable (e.g. `unknown_runtime`, `service_full`).
    pub code: String,
    /// What was wrong and what to do, for a person or an agent.
    pub message: String,
    /// What to do about it, as a stable key, when the error has a remedy: `open_session`,
    /// `list_sessions`, `close_session`, `list_runtimes`, `list_processes`, `kill_all`,
    /// `list_directory`, `read_file`, `read_part`, `delete_recursively`. `message` ends with
    /// it in the API's words (a route); another face (the CLI) may word it its own way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remedy: Option<String>,
}
