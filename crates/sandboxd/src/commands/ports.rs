//! `sandboxd ports ID`: the TCP ports listening in a session's sandbox; `sandboxd share ID
//! PORT`: a link that opens one in a browser without the token (`--list`, `--revoke`).

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{or_dash, print_json, timestamp, OutputArgs, Table};
use anyhow::{bail, Result};
use clap::Args;
use sandboxd_api::ShareInfo;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct PortsArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn ports(args: PortsArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let list = block_on(async {
        let id = args.id.resolve(&client).await?;
        anyhow::Ok(client.list_ports(&id).await?)
    })??;
    if args.output.json {
        return print_json(&list);
    }
    let mut table = Table::new(&["PORT", "ADDRESS", "PID", "PROGRAM"]);
    for port in list.ports {
        table.row(vec![
            port.port.to_string(),
            port.address,
            or_dash(port.pid.as_ref()),
            or_dash(port.program.as_ref()),
        ]);
    }
    table.print()
}

#[derive(Args)]
pub struct ShareArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    /// The port in the sandbox to make a link to.
    #[arg(required_unless_present_any = ["list", "revoke"])]
    port: Option<u16>,
    /// How long the link works, in seconds (the service's default and cap: one hour).
    #[arg(long, value_name = "SECS", conflicts_with_all = ["list", "revoke"])]
    ttl: Option<u64>,
    /// List the session's links that still work instead (without the links themselves).
    #[arg(long, conflicts_with_all = ["port", "revoke"])]
    list: bool,
    /// Revoke the link with this id instead (the ID column of --list).
    #[arg(long, value_name = "SHARE_ID", conflicts_with = "port")]
    revoke: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn share(args: ShareArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let json = args.output.json;
    block_on(async {
        let id = args.id.resolve(&client).await?;
        if args.list {
            let list = client.list_shares(&id).await?;
            return match json {
                true => print_json(&list),
                false => table(&list.shares),
            };
        }
        if let Some(share_id) = &args.revoke {
            let revoked = client.revoke_share(&id, share_id).await?;
            if json {
                return print_json(&revoked);
            }
            println!("revoked {}", revoked.id);
            return Ok(());
        }
        let Some(port) = args.port else {
            bail!("name the port to share, or pass --list or --revoke SHARE_ID");
        };
        let share = client.share_port(&id, port, args.ttl).await?;
        match json {
            true => print_json(&share),
            // The link alone on stdout, for `open "$(sandboxd share ID 8000)"`.
            false => {
                println!("{}", share.url.as_deref().unwrap_or_default());
                eprintln!(
                    "link {} to port {port} works without a token until {}; `sandboxd share {id} --revoke {}` ends it",
                    share.id, share.expires_at, share.id
                );
                Ok(())
            }
        }
    })?
}

fn table(shares: &[ShareInfo]) -> Result<()> {
    let mut table = Table::new(&["ID", "PORT", "CREATED", "EXPIRES", "BY"]);
    for share in shares {
        table.row(vec![
            share.id.clone(),
            share.port.to_string(),
            timestamp(&share.created_at),
            timestamp(&share.expires_at),
            share.created_by.clone(),
        ]);
    }
    table.print()
}
