//! `sandboxd sessions`: the open sessions (and with `--all` the recently ended ones).

use super::connection::{block_on, ServiceArgs};
use super::output::{duration, or_dash, print_json, size, timestamp, OutputArgs, Table};
use anyhow::Result;
use clap::Args;
use sandboxd_api::SessionState;
use sandboxd_client::Interface;
use std::io::Write;

#[derive(Args)]
pub struct SessionsArgs {
    /// Also list the most recently ended sessions.
    #[arg(long)]
    all: bool,
    /// Print only the ids, one a line (for scripts: `sandboxd sessions -q | xargs ...`).
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: SessionsArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let list = block_on(client.list_sessions(args.all))??;
    if args.output.json {
        return print_json(&list);
    }
    if args.quiet {
        let mut stdout = std::io::stdout().lock();
        for session in list.sessions {
            writeln!(stdout, "{}", session.id)?;
        }
        return Ok(());
    }
    let mut table = Table::new(&[
        "ID", "RUNTIME", "STATE", "TENANT", "CREATED", "IDLE", "MEMORY", "PROCS", "ENDED",
    ]);
    for session in list.sessions {
        let running = session.state == SessionState::Running;
        table.row(vec![
            session.id,
            session.runtime,
            match (session.state, session.paused_memory) {
                (SessionState::Running, _) => "running",
                (SessionState::Paused, Some(memory)) => memory.describe(),
                (SessionState::Paused, None) => "paused",
                (SessionState::Ended, _) => "ended",
            }
            .to_string(),
            or_dash(session.tenant),
            timestamp(&session.created_at),
            if running {
                duration(session.idle_secs)
            } else {
                "-".into()
            },
            size(session.memory_bytes),
            session.process_count.to_string(),
            or_dash(session.end_reason),
        ]);
    }
    table.print()
}
