//! `sandboxd run -- CMD...`: opens a session, runs one command with its output streamed,
//! closes the session (also when the command fails, or on Ctrl-C, SIGTERM or SIGHUP) and exits
//! with the command's exit code.

use super::connection::{block_on, ServiceArgs};
use super::exec::{run_command, CommandArgs};
use super::output::OutputArgs;
use super::streamed::Signals;
use anyhow::Result;
use clap::Args;
use sandboxd_api::CreateSession;
use sandboxd_client::{Client, Interface};

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
    let create = CreateSession {
        runtime: args.runtime,
        ..CreateSession::default()
    };
    block_on(async {
        // Before the signals are taken: Ctrl-C stops following a build as it stops the program.
        super::open::show_image_build(&client, create.runtime.as_deref()).await?;
        // Listening before the session exists: a signal while it opens is noticed once it is
        // open, and closes it instead of leaving it running.
        let mut signals = Signals::listen()?;
        let session = client.create_session(&create).await?;
        // A signal that came meanwhile is taken once the command runs, and stops it.
        let outcome = run_command(
            &client,
            &session.id,
            &args.command,
            args.output.json,
            &mut signals,
        )
        .await;
        close(&client, &session.id).await;
        outcome
    })?
}

/// Closes the run's session; a failure is reported, not fatal: the command's outcome is what
/// the caller asked for, and an unclosed session still ends when it has been idle too long.
async fn close(client: &Client, id: &str) {
    if let Err(e) = client.close_session(id).await {
        eprintln!("sandboxd: warning: cannot close session {id} ({e}); close it with `sandboxd close {id}`");
    }
}
