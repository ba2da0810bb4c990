//! `sandboxd open`: opens a session and prints its id.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, OutputArgs};
use anyhow::{bail, Result};
use clap::Args;
use sandboxd_api::CreateSession;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct OpenArgs {
    /// The runtime to open (default: the service's default runtime; `sandboxd runtimes`
    /// lists them).
    #[arg(long)]
    runtime: Option<String>,
    /// A tenant to file the session under.
    #[arg(long)]
    tenant: Option<String>,
    /// A label for the session, as KEY=VALUE; repeat for more.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    labels: Vec<String>,
    /// Start from a snapshot: its files, runtime and labels (`sandboxd snapshot list`).
    #[arg(long)]
    snapshot: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: OpenArgs) -> Result<()> {
    let mut request = CreateSession {
        runtime: args.runtime,
        tenant: args.tenant,
        snapshot: args.snapshot,
        ..CreateSession::default()
    };
    for label in &args.labels {
        let Some((key, value)) = label.split_once('=') else {
            bail!("--label {label:?} is not KEY=VALUE");
        };
        request.labels.insert(key.to_string(), value.to_string());
    }
    let client = args.service.client(Interface::Cli)?;
    let session = block_on(client.create_session(&request))??;
    if args.output.json {
        return print_json(&session);
    }
    println!("{}", session.id);
    Ok(())
}
