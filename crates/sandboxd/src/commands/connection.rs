//! Where the client commands find the service and its token, and the async runtime they run
//! on.

use anyhow::{bail, Context, Result};
use clap::Args;
use sandboxd_client::{Client, Interface, DEFAULT_URL};
use std::future::Future;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// The longest wait to connect, within the request timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Session ids are this long; a shorter one is a prefix to look up.
const ID_LEN: usize = 24;

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
    /// Seconds to wait for the service to connect and answer (a command's run, its output
    /// and file transfers are bounded by the service instead).
    #[arg(
        long,
        env = "SANDBOXD_REQUEST_TIMEOUT",
        value_name = "SECS",
        default_value_t = 30
    )]
    request_timeout: u64,
}

/// `--url`, `--token` and `--request-timeout` also before the command's name (`sandboxd --url X
/// sessions`): global arguments with [`ServiceArgs`]' ids, which clap hands down to each client
/// command's own (a value given on the command line outranks the environment and the default).
/// Hidden: each command's help shows its own, and `serve` reads its token the same way.
pub fn with_leading_service_args(command: clap::Command) -> clap::Command {
    let leading = |id: &'static str| clap::Arg::new(id).long(id).global(true).hide(true);
    command
        .arg(leading("url"))
        .arg(leading("token"))
        .arg(
            clap::Arg::new("request_timeout")
                .long("request-timeout")
                .value_name("SECS")
                .value_parser(clap::value_parser!(u64))
                .global(true)
                .hide(true),
        )
        .after_help(
            "Client commands take --url, --token and --request-timeout before or after the command's name.",
        )
}

impl ServiceArgs {
    /// A client for the service, speaking as `interface`.
    pub fn client(&self, interface: Interface) -> Result<Client> {
        let request_timeout = Duration::from_secs(self.request_timeout.max(1));
        Ok(Client::with_timeouts(
            &self.url,
            self.token()?,
            interface,
            CONNECT_TIMEOUT,
            request_timeout,
        )?)
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The token given, or the one a local service keeps. Where it came from is noted for
    /// the message when the service refuses it ([`token_source`]).
    pub fn token(&self) -> Result<String> {
        let (token, source) = match &self.token {
            Some(token) if given_as_flag() => (token.trim().to_string(), "--token".to_string()),
            Some(token) => (token.trim().to_string(), "SANDBOXD_TOKEN".to_string()),
            None => token_from_files()?,
        };
        let _ = TOKEN_SOURCE.set(source);
        if token.is_empty() {
            bail!("the token is empty; pass the service token with --token or SANDBOXD_TOKEN");
        }
        Ok(token)
    }
}

/// A session as the command line names it: its id or a unique prefix of one. Commands reach
/// the id only through [`SessionArg::resolve`], so each of them takes the same prefixes.
#[derive(Clone, Debug)]
pub struct SessionArg(String);

impl std::str::FromStr for SessionArg {
    type Err = std::convert::Infallible;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        Ok(SessionArg(given.to_string()))
    }
}

impl SessionArg {
    /// The full id: see [`resolve_id`].
    pub async fn resolve(&self, client: &Client) -> Result<String> {
        resolve_id(client, &self.0).await
    }
}

/// The session a full id or a unique prefix of one names, among the running and recently
/// ended sessions the token may see. An id matching none is passed on as it is, for the
/// service to say it is unknown.
pub async fn resolve_id(client: &Client, id: &str) -> Result<String> {
    if id.len() >= ID_LEN {
        return Ok(id.to_string());
    }
    let sessions = client.list_sessions(true).await?.sessions;
    let matches: Vec<&str> = sessions
        .iter()
        .map(|session| session.id.as_str())
        .filter(|candidate| candidate.starts_with(id))
        .collect();
    match matches.as_slice() {
        [] => Ok(id.to_string()),
        [only] => Ok(only.to_string()),
        many => bail!(
            "the id prefix {id:?} is ambiguous: it matches {}; give more of the id",
            many.join(", ")
        ),
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

/// Where this run's token came from: `--token`, `SANDBOXD_TOKEN` or a token file's path.
static TOKEN_SOURCE: OnceLock<String> = OnceLock::new();

/// Where the token the service was sent came from, once one was.
pub fn token_source() -> Option<&'static str> {
    TOKEN_SOURCE.get().map(String::as_str)
}

/// Whether `--token` is on the command line (clap takes it before `SANDBOXD_TOKEN`).
fn given_as_flag() -> bool {
    std::env::args_os().any(|arg| {
        let arg = arg.to_string_lossy();
        arg == "--token" || arg.starts_with("--token=")
    })
}

/// The token a local service keeps, and the file it is in.
fn token_from_files() -> Result<(String, String)> {
    let files = token_files();
    for file in &files {
        if let Ok(token) = std::fs::read_to_string(file) {
            return Ok((token.trim().to_string(), file.display().to_string()));
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
