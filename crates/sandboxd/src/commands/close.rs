//! `sandboxd close ID...` (or `--all`): closes sessions at once.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{print_json, OutputArgs};
use anyhow::{bail, Result};
use clap::Args;
use sandboxd_api::{SessionInfo, SessionState};
use sandboxd_client::{Client, Interface};

#[derive(Args)]
pub struct CloseArgs {
    /// The sessions' ids, or unique prefixes of them.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    ids: Vec<SessionArg>,
    /// Close every running session the token may see.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: CloseArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let closed = block_on(async {
        let ids = if args.all {
            let sessions = client.list_sessions(false).await?.sessions;
            sessions.into_iter().map(|session| session.id).collect()
        } else {
            let mut ids = Vec::new();
            for id in &args.ids {
                ids.push(id.resolve(&client).await?);
            }
            ids
        };
        let mut closed = Vec::new();
        for id in ids {
            closed.push(close(&client, &id, args.output.json).await?);
        }
        anyhow::Ok(closed)
    })??;
    if args.output.json {
        // One session as the API answers; several (or --all) as a list.
        return match closed.as_slice() {
            [one] if !args.all => print_json(one),
            all => print_json(&all),
        };
    }
    if args.all && closed.is_empty() {
        println!("no running sessions");
    }
    Ok(())
}

/// Closes one session, saying so; one that had ended already is left as it is.
async fn close(client: &Client, id: &str, json: bool) -> Result<SessionInfo> {
    let session = client.session(id).await?;
    if session.state == SessionState::Ended {
        if !json {
            let reason = session.end_reason.as_deref().unwrap_or("ended");
            println!("{id} was already closed ({reason})");
        }
        return Ok(session);
    }
    let closed = client.close_session(id).await?;
    if !json {
        println!("closed {}", closed.id);
    }
    if closed.state != SessionState::Ended {
        bail!("the service did not close {id}");
    }
    Ok(closed)
}
