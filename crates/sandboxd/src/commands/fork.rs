//! `sandboxd fork ID --count N`: opens N independent sessions with a session's files and
//! prints their ids. All open, or none.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, OutputArgs};
use anyhow::Result;
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct ForkArgs {
    /// The session's id.
    id: String,
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
    let forked = block_on(client.fork_session(&args.id, args.count))??;
    if args.output.json {
        return print_json(&forked);
    }
    for session in forked.sessions {
        println!("{}", session.id);
    }
    Ok(())
}
