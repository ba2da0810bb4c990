//! `sandboxd forward ID PORT [LOCAL]`, like `kubectl port-forward`: a listener on
//! 127.0.0.1:LOCAL (PORT by default; 0 picks a free one) whose every connection is a raw
//! TCP tunnel to PORT in the sandbox, through the service. Runs until Ctrl-C.

use super::connection::{block_on, ServiceArgs, SessionArg};
use crate::remedy::cli_text;
use anyhow::{Context, Result};
use clap::Args;
use sandboxd_client::{Client, Interface};
use std::net::Ipv4Addr;
use tokio::net::{TcpListener, TcpStream};

#[derive(Args)]
pub struct ForwardArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    /// The port in the sandbox.
    port: u16,
    /// The local port to listen on, on 127.0.0.1: PORT when not given, any free one for 0.
    local: Option<u16>,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: ForwardArgs) -> Result<()> {
    let client = args.service.client(Interface::Cli)?;
    block_on(async {
        let id = args.id.resolve(&client).await?;
        // A session that is not there fails now, not at the first connection.
        client.session(&id).await?;
        let local = args.local.unwrap_or(args.port);
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, local))
            .await
            .with_context(|| format!("cannot listen on 127.0.0.1:{local}"))?;
        let address = listener.local_addr()?;
        println!("Forwarding from {address} -> {id}:{}", args.port);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((connection, _)) = accepted else { continue };
                    tokio::spawn(carry(client.clone(), id.clone(), args.port, connection));
                }
                _ = tokio::signal::ctrl_c() => return Ok(()),
            }
        }
    })?
}

/// One local connection, carried through its own tunnel until either side closes it.
async fn carry(client: Client, id: String, port: u16, mut connection: TcpStream) {
    match client.tunnel(&id, port).await {
        Ok(tunnel) => {
            let mut tunnel = tunnel;
            let _ = tokio::io::copy_bidirectional(&mut connection, &mut tunnel).await;
        }
        Err(error) => {
            let text = cli_text(&error).unwrap_or_else(|| error.to_string());
            eprintln!("sandboxd: a connection to port {port} failed: {text}");
        }
    }
}
