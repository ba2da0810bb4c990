//! The service's remedies in the command line's words: the command to run instead of the
//! route the REST message names.

use sandboxd_api::Remedy;
use sandboxd_client::ClientError;

/// What to do, as a command of this program.
fn cli_wording(remedy: Remedy) -> &'static str {
    match remedy {
        Remedy::OpenSession => "open a new one with `sandboxd open`",
        Remedy::ListSessions => "list them with `sandboxd sessions`",
        Remedy::CloseSession => {
            "close one you no longer need (`sandboxd close ID`) or try again later"
        }
        Remedy::ListRuntimes => "`sandboxd runtimes` shows each allowed runtime and its limits",
        Remedy::ListProcesses => "it may have exited and been forgotten; run the command again",
        Remedy::KillAll => {
            "kill every process in the session with `sandboxd kill-all ID`; the session and its files stay"
        }
        Remedy::ListDirectory => {
            "list it with `sandboxd ls ID PATH`, or copy it whole with `sandboxd cp ID:PATH DIR`"
        }
        Remedy::ReadFile => "copy it out with `sandboxd cp ID:PATH LOCAL`",
        Remedy::ReadPart => "read a part of it with `sandboxd exec ID -- head -c N PATH`",
        Remedy::DeleteRecursively => "delete it and everything in it with `sandboxd rm -r ID PATH`",
    }
}

/// The error's text with its remedy as a command, when the service named one.
pub fn cli_text(error: &ClientError) -> Option<String> {
    let remedy = error.remedy()?;
    Some(sandboxd_api::with_wording(
        &error.text_without_remedy(),
        Some(cli_wording(remedy)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remedy_is_worded_as_a_command_not_a_route() {
        for remedy in Remedy::ALL {
            let error = ClientError::Api {
                status: 404,
                code: "not_found".into(),
                message: sandboxd_api::with_wording("gone", Some(remedy.rest_wording())),
                remedy: Some(remedy),
            };
            let text = cli_text(&error).unwrap();
            assert!(text.starts_with("not_found: gone; "), "{text}");
            assert!(!text.contains("/v1"), "{text}");
        }
    }
}
