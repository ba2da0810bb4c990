//! Where the client commands find the service and its token, and the async runtime they run
//! on.

use anyhow::{bail, Context, Result};
use clap::Args;
use sandboxd_client::{Client, Interface, DEFAULT_URL};
use std::future::Future;
use std::path::PathBuf;

/// The service to talk to.
#[derive(Args)]
pub struct ServiceArgs {
    /// The service's URL.
    #[arg(long, env = "SANDBOXD_URL", default_value = DEFAULT_URL)]
    url: String,
    /// The service token. Without one, the token file of a local service is read when
    /// readable: /var/lib/sandboxd/token, then ~/.local/state/sandboxd/token.
    #[arg(long, env = "SANDBOXD_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

impl ServiceArgs {
    /// A client for the service, speaking as `interface`.
    pub fn client(&self, interface: Interface) -> Result<Client> {
        Ok(Client::new(&self.url, self.token()?, interface)?)
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The token given, or the one a local service keeps.
    pub fn token(&self) -> Result<String> {
        let token = match &self.token {
            Some(token) => token.trim().to_string(),
            None => token_from_files()?,
        };
        if token.is_empty() {
            bail!("the token is empty; pass the service token with --token or SANDBOXD_TOKEN");
        }
        Ok(token)
    }
}

/// Where a service on this host keeps a generated token: as root, then as this user.
fn token_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("/var/lib/sandboxd/token")];
    if let Some(home) = std::env::var_os("HOME") {
        files.push(PathBuf::from(home).join(".local/state/sandboxd/token"));
    }
    files
}

fn token_from_files() -> Result<String> {
    let files = token_files();
    for file in &files {
        if let Ok(token) = std::fs::read_to_string(file) {
            return Ok(token.trim().to_string());
        }
    }
    let tried: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    bail!(
        "no service token: pass it with --token or SANDBOXD_TOKEN (none of {} is readable; `sandboxd serve` prints where its token is)",
        tried.join(", ")
    )
}

/// Runs a client command's future on a single-threaded runtime.
pub fn block_on<F: Future>(future: F) -> Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    Ok(runtime.block_on(future))
}
