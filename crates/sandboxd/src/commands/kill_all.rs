//! `sandboxd kill-all ID`: kills every process in a session; the session stays open.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, OutputArgs};
use anyhow::Result;
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct KillAllArgs {
    /// The session's id.
    id: String,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: KillAllArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let outcome = block_on(client.kill_all_processes(&args.id))??;
    if args.output.json {
        return print_json(&outcome);
    }
    match outcome.remaining {
        0 => println!("killed {} processes in {}", outcome.killed, args.id),
        remaining => println!(
            "killed {} processes in {}; {remaining} still running (forking faster than they could be killed): run it again, or close the session",
            outcome.killed, args.id
        ),
    }
    Ok(())
}
