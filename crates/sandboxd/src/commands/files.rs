//! `sandboxd ls ID [PATH]` and `sandboxd rm ID PATH...`: a session's files.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{or_dash, print_json, size, timestamp, OutputArgs, Table};
use anyhow::Result;
use clap::Args;
use sandboxd_api::FileKind;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct LsArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    /// The directory (default: the sandbox's working directory).
    #[arg(default_value = ".")]
    path: String,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

#[derive(Args)]
pub struct RmArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    /// What to delete: files, symlinks (never what they point to), and with -r directories.
    #[arg(required = true)]
    paths: Vec<String>,
    /// Delete directories and everything in them.
    #[arg(short, long)]
    recursive: bool,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn ls(args: LsArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let listing = block_on(async {
        let id = args.id.resolve(&client).await?;
        anyhow::Ok(client.list_files(&id, &args.path).await?)
    })??;
    if args.output.json {
        return print_json(&listing);
    }
    let mut table = Table::new(&["MODE", "SIZE", "MODIFIED", "NAME"]);
    for entry in listing.entries {
        let (kind, suffix) = match entry.kind {
            FileKind::Dir => ('d', "/"),
            FileKind::Symlink => ('l', "@"),
            FileKind::File => ('-', ""),
            FileKind::Other => ('?', ""),
        };
        table.row(vec![
            format!("{kind}{}", entry.mode),
            size(entry.size),
            or_dash(entry.modified.as_deref().map(timestamp)),
            format!("{}{suffix}", entry.name),
        ]);
    }
    table.print()?;
    if listing.truncated {
        eprintln!("sandboxd: the listing was cut at the service's limit of entries");
    }
    Ok(())
}

pub fn rm(args: RmArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let deleted = block_on(async {
        let id = args.id.resolve(&client).await?;
        let mut deleted = Vec::new();
        for path in &args.paths {
            let result = client.delete_file(&id, path, args.recursive).await;
            match result {
                Err(e) if e.code() == Some("is_directory") => anyhow::bail!(
                    "{path} is a directory; delete it and everything in it with `sandboxd rm -r {id} {path}`"
                ),
                result => deleted.push(result?),
            }
        }
        anyhow::Ok(deleted)
    })??;
    if args.output.json {
        return print_json(&deleted);
    }
    for file in deleted {
        println!("deleted {}", file.path);
    }
    Ok(())
}
