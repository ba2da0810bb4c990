//! What a caller can do about an error, as a stable key. The core attaches one where an error
//! has a remedy; each face words it in its own terms (REST names the route, MCP the tool, the
//! CLI the command), so no message carries another face's hint.

use std::fmt;

/// A remedy for an error: its key is the `remedy` of the REST error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Remedy {
    /// The session has ended: open a new one.
    OpenSession,
    /// No such session: list the open ones.
    ListSessions,
    /// The service or the tenant's quota is full: close sessions no longer needed.
    CloseSession,
    /// The runtime is not allowed: see the allowed ones and their limits.
    ListRuntimes,
    /// No such process: list the session's processes.
    ListProcesses,
    /// Processes left running fill the sandbox: kill every process in it.
    KillAll,
    /// A directory was read as a file: list it instead.
    ListDirectory,
    /// A file was listed as a directory: read it instead.
    ReadFile,
    /// A file too large to read whole: read a part of it with a command.
    ReadPart,
    /// A directory was deleted as a file: delete it with everything in it.
    DeleteRecursively,
}

impl Remedy {
    pub const ALL: [Remedy; 10] = [
        Remedy::OpenSession,
        Remedy::ListSessions,
        Remedy::CloseSession,
        Remedy::ListRuntimes,
        Remedy::ListProcesses,
        Remedy::KillAll,
        Remedy::ListDirectory,
        Remedy::ReadFile,
        Remedy::ReadPart,
        Remedy::DeleteRecursively,
    ];

    /// The stable key (`open_session`, `kill_all`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Remedy::OpenSession => "open_session",
            Remedy::ListSessions => "list_sessions",
            Remedy::CloseSession => "close_session",
            Remedy::ListRuntimes => "list_runtimes",
            Remedy::ListProcesses => "list_processes",
            Remedy::KillAll => "kill_all",
            Remedy::ListDirectory => "list_directory",
            Remedy::ReadFile => "read_file",
            Remedy::ReadPart => "read_part",
            Remedy::DeleteRecursively => "delete_recursively",
        }
    }

    /// The remedy a key names; `None` for a key this version does not know.
    pub fn from_key(key: &str) -> Option<Remedy> {
        Remedy::ALL.into_iter().find(|remedy| remedy.key() == key)
    }

    /// The remedy in the REST API's words, as the error body's `message` ends with it.
    pub fn rest_wording(self) -> &'static str {
        match self {
            Remedy::OpenSession => "open a new one with POST /v1/sessions",
            Remedy::ListSessions => "list them with GET /v1/sessions",
            Remedy::CloseSession => {
                "close one you no longer need (DELETE /v1/sessions/{id}) or try again later"
            }
            Remedy::ListRuntimes => "GET /v1/runtimes shows each allowed runtime and its limits",
            Remedy::ListProcesses => "list them with GET /v1/sessions/{id}/processes",
            Remedy::KillAll => {
                "kill every process in the session with DELETE /v1/sessions/{id}/processes; the session and its files stay"
            }
            Remedy::ListDirectory => "list a directory with GET /v1/sessions/{id}/files?path=...",
            Remedy::ReadFile => "read a file with GET /v1/sessions/{id}/files/content?path=...",
            Remedy::ReadPart => {
                "read a part of it with POST /v1/sessions/{id}/exec (e.g. `head -c`, `tail`)"
            }
            Remedy::DeleteRecursively => "pass recursive=true to delete it and everything in it",
        }
    }
}

impl fmt::Display for Remedy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A message followed by its remedy in some face's words: `message; wording`.
pub fn with_wording(message: &str, wording: Option<&str>) -> String {
    match wording {
        Some(wording) => format!("{message}; {wording}"),
        None => message.to_string(),
    }
}

/// A REST error message without its remedy's REST wording: the message as the core gave it,
/// for a face that words the remedy itself.
pub fn without_rest_wording(message: &str, remedy: Remedy) -> &str {
    message
        .strip_suffix(remedy.rest_wording())
        .and_then(|rest| rest.strip_suffix("; "))
        .unwrap_or(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_are_unique() {
        for remedy in Remedy::ALL {
            assert_eq!(Remedy::from_key(remedy.key()), Some(remedy));
        }
        assert_eq!(Remedy::from_key("not_a_remedy"), None);
    }

    #[test]
    fn the_rest_wording_comes_off_again() {
        for remedy in Remedy::ALL {
            let rest = with_wording("no session with id \"x\"", Some(remedy.rest_wording()));
            assert_eq!(
                without_rest_wording(&rest, remedy),
                "no session with id \"x\""
            );
        }
        assert_eq!(without_rest_wording("other", Remedy::KillAll), "other");
    }
}
