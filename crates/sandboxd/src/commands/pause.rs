//! `sandboxd pause ID` and `sandboxd resume ID`: freeze every process of a session, and thaw
//! it. Any command on a paused session resumes it too.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{print_json, OutputArgs};
use anyhow::Result;
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct PauseArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

/// Pauses the session, or with `resume` thaws it.
pub fn run(args: PauseArgs, resume: bool) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let session = block_on(async {
        let id = args.id.resolve(&client).await?;
        let session = if resume {
            client.resume_session(&id).await?
        } else {
            client.pause_session(&id).await?
        };
        anyhow::Ok(session)
    })??;
    if args.output.json {
        return print_json(&session);
    }
    match session.paused_memory.filter(|_| !resume) {
        Some(memory) => println!("{} {}", memory.describe(), session.id),
        None => println!(
            "{} {}",
            if resume { "resumed" } else { "paused" },
            session.id
        ),
    }
    Ok(())
}
