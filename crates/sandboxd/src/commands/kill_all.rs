//! `sandboxd kill-all ID`: kills every process in a session; the session stays open.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{counted, print_json, OutputArgs};
use anyhow::Result;
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct KillAllArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: KillAllArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let (id, outcome) = block_on(async {
        let id = args.id.resolve(&client).await?;
        let outcome = client.kill_all_processes(&id).await?;
        anyhow::Ok((id, outcome))
    })??;
    if args.output.json {
        return print_json(&outcome);
    }
    match outcome.remaining {
        0 => println!("killed {} in {id}", processes(outcome.killed)),
        remaining => println!(
            "killed {} in {id}; {remaining} still running (forking faster than they could be killed): run it again, or close the session",
            processes(outcome.killed)
        ),
    }
    Ok(())
}

fn processes(count: u32) -> String {
    counted(count.into(), "process", "processes")
}
