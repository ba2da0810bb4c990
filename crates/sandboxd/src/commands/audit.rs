//! `sandboxd audit`: the audit log (refused cross-tenant attempts), newest first.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, timestamp, OutputArgs, Table};
use anyhow::Result;
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct AuditArgs {
    /// Show at most this many entries (the service returns at most 500).
    #[arg(long)]
    limit: Option<u32>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: AuditArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let audit = block_on(client.audit(args.limit))??;
    if args.output.json {
        return print_json(&audit);
    }
    let mut table = Table::new(&[
        "AT",
        "PRINCIPAL",
        "INTERFACE",
        "ACTION",
        "SESSION",
        "OUTCOME",
    ]);
    for entry in audit.entries {
        table.row(vec![
            timestamp(&entry.at),
            entry.principal,
            entry.interface,
            entry.action,
            entry.session_id,
            entry.outcome,
        ]);
    }
    table.print()
}
