//! Failed calls as tool errors an agent can act on: the service's code and message, and what to
//! do about it in the words of this interface (the tool to call, never an HTTP route).

use sandboxd_api::{with_wording, Failure, Remedy};

/// A failed API call as the text of a tool error.
pub fn tool_error(failure: Failure) -> String {
    with_wording(&failure.text, failure.remedy.map(mcp_wording))
}

/// A remedy in the MCP tools' words.
pub fn mcp_wording(remedy: Remedy) -> &'static str {
    match remedy {
        Remedy::OpenSession => "open a new session with open_session",
        Remedy::ListSessions => "list_sessions lists the open ones",
        Remedy::CloseSession => {
            "close sessions you no longer need (list_sessions, close_session) or try again later"
        }
        Remedy::ListRuntimes => "list_runtimes shows each allowed runtime and its limits",
        Remedy::ListProcesses => "see what runs with run_command (e.g. `ps`)",
        Remedy::KillAll => {
            "kill every process in the session with kill_all_processes; the session and its files stay"
        }
        Remedy::ListDirectory => "list a directory with list_directory",
        Remedy::ReadFile => "read a file with read_file",
        Remedy::ReadPart => {
            "read a part of it with run_command (e.g. `head -c 65536 FILE`, `tail -n 100 FILE`, `grep`)"
        }
        Remedy::DeleteRecursively => "delete it and everything in it with run_command (`rm -r`)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_remedy_is_worded_with_a_route() {
        for remedy in Remedy::ALL {
            let wording = mcp_wording(remedy);
            assert!(!wording.contains("/v1"), "{remedy}: {wording}");
        }
    }
}
