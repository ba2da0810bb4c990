//! `sandboxd volumes create|list|show|delete`: storage of your tenant that outlives sessions
//! and is shared between them. Mount one at open with `sandboxd open --volume NAME:PATH[:ro]`.

use super::connection::{block_on, ServiceArgs};
use super::output::{or_dash, print_json, size, timestamp, OutputArgs, Table};
use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use sandboxd_api::{VolumeInfo, VolumeMountRequest};
use sandboxd_client::Interface;

#[derive(Args)]
pub struct VolumesArgs {
    #[command(subcommand)]
    action: Action,
}

/// What every volumes command takes.
#[derive(Args)]
struct Common {
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

#[derive(Subcommand)]
enum Action {
    /// Make a volume with a hard size cap, e.g. `sandboxd volumes create data 1g`.
    Create {
        /// Its name: letters, digits, '-', '_' and '.'.
        name: String,
        /// Its size, e.g. 512m or 2g (16m at least).
        size: String,
        #[command(flatten)]
        common: Common,
    },
    /// The volumes you may see, with their use and the sessions that mount them.
    List {
        #[command(flatten)]
        common: Common,
    },
    /// One volume.
    Show {
        name: String,
        #[command(flatten)]
        common: Common,
    },
    /// Delete a volume and its files (refused while an open session mounts it).
    Delete {
        name: String,
        #[command(flatten)]
        common: Common,
    },
}

pub fn run(args: VolumesArgs) -> Result<()> {
    let (Action::Create { common, .. }
    | Action::List { common }
    | Action::Show { common, .. }
    | Action::Delete { common, .. }) = &args.action;
    let client = common.service.client(Interface::Cli)?;
    let json = common.output.json;
    let shown = match &args.action {
        Action::Create { name, size, .. } => vec![block_on(client.create_volume(name, size))??],
        Action::Show { name, .. } => vec![block_on(client.volume(name))??],
        Action::List { .. } => {
            let list = block_on(client.list_volumes())??;
            if json {
                return print_json(&list);
            }
            list.volumes
        }
        Action::Delete { name, .. } => {
            let deleted = block_on(client.delete_volume(name))??;
            if json {
                return print_json(&deleted);
            }
            println!("deleted {}", deleted.name);
            return Ok(());
        }
    };
    match shown.as_slice() {
        [one] if json => print_json(one),
        volumes => table(volumes),
    }
}

fn table(volumes: &[VolumeInfo]) -> Result<()> {
    let mut table = Table::new(&["NAME", "TENANT", "SIZE", "USED", "CREATED", "SESSIONS"]);
    for volume in volumes {
        table.row(vec![
            volume.name.clone(),
            or_dash(volume.tenant.as_ref()),
            size(volume.size_bytes),
            volume.used_bytes.map_or_else(|| "-".into(), size),
            timestamp(&volume.created_at),
            if volume.sessions.is_empty() {
                "-".into()
            } else {
                volume.sessions.join(",")
            },
        ]);
    }
    table.print()
}

/// `--volume NAME:PATH[:ro]` of `sandboxd open`.
pub fn parse_mount(text: &str) -> Result<VolumeMountRequest> {
    let mut parts = text.splitn(3, ':');
    let (Some(name), Some(path)) = (parts.next(), parts.next()) else {
        bail!("--volume {text:?} is not NAME:PATH or NAME:PATH:ro");
    };
    let read_only = match parts.next() {
        None => false,
        Some("ro") => true,
        Some("rw") => false,
        Some(other) => bail!("--volume {text:?}: {other:?} is not ro or rw"),
    };
    Ok(VolumeMountRequest {
        name: name.into(),
        path: path.into(),
        read_only,
    })
}
