//! `sandboxd serve`: load and check the config, then hand the flags to
//! [`sandboxd_server::assemble`] (state directory, token, agent, backend, egress proxy,
//! listener) and serve the API until interrupted; what is printed for the terminal is here.

use anyhow::{bail, Context, Result};
use clap::Args;
use sandboxd_config::{format_bytes, Config};
use sandboxd_server::ServiceOptions;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;

pub const DEFAULT_PORT: u16 = 7717;

#[derive(Args)]
pub struct ServeArgs {
    /// Config file (TOML). Without one, the embedded default is used.
    #[arg(long, env = "SANDBOXD_CONFIG")]
    config: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "SANDBOXD_LISTEN", default_value_t = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)))]
    listen: SocketAddr,
    /// Allow listening on an address other than loopback. The token is a root credential:
    /// only do this on a private network.
    #[arg(long)]
    allow_remote: bool,
    /// Where the token, the agent and the sandboxes' sockets are kept.
    #[arg(long, env = "SANDBOXD_STATE_DIR")]
    state_dir: Option<PathBuf>,
    /// The Docker engine's unix socket.
    #[arg(
        long,
        env = "SANDBOXD_DOCKER_SOCKET",
        default_value = "/var/run/docker.sock"
    )]
    docker_socket: String,
    /// The static in-sandbox agent binary (default: `sandboxd-agent` beside this program).
    #[arg(long, env = "SANDBOXD_AGENT")]
    agent: Option<PathBuf>,
    /// Check the config, print what it allows, and exit.
    #[arg(long)]
    check: bool,
    /// Remove this instance's egress network and its host firewall chains (which a stopped
    /// service keeps for its restart), and exit. Refused while any of its sandboxes exists.
    #[arg(long, conflicts_with = "check")]
    remove_network_state: bool,
    /// The service token, overriding the config's (prefer the environment variable: a flag
    /// shows in the process list).
    #[arg(long, env = "SANDBOXD_TOKEN", hide_env_values = true, hide = true)]
    token: Option<String>,
    /// More host names the service answers to (comma-separated), beside loopback and the
    /// address it listens on: a defence against DNS rebinding.
    #[arg(long, env = "SANDBOXD_ALLOWED_HOSTS", value_delimiter = ',')]
    allowed_hosts: Vec<String>,
    /// What the service logs, as a tracing filter (e.g. `sandboxd=debug`).
    #[arg(
        long,
        env = "SANDBOXD_LOG",
        default_value = "sandboxd=info,sandboxd_server=info,sandboxd_core=info,sandboxd_docker=info"
    )]
    log: String,
    /// Seconds a client has to send a request's headers before its connection is closed
    /// (tests shorten it).
    #[arg(
        long,
        env = "SANDBOXD_HEADER_TIMEOUT_SECS",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..),
        hide = true
    )]
    header_timeout_secs: u64,
}

pub fn run(args: ServeArgs) -> Result<()> {
    return_large_buffers_when_freed();
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::embedded()?,
    };
    let state_dir = args.state_dir.clone().unwrap_or_else(default_state_dir);
    if args.remove_network_state {
        return super::network_state::remove(&config, &state_dir, &args.docker_socket);
    }
    report_worst_case(&config);
    if args.check {
        print_allowed(&config);
        return Ok(());
    }
    if !args.listen.ip().is_loopback() {
        if !args.allow_remote {
            bail!(
                "refusing to listen on {} without --allow-remote: the service token is a root credential; use a loopback address or pass --allow-remote on a private network",
                args.listen
            );
        }
        eprintln!(
            "sandboxd: WARNING: listening on {}, beyond this host. The service token can start containers on this host: it is a root credential. Only do this on a private network.",
            args.listen
        );
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&args.log)
                .with_context(|| format!("invalid --log filter {:?}", args.log))?,
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();

    let options = ServiceOptions {
        config,
        listen: args.listen,
        state_dir,
        docker_socket: args.docker_socket,
        agent: args.agent,
        token: args.token,
        allowed_hosts: args.allowed_hosts,
        header_timeout: Duration::from_secs(args.header_timeout_secs),
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let service = sandboxd_server::assemble(options).await?;
        let address = service.address();
        println!("sandboxd listening on http://{address}");
        println!("  open http://{address}/ (API under /v1, health at /healthz)");
        println!(
            "  authenticate with the header `Authorization: Bearer <token>`; {}",
            service.token_origin()
        );
        println!("  the token can start containers on this host: treat it as a root credential");
        std::io::stdout().flush().ok();
        service.serve(shutdown_signal()).await?;
        eprintln!("sandboxd: stopped; open sessions keep running and resume at the next start");
        Ok(())
    })
}

/// Request bodies and files pass through buffers of megabytes. The allocator's default raises
/// its threshold for mapping a block of its own to the largest block freed so far, after which
/// such buffers come from per-thread heaps that keep them: a flood of 10 MB bodies left the
/// service at 280 MB when it had ended. With a fixed threshold they are unmapped when freed.
fn return_large_buffers_when_freed() {
    const MAP_FROM_BYTES: libc::c_int = 256 * 1024;
    // SAFETY: mallopt takes integers and only changes the allocator's settings.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MAP_FROM_BYTES) };
}

/// What a valid config allows, for `--check`: its runtimes, and which run on gVisor.
pub fn print_allowed(config: &Config) {
    println!(
        "config ok: {} runtimes ({})",
        config.runtimes.len(),
        config.runtime_names()
    );
    let gvisor: Vec<&str> = config
        .runtimes
        .values()
        .filter(|r| r.limits.isolation == sandboxd_api::Isolation::Gvisor)
        .map(|r| r.name.as_str())
        .collect();
    if !gvisor.is_empty() {
        println!(
            "  on gVisor, a kernel of their own (the engine needs the runtime \"runsc\"): {}",
            gvisor.join(", ")
        );
    }
}

pub fn report_worst_case(config: &Config) {
    for warning in config.memory_warnings() {
        eprintln!("sandboxd: WARNING: {warning}");
    }
    let worst = config.worst_case_memory_bytes();
    eprintln!(
        "sandboxd: worst case the config allows: {} sessions x {} (the largest runtime memory ceiling) = {}",
        config.max_sessions,
        format_bytes(worst / u64::from(config.max_sessions)),
        format_bytes(worst)
    );
    if let Some(host) = host_memory_bytes() {
        if worst > host {
            eprintln!(
                "sandboxd: WARNING: that is more than this host's memory ({}); lower max_sessions or the runtimes' mem_limit if sandboxes may really use their ceilings",
                format_bytes(host)
            );
        }
    }
}

fn host_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn default_state_dir() -> PathBuf {
    // /proc/self is owned by the process's effective uid.
    let is_root = std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false);
    if is_root {
        PathBuf::from("/var/lib/sandboxd")
    } else {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        home.join(".local/state/sandboxd")
    }
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("install SIGTERM handler");
    tokio::select! {
        _ = interrupt => {},
        _ = terminate.recv() => {},
    }
}
