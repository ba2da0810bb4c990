//! `sandboxd fork ID --count N`: opens N independent sessions with a session's files (and on
//! gVisor runtimes without a network its running processes) and prints their ids, and on
//! stderr which it carried. All open, or none.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{print_json, OutputArgs};
use anyhow::Result;
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct ForkArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    /// How many sessions to open (1 to 16).
    #[arg(long, default_value_t = 1)]
    count: u32,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: ForkArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let forked = block_on(async {
        let id = args.id.resolve(&client).await?;
        anyhow::Ok(client.fork_session(&id, args.count).await?)
    })??;
    if args.output.json {
        return print_json(&forked);
    }
    for session in &forked.sessions {
        println!("{}", session.id);
    }
    eprintln!(
        "{} with {}",
        match forked.sessions.len() {
            1 => "1 session".to_string(),
            n => format!("{n} sessions"),
        },
        match forked.memory {
            true => "the session's files and running processes",
            false => "the session's files (not its processes)",
        }
    );
    Ok(())
}
