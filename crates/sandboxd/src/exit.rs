//! The exit codes of the command (the table in the crate's doc), from what failed.

use crate::commands::connection::token_source;
use crate::remedy;
use anyhow::Error;
use sandboxd_client::ClientError;
use std::process::ExitCode;

pub const EXIT_USAGE: u8 = 2;
const EXIT_CANNOT_CONNECT: u8 = 3;
const EXIT_UNAUTHORIZED: u8 = 4;
const EXIT_API_ERROR: u8 = 5;
const EXIT_LOCAL_FILE: u8 = 6;

/// Prints what failed (the remedy when one is known) and gives the exit code.
pub fn fail(error: &Error, code: u8) -> ExitCode {
    let text = match error.downcast_ref::<ClientError>() {
        Some(ClientError::Unauthorized { url }) => refused_token(url),
        Some(client_error) => {
            remedy::cli_text(client_error).unwrap_or_else(|| format!("{error:#}"))
        }
        None => format!("{error:#}"),
    };
    eprintln!("sandboxd: error: {text}");
    ExitCode::from(code)
}

/// A refused token, naming where it came from: a token meant for another service (from a
/// local token file, say) is the usual cause.
fn refused_token(url: &str) -> String {
    let source = token_source().unwrap_or("--token or SANDBOXD_TOKEN");
    format!(
        "unauthorized: the service at {url} refused the token from {source}; give this service's token with --token or SANDBOXD_TOKEN"
    )
}

/// Whether what failed was writing to a reader that went away.
pub fn is_broken_pipe(error: &Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The exit code of a failed client command, from what failed.
pub fn client_exit_code(error: &Error) -> u8 {
    if let Some(client_error) = error.chain().find_map(|e| e.downcast_ref::<ClientError>()) {
        return match client_error {
            ClientError::InvalidUrl { .. } => EXIT_USAGE,
            ClientError::Connect { .. }
            | ClientError::Timeout { .. }
            | ClientError::Transport { .. } => EXIT_CANNOT_CONNECT,
            ClientError::Unauthorized { .. } => EXIT_UNAUTHORIZED,
            ClientError::Api { .. } | ClientError::UnexpectedResponse { .. } => EXIT_API_ERROR,
        };
    }
    if error.chain().any(|e| e.is::<std::io::Error>()) {
        return EXIT_LOCAL_FILE;
    }
    EXIT_USAGE
}
