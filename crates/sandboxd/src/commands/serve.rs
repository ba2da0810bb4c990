//! `sandboxd serve`: load and check the config, prepare the state directory, the token and the
//! agent, connect to the backend (Docker, or Kubernetes when the config says so), then serve the API until interrupted.

use anyhow::{bail, Context, Result};
use clap::Args;
use rand::Rng;
use sandboxd_backend::Backend;
use sandboxd_config::{check_token, format_bytes, BackendSettings, Config, TokenSource};
use sandboxd_core::Core;
use sandboxd_docker::{is_static_elf, DockerBackend, DockerOptions};
use sandboxd_kubernetes::{KubernetesBackend, KubernetesOptions};
use sandboxd_store::Store;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::embedded()?,
    };
    if args.remove_network_state {
        let state_dir = args.state_dir.clone().unwrap_or_else(default_state_dir);
        return super::network_state::remove(&config, &state_dir, &args.docker_socket);
    }
    report_worst_case(&config);
    if args.check {
        println!(
            "config ok: {} runtimes ({})",
            config.runtimes.len(),
            config.runtime_names()
        );
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

    let state_dir = args.state_dir.clone().unwrap_or_else(default_state_dir);
    create_private_dir(&state_dir)?;
    // Paths under it are handed to the engine, which takes only absolute ones.
    let state_dir = std::fs::canonicalize(&state_dir)
        .with_context(|| format!("cannot resolve the state directory {}", state_dir.display()))?;
    let (token, token_origin) = resolve_token(&config, args.token.clone(), &state_dir)?;
    let agent = install_agent(args.agent.as_deref(), &state_dir)?;
    let instance_id = instance_id(&state_dir)?;
    let egress_ca = crate::egress::load_ca(&mut config, &state_dir)?;

    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let starting = std::time::Instant::now();
        let (backend, platform) =
            connect_backend(&config, &args, instance_id, agent, &state_dir).await?;
        let store = Arc::new(
            Store::open(&state_dir.join("sandboxd.db")).context("cannot open the state database")?,
        );
        let core = Core::new(config, token, backend, store);
        // Before the last run's sessions are judged: those found gone are told of too.
        sandboxd_webhooks::start(&core).context("cannot start the webhooks")?;
        let taken = core
            .take_back()
            .await
            .context("cannot take back the sessions of the last run")?;
        match platform {
            Platform::Reported(report) => core.set_engine_report(report),
            Platform::Docker(docker) => {
                if taken.count() == 0 {
                    // Nothing to serve yet: a service that cannot reach its engine says so now.
                    report_engine(&core, &docker).await?;
                } else {
                    // The sessions of the last run need only their agents, and an engine running
                    // thousands of containers took seconds over its first answers at such a start.
                    let reporting = core.clone();
                    let docker = docker.clone();
                    tokio::spawn(async move {
                        let mut warned = false;
                        while let Err(e) = report_engine(&reporting, &docker).await {
                            if !warned {
                                eprintln!("sandboxd: WARNING: {e:#}; the sessions of the last run are served through their agents, and whatever needs the engine fails until it answers");
                                warned = true;
                            }
                            tokio::time::sleep(ENGINE_RETRY).await;
                        }
                    });
                }
                // Before serving: sandboxes with egress reach out through it.
                crate::egress::start(&core, &docker, &state_dir, egress_ca).await?;
            }
        }
        if taken.count() > 0 {
            eprintln!(
                "sandboxd: from the last run: {} sessions serving again {} ms after the start; asking the engine which sandboxes survived",
                taken.count(),
                starting.elapsed().as_millis(),
            );
        }
        // Beside serving: with thousands of sandboxes the engine takes seconds to list them.
        let judging = core.clone();
        tokio::spawn(async move {
            match judging.reconcile(taken).await {
                Ok(r) if r.resumed + r.ended + r.orphans_removed == 0 => {}
                Ok(r) => eprintln!(
                    "sandboxd: from the last run: {} sessions resumed, {} ended (their sandboxes were gone), {} unowned sandboxes removed",
                    r.resumed, r.ended, r.orphans_removed
                ),
                Err(e) => eprintln!(
                    "sandboxd: cannot ask the engine which sandboxes of the last run survived: {e}; the sandbox checks will end those that did not"
                ),
            }
        });
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let address = listener.local_addr()?;
        println!("sandboxd listening on http://{address}");
        println!("  open http://{address}/ (API under /v1, health at /healthz)");
        println!("  authenticate with the header `Authorization: Bearer <token>`; {token_origin}");
        println!("  the token can start containers on this host: treat it as a root credential");
        std::io::stdout().flush().ok();
        sandboxd_server::serve(
            listener,
            core,
            &args.allowed_hosts,
            std::time::Duration::from_secs(args.header_timeout_secs),
            shutdown_signal(),
        )
        .await
        .context("the HTTP server failed")?;
        eprintln!("sandboxd: stopped; open sessions keep running and resume at the next start");
        Ok(())
    })
}

/// How often a start that took sessions back asks an engine that did not answer again, for its
/// report.
const ENGINE_RETRY: std::time::Duration = std::time::Duration::from_secs(2);

/// What the backend says about its platform: known at connection, or asked of the Docker
/// engine.
enum Platform {
    Reported(serde_json::Value),
    Docker(Arc<DockerBackend>),
}

