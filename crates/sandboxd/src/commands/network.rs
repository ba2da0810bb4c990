//! `sandboxd network ID`: the names a session of an egress runtime may reach; with `--set`,
//! narrows them (within its runtime's list), and `--allow-nothing` leaves it none.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{print_json, OutputArgs};
use anyhow::Result;
use clap::Args;
use sandboxd_api::{EgressRule, SessionNetwork};
use sandboxd_client::Interface;

#[derive(Args)]
pub struct NetworkArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    /// Replace the list with these rules (repeat it): `pypi.org`, `*.github.com`,
    /// `api.example.com:8443`; each must be allowed by the runtime's list.
    #[arg(long = "set", value_name = "RULE")]
    set: Vec<EgressRule>,
    /// Replace the list with an empty one: the session reaches nothing.
    #[arg(long, conflicts_with = "set")]
    allow_nothing: bool,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: NetworkArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    let (id, network) = block_on(async {
        let id = args.id.resolve(&client).await?;
        let network = if args.set.is_empty() && !args.allow_nothing {
            client.session_network(&id).await?
        } else {
            let network = SessionNetwork { egress: args.set };
            client.set_session_network(&id, &network).await?
        };
        anyhow::Ok((id, network))
    })??;
    if args.output.json {
        return print_json(&network);
    }
    if network.egress.is_empty() {
        eprintln!("session {id} may reach nothing (its list is empty)");
    }
    for rule in &network.egress {
        println!("{rule}");
    }
    Ok(())
}
