//! `sandboxd run -- CMD...`: opens a session, runs one command, prints its output, closes the
//! session (also when the command fails or the user presses Ctrl-C) and exits with the
//! command's exit code.

use super::connection::{block_on, ServiceArgs};
use super::exec::{report, CommandArgs};
use super::output::OutputArgs;
use anyhow::{Context, Result};
use clap::Args;
use sandboxd_api::CreateSession;
use sandboxd_client::{Client, Interface};
use tokio::signal::unix::{signal, SignalKind};

/// The exit code when Ctrl-C (SIGINT) or SIGTERM stopped the run: 128 + SIGINT.
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Args)]
pub struct RunArgs {
    /// The runtime to run in (default: the service's default runtime).
    #[arg(long)]
    runtime: Option<String>,
    #[command(flatten)]
    command: CommandArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: RunArgs) -> Result<u8> {
    let client = args.service.client(Interface::Cli)?;
    let request = args.command.request()?;
    let create = CreateSession {
        runtime: args.runtime,
        ..CreateSession::default()
    };
    block_on(async {
        // Listening before the session exists: an interrupt while it opens is noticed once it
        // is open, and closes it instead of leaving it running.
        let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle Ctrl-C")?;
        let mut terminate = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
        let session = client.create_session(&create).await?;
        let outcome = tokio::select! {
            result = client.exec(&session.id, &request) => Some(result),
            _ = interrupt.recv() => None,
            _ = terminate.recv() => None,
        };
        close(&client, &session.id).await;
        match outcome {
            None => {
                eprintln!("sandboxd: interrupted");
                Ok(EXIT_INTERRUPTED)
            }
            Some(result) => report(&result?, args.output.json),
        }
    })?
}

/// Closes the run's session; a failure is reported, not fatal: the command's outcome is what
/// the caller asked for, and an unclosed session still ends when it has been idle too long.
async fn close(client: &Client, id: &str) {
    if let Err(e) = client.close_session(id).await {
        eprintln!("sandboxd: warning: cannot close session {id} ({e}); close it with `sandboxd close {id}`");
    }
}
