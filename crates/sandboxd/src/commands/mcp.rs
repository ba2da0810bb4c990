//! `sandboxd mcp`: an MCP server on stdin/stdout for an agent that launches it as a
//! subprocess, forwarding every tool call to a running service.

use super::connection::{block_on, ServiceArgs};
use anyhow::{Context, Result};
use clap::Args;
use sandboxd_client::Interface;

#[derive(Args)]
pub struct McpArgs {
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: McpArgs) -> Result<()> {
    let client = args.service.client(Interface::Mcp)?;
    block_on(sandboxd_mcp::serve_stdio(client))?.context("the MCP server failed")
}
