//! `sandboxd runtimes suggested`: the suggested catalogue, as config to paste (no service
//! needed). `sandboxd runtimes build [NAME]`: has the running service make runtime images
//! available now, pulled or built from their recipes, and follows the progress. The build runs
//! in the service, so it is the same single build its sessions wait for, with the service's
//! config (recipes, extra CA certificates), and the dashboard shows it.

use super::connection::{block_on, ServiceArgs};
use super::output::OutputArgs;
use anyhow::{bail, Result};
use clap::Args;
use sandboxd_api::{ImageStatus, RuntimeBuildEvent};
use sandboxd_client::{Client, Interface};
use sandboxd_config::{suggested_runtimes, CATALOGUE};

#[derive(Args)]
pub struct SuggestedArgs {
    /// Print the recipes themselves ([recipes.NAME] tables, to copy and change) rather than
    /// the runtimes that name them.
    #[arg(long)]
    recipes: bool,
}

#[derive(Args)]
pub struct BuildArgs {
    /// The runtime whose image to make (as `sandboxd runtimes` lists it); without one, every
    /// runtime of the service.
    name: Option<String>,
    /// Print each change as a line of the API's JSON (as the service streams it).
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run_suggested(args: SuggestedArgs) -> Result<()> {
    if args.recipes {
        print!("{CATALOGUE}");
    } else {
        print!("{}", suggested_runtimes());
    }
    Ok(())
}

pub fn run_build(args: BuildArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    block_on(build(client, args.name, args.output.json))?
}

/// Progress goes to stderr, each runtime's outcome to stdout; with `json`, every change goes to
/// stdout as a line of JSON.
async fn build(client: Client, name: Option<String>, json: bool) -> Result<()> {
    let names = match name {
        Some(name) => vec![name],
        None => client
            .runtimes()
            .await?
            .runtimes
            .into_iter()
            .map(|entry| entry.runtime.name)
            .collect(),
    };
    let mut failed = Vec::new();
    for name in names {
        let Some(last) = follow_build(&client, &name, json).await? else {
            continue;
        };
        if let ImageStatus::Failed { reason } = last.status {
            if !json {
                println!("{name}: failed: {reason}");
            }
            failed.push(name);
        } else if !json {
            match last.status {
                ImageStatus::Ready => println!("{name}: ready ({})", last.image),
                ImageStatus::NotBuilt => println!("{name}: not built ({})", last.image),
                _ => {}
            }
        }
    }
    if !failed.is_empty() {
        bail!(
            "the image of {} could not be made; the reasons are above",
            failed.join(", ")
        );
    }
    Ok(())
}

/// Has the service make runtime `name`'s image available and follows it to its end: each step
/// on stderr (with `json`, every change on stdout as a line of the API's JSON). The last change
/// (`ready` or `failed`), none when the service ended the stream before it.
pub(super) async fn follow_build(
    client: &Client,
    name: &str,
    json: bool,
) -> Result<Option<RuntimeBuildEvent>> {
    let mut build = client.build_runtime(name).await?;
    let mut last = None;
    while let Some(event) = build.next_event().await? {
        if json {
            println!("{}", serde_json::to_string(&event)?);
        } else if let ImageStatus::Building { progress } = &event.status {
            match (progress.step, progress.steps) {
                (Some(step), Some(steps)) => {
                    eprintln!("{name}: [{step}/{steps}] {}", progress.line)
                }
                _ => eprintln!("{name}: {}", progress.line),
            }
        }
        last = Some(event);
    }
    Ok(last)
}