/// Waits for the engine's first answers, logs what they mean against known container escapes,
/// and keeps the report for the administrator.
async fn report_engine(core: &Core, docker: &DockerBackend) -> Result<()> {
    let report = docker.engine_report().await?;
    report.log();
    core.set_engine_report(
        serde_json::to_value(report).context("cannot encode the engine report")?,
    );
    Ok(())
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

/// The backend the config names, and either what it reports about its platform (Kubernetes,
/// which answered already) or the Docker backend itself (whose engine is asked later, see
/// [`report_engine`]; the egress proxy needs its network too).
async fn connect_backend(
    config: &Config,
    args: &ServeArgs,
    instance_id: String,
    agent: PathBuf,
    state_dir: &Path,
) -> Result<(Arc<dyn Backend>, Platform)> {
    match &config.backend {
        BackendSettings::Docker(settings) => {
            let backend = DockerBackend::connect(DockerOptions {
                socket: args.docker_socket.clone(),
                instance_id,
                agent_binary: agent,
                socket_root: state_dir.join("sandboxes"),
                sandboxes_per_shim: settings.sandboxes_per_shim,
            })?;
            let backend = Arc::new(backend);
            Ok((backend.clone(), Platform::Docker(backend)))
        }
        BackendSettings::Kubernetes(settings) => {
            let backend = KubernetesBackend::connect(KubernetesOptions {
                kubeconfig: settings.kubeconfig.clone(),
                namespace: settings.namespace.clone(),
                node_selector: settings.node_selector.clone(),
                runtime_classes: settings.runtime_class.clone(),
                instance_id,
                agent_image: settings.agent_image.clone(),
                key_dir: state_dir.join("sandboxes"),
            })
            .await
            .context("cannot use the Kubernetes cluster")?;
            eprintln!(
                "sandboxd: sandboxes run as pods in namespace {} (agent image {})",
                settings.namespace, settings.agent_image
            );
            for runtime in config.runtimes.values() {
                if let (None, Some(recipe)) = (&runtime.image, &runtime.recipe) {
                    eprintln!(
                        "sandboxd: WARNING: runtime {} is built from recipe {recipe}, which the Kubernetes backend does not build: {}",
                        runtime.name,
                        sandboxd_kubernetes::RECIPE_REMEDY
                    );
                }
            }
            let report = serde_json::json!({
                "backend": "kubernetes",
                "namespace": settings.namespace,
                "agent_image": settings.agent_image,
            });
            Ok((Arc::new(backend), Platform::Reported(report)))
        }
    }
}

fn report_worst_case(config: &Config) {
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

/// Creates `dir` as 0700, or tightens it to 0700: the state directory and every directory in
/// it are the service's alone (the engine, as root, still bind-mounts from them).
fn create_private_dir(dir: &Path) -> Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create directory {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot set permissions on {}", dir.display()))
}

/// The token, and a sentence saying where it comes from (never the token itself).
fn resolve_token(
    config: &Config,
    given: Option<String>,
    state_dir: &Path,
) -> Result<(String, String)> {
    if let Some(token) = given {
        check_token(&token, "SANDBOXD_TOKEN")?;
        return Ok((
            token,
            "the token is the one in the SANDBOXD_TOKEN variable".into(),
        ));
    }
    match &config.token {
        TokenSource::Inline(token) => Ok((
            token.clone(),
            "the token is the one in the config file".into(),
        )),
        TokenSource::File(path) => {
            let token = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read token_file {}", path.display()))?
                .trim()
                .to_string();
            check_token(&token, "token_file")?;
            Ok((token, format!("the token is in {}", path.display())))
        }
        TokenSource::Generated => {
            let path = state_dir.join("token");
            let origin = format!(
                "the token is in {} (read it with: cat {})",
                path.display(),
                path.display()
            );
            match std::fs::read_to_string(&path) {
                Ok(token) => {
                    let token = token.trim().to_string();
                    check_token(&token, &path.display().to_string())?;
                    Ok((token, origin))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let token = super::token::new_token();
                    let mut file = std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .mode(0o600)
                        .open(&path)
                        .with_context(|| format!("cannot create {}", path.display()))?;
                    writeln!(file, "{token}")?;
                    Ok((token, format!("{origin}; it was generated now")))
                }
                Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
            }
        }
    }
}

/// An id for this service's sandboxes, kept in the state directory so a restart finds them.
fn instance_id(state_dir: &Path) -> Result<String> {
    let path = state_dir.join("instance-id");
    match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => Ok(id.trim().to_string()),
        _ => {
            let bytes: [u8; 8] = rand::rng().random();
            let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            std::fs::write(&path, format!("{id}\n"))
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(id)
        }
    }
}

/// Copies the agent into the state directory, so the bind-mounted file never changes under a
/// running sandbox when the build output is replaced.
fn install_agent(explicit: Option<&Path>, state_dir: &Path) -> Result<PathBuf> {
    let source = match explicit {
        Some(path) => path.to_path_buf(),
        None => std::env::current_exe()
            .context("cannot locate the sandboxd program")?
            .with_file_name("sandboxd-agent"),
    };
    let is_static = is_static_elf(&source).with_context(|| {
        format!(
            "cannot read the in-sandbox agent at {}; build it with scripts/build.sh or point --agent (SANDBOXD_AGENT) at it",
            source.display()
        )
    })?;
    if !is_static {
        bail!(
            "the agent at {} is not a static binary, so it would not run in images without a C library; build it with scripts/build.sh",
            source.display()
        );
    }
    let dir = state_dir.join("agent");
    // The agent file itself is what containers mount, so its directory can be private.
    create_private_dir(&dir)?;
    let target = dir.join("sandboxd-agent");
    let staging = dir.join(format!(".sandboxd-agent.{}", std::process::id()));
    std::fs::copy(&source, &staging)
        .with_context(|| format!("cannot copy the agent to {}", staging.display()))?;
    std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o555))?;
    std::fs::rename(&staging, &target)?;
    Ok(target)
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
