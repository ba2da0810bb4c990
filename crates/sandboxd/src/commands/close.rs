//! `sandboxd close ID`: closes a session at once.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, OutputArgs};
use anyhow::Result;
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct CloseArgs {
    /// The session's id.
    id: String,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: CloseArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let session = block_on(client.close_session(&args.id))??;
    if args.output.json {
        return print_json(&session);
    }
    println!("closed {}", session.id);
    Ok(())
}
