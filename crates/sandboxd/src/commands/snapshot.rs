//! `sandboxd snapshot create|list|get|delete`: snapshots of sessions' files, runtime and
//! labels, and on gVisor runtimes without a network their running processes. Open a session
//! from one with `sandboxd open --snapshot ID`.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{or_dash, print_json, size, timestamp, OutputArgs, Table};
use anyhow::Result;
use clap::{Args, Subcommand};
use sandboxd_api::SnapshotInfo;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    action: Action,
}

/// What every snapshot command takes.
#[derive(Args)]
struct Common {
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

#[derive(Subcommand)]
enum Action {
    /// Save a session's files (/workspace, /tmp, /dev/shm), runtime and labels.
    Create {
        /// The session's id, or a unique prefix of it.
        session: SessionArg,
        /// The snapshot's name.
        name: String,
        #[command(flatten)]
        common: Common,
    },
    /// The snapshots you may see.
    List {
        #[command(flatten)]
        common: Common,
    },
    /// One snapshot.
    Get {
        id: String,
        #[command(flatten)]
        common: Common,
    },
    /// Delete a snapshot and its files.
    Delete {
        id: String,
        #[command(flatten)]
        common: Common,
    },
}

pub fn run(args: SnapshotArgs) -> Result<()> {
    let (Action::Create { common, .. }
    | Action::List { common }
    | Action::Get { common, .. }
    | Action::Delete { common, .. }) = &args.action;
    let client = common.service.client(Interface::Cli)?;
    let json = common.output.json;
    let shown = match &args.action {
        Action::Create { session, name, .. } => {
            vec![block_on(async {
                let session = session.resolve(&client).await?;
                anyhow::Ok(client.create_snapshot(&session, name).await?)
            })??]
        }
        Action::Get { id, .. } => vec![block_on(client.snapshot(id))??],
        Action::List { .. } => {
            let list = block_on(client.list_snapshots())??;
            if json {
                return print_json(&list);
            }
            list.snapshots
        }
        Action::Delete { id, .. } => {
            let deleted = block_on(client.delete_snapshot(id))??;
            if json {
                return print_json(&deleted);
            }
            println!("deleted {}", deleted.id);
            return Ok(());
        }
    };
    match shown.as_slice() {
        [one] if json => print_json(one),
        snapshots => table(snapshots),
    }
}

fn table(snapshots: &[SnapshotInfo]) -> Result<()> {
    let mut table = Table::new(&[
        "ID", "NAME", "RUNTIME", "TENANT", "SESSION", "CREATED", "SIZE",
    ]);
    for snapshot in snapshots {
        table.row(vec![
            snapshot.id.clone(),
            snapshot.name.clone(),
            snapshot.runtime.clone(),
            or_dash(snapshot.tenant.as_ref()),
            snapshot.session_id.clone(),
            timestamp(&snapshot.created_at),
            size(snapshot.bytes),
        ]);
    }
    table.print()
}
