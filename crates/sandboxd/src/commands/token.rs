//! `sandboxd token [--tenant NAME] [--e2b]`: a new random token and the config lines that grant it.
//! The config keeps only the token's SHA-256, so the token is shown this once.

use super::output::{print_json, OutputArgs};
use anyhow::Result;
use clap::Args;
use sandboxd_config::{to_hex, token_sha256};
use sandboxd_server::new_token;

#[derive(Args)]
pub struct TokenArgs {
    /// The tenant the token is for; without one, a service (administrator) token.
    #[arg(long)]
    tenant: Option<String>,
    /// In the form E2B API keys take (`e2b_<hex>`), for the E2B SDKs' `E2B_API_KEY`.
    #[arg(long)]
    e2b: bool,
    #[command(flatten)]
    output: OutputArgs,
}

/// `--json`: the token, and for a tenant the hash its config entry takes.
#[derive(serde::Serialize)]
struct NewToken {
    token: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    token_sha256: String,
}

/// The prefix of an E2B API key.
const E2B_KEY_PREFIX: &str = "e2b_";

pub fn run(args: TokenArgs) -> Result<()> {
    let token = if args.e2b {
        format!("{E2B_KEY_PREFIX}{}", new_token())
    } else {
        new_token()
    };
    if args.output.json {
        return print_json(&NewToken {
            token_sha256: to_hex(&token_sha256(&token)),
            token,
            tenant: args.tenant,
        });
    }
    println!("token: {token}");
    println!("(shown once: the config keeps only its hash)");
    println!();
    match args.tenant {
        Some(name) => {
            println!("# add to the config:");
            println!("[tenants.{name}]");
            println!("token_sha256 = \"{}\"", to_hex(&token_sha256(&token)));
            println!("# runtimes = [\"python\"]   # the runtimes it may use (default: all)");
            println!("# max_sessions = 5        # its quota (default: the service's)");
        }
        None => {
            println!("# the service token: put it in a 0600 file and name it in the config:");
            println!("token_file = \"/etc/sandboxd/token\"");
        }
    }
    Ok(())
}
