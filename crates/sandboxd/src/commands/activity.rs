//! `sandboxd activity ID`: a session's activity log, newest first.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{or_dash, print_json, size, timestamp, OutputArgs, Table};
use anyhow::Result;
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct ActivityArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: ActivityArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let activity = block_on(async {
        let id = args.id.resolve(&client).await?;
        anyhow::Ok(client.activity(&id).await?)
    })??;
    if args.output.json {
        return print_json(&activity);
    }
    let mut table = Table::new(&[
        "AT",
        "PRINCIPAL",
        "INTERFACE",
        "ACTION",
        "TARGET",
        "STATUS",
        "EXIT",
        "BYTES",
        "MS",
        "ERROR",
    ]);
    for entry in activity.entries {
        table.row(vec![
            timestamp(&entry.at),
            entry.principal,
            entry.interface,
            entry.action,
            entry.target,
            entry.status,
            or_dash(entry.exit_code),
            or_dash(entry.bytes.map(size)),
            entry.duration_ms.to_string(),
            or_dash(entry.error),
        ]);
    }
    table.print()
}
