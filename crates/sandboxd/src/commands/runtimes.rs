//! `sandboxd runtimes [list]`: the runtimes the service allows. A group, so that more
//! runtime commands can join `list`.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, size, OutputArgs, Table};
use anyhow::Result;
use clap::{Args, Subcommand};
use sandboxd_api::ImageStatus;
use sandboxd_client::Interface;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RuntimesArgs {
    #[command(subcommand)]
    command: Option<RuntimesCommand>,
    /// `sandboxd runtimes` alone lists them.
    #[command(flatten)]
    list: ListArgs,
}

#[derive(Subcommand)]
enum RuntimesCommand {
    /// List the runtimes the service allows, with their limits (the default).
    List(ListArgs),
    /// Print the suggested runtimes (the catalogue built into sandboxd) as config to paste.
    Suggested(super::runtimes_recipes::SuggestedArgs),
    /// Have the service make runtime images available now (pulled, or built from their
    /// recipes) and follow the progress.
    Build(super::runtimes_recipes::BuildArgs),
}

#[derive(Args)]
struct ListArgs {
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: RuntimesArgs) -> Result<()> {
    match args.command {
        Some(RuntimesCommand::List(list)) => run_list(list),
        Some(RuntimesCommand::Suggested(args)) => super::runtimes_recipes::run_suggested(args),
        Some(RuntimesCommand::Build(args)) => super::runtimes_recipes::run_build(args),
        None => run_list(args.list),
    }
}

fn run_list(args: ListArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let list = block_on(client.runtimes())??;
    if args.output.json {
        return print_json(&list);
    }
    let mut table = Table::new(&[
        "NAME",
        "IMAGE",
        "MEMORY",
        "CPUS",
        "PIDS",
        "NETWORK",
        "INTERPRETER",
        "STATE",
        "DESCRIPTION",
    ]);
    for entry in list.runtimes {
        let runtime = entry.runtime;
        let name = if runtime.name == list.default_runtime {
            format!("{} (default)", runtime.name)
        } else {
            runtime.name
        };
        let image = match (runtime.image, runtime.recipe) {
            (Some(image), _) => image,
            (None, Some(recipe)) => format!("recipe {recipe}"),
            (None, None) => "-".into(),
        };
        table.row(vec![
            name,
            image,
            size(runtime.limits.mem_limit_bytes),
            runtime.limits.cpus.to_string(),
            runtime.limits.pids_limit.to_string(),
            runtime.limits.network_mode.as_str().to_string(),
            if runtime.interpreter.is_empty() {
                "-".into()
            } else {
                runtime.interpreter.join(" ")
            },
            match entry.status {
                ImageStatus::Ready => "ready".into(),
                ImageStatus::NotBuilt => "not built".into(),
                ImageStatus::Building { .. } => "building".into(),
                ImageStatus::Failed { reason } => format!("failed: {reason}"),
            },
            runtime.description,
        ]);
    }
    table.print()
}
