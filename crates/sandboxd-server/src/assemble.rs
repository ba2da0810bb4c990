//! The service put together the way `sandboxd serve` runs it: the state directory prepared
//! (token, instance id, agent), the backend the config names (Docker, or Kubernetes), the
//! store, the core with the sessions of the last run taken back, the egress proxy, and the
//! API's listener. The binary parses its flags into [`ServiceOptions`] and calls
//! [`assemble`]; the integration tests call it the same way.

mod egress;
mod error;
mod state_dir;

pub use error::AssembleError;
pub use state_dir::new_token;

use error::with_causes;

use sandboxd_backend::Backend;
use sandboxd_config::{AgentPath, BackendSettings, Config};
use sandboxd_core::Core;
use sandboxd_docker::{DockerBackend, DockerOptions};
use sandboxd_kubernetes::{KubernetesBackend, KubernetesOptions};
use sandboxd_store::Store;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What the service is started with: the config, and what `sandboxd serve`'s flags say.
pub struct ServiceOptions {
    pub config: Config,
    /// The API's address (port 0: any free one, see [`Service::address`]).
    pub listen: SocketAddr,
    /// Where the token, the agent and the sandboxes' sockets are kept; made if missing.
    pub state_dir: PathBuf,
    /// The Docker engine's unix socket (unused with the Kubernetes backend).
    pub docker_socket: String,
    /// The static in-sandbox agent; `None`: `sandboxd-agent` beside the running program.
    pub agent: Option<PathBuf>,
    /// The service token, overriding the config's.
    pub token: Option<String>,
    /// More host names the service answers to, beside loopback and its address.
    pub allowed_hosts: Vec<String>,
    /// How long a client has to send a request's headers.
    pub header_timeout: Duration,
}

/// A service ready to serve: everything started, its listener bound.
pub struct Service {
    core: Core,
    listener: tokio::net::TcpListener,
    address: SocketAddr,
    token_origin: String,
    allowed_hosts: Vec<String>,
    header_timeout: Duration,
}

impl Service {
    /// The address the API listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// A sentence saying where the token comes from (never the token itself).
    pub fn token_origin(&self) -> &str {
        &self.token_origin
    }

    /// Serves the API until `shutdown` completes. Open sessions keep running after, for the
    /// next start to take back.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), AssembleError> {
        crate::app::serve(
            self.listener,
            self.core,
            &self.allowed_hosts,
            self.header_timeout,
            shutdown,
        )
        .await
        .map_err(AssembleError::Serve)
    }
}

/// How often a start that took sessions back asks an engine that did not answer again, for its
/// report.
const ENGINE_RETRY: Duration = Duration::from_secs(2);

/// Prepares the state directory, connects the backend, takes back the last run's sessions and
/// starts the egress proxy (in the background, on the current Tokio runtime), and binds the
/// API's listener.
pub async fn assemble(options: ServiceOptions) -> Result<Service, AssembleError> {
    let ServiceOptions {
        mut config,
        listen,
        state_dir,
        docker_socket,
        agent,
        token,
        allowed_hosts,
        header_timeout,
    } = options;
    state_dir::create_private_dir(&state_dir)?;
    // Paths under it are handed to the engine, which takes only absolute ones.
    let state_dir =
        std::fs::canonicalize(&state_dir).map_err(|source| AssembleError::ResolveStateDir {
            path: state_dir.clone(),
            source,
        })?;
    let (token, token_origin) = state_dir::resolve_token(&config, token, &state_dir)?;
    let agent = state_dir::install_agent(agent.as_deref(), &state_dir)?;
    let instance_id = state_dir::instance_id(&state_dir)?;
    let egress_ca = egress::load_ca(&mut config, &state_dir)?;

    let starting = std::time::Instant::now();
    let (backend, platform) =
        connect_backend(&config, &docker_socket, instance_id, agent, &state_dir).await?;
    let store =
        Arc::new(Store::open(&state_dir.join("sandboxd.db")).map_err(AssembleError::OpenStore)?);
    let core = Core::new(config, token, backend, store);
    // Before the last run's sessions are judged: those found gone are told of too.
    sandboxd_webhooks::start(&core).map_err(AssembleError::Webhooks)?;
    let taken = core.take_back().await.map_err(AssembleError::TakeBack)?;
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
                    loop {
                        match report_engine(&reporting, &docker).await {
                            Ok(()) => break,
                            Err(AssembleError::IsolationUnavailable(why)) => {
                                eprintln!("sandboxd: WARNING: {why}; their sessions cannot open");
                                break;
                            }
                            Err(e) if !warned => {
                                eprintln!("sandboxd: WARNING: {}; the sessions of the last run are served through their agents, and whatever needs the engine fails until it answers", with_causes(&e));
                                warned = true;
                            }
                            Err(_) => {}
                        }
                        tokio::time::sleep(ENGINE_RETRY).await;
                    }
                });
            }
            // Before serving: sandboxes with egress reach out through it.
            egress::start(&core, &docker, &state_dir, egress_ca).await?;
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
    let listen_error = |source| AssembleError::Listen {
        address: listen.to_string(),
        purpose: "",
        source,
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(listen_error)?;
    let address = listener.local_addr().map_err(listen_error)?;
    Ok(Service {
        core,
        listener,
        address,
        token_origin,
        allowed_hosts,
        header_timeout,
    })
}

/// What the backend says about its platform: known at connection, or asked of the Docker
/// engine.
enum Platform {
    Reported(serde_json::Value),
    Docker(Arc<DockerBackend>),
}

/// Waits for the engine's first answers, logs what they mean against known container escapes,
/// and keeps the report for the administrator; fails when the engine lacks a runtime's
/// isolation tier.
async fn report_engine(core: &Core, docker: &DockerBackend) -> Result<(), AssembleError> {
    let report = docker.engine_report().await?;
    report.log();
    let runtimes = core.config().runtimes.values();
    let missing = sandboxd_docker::isolation::missing_tier(
        &report.runtimes,
        runtimes.map(|runtime| (runtime.name.as_str(), runtime.limits.isolation)),
    );
    core.set_engine_report(
        serde_json::to_value(report).map_err(AssembleError::EncodeEngineReport)?,
    );
    missing.map_or(Ok(()), |why| Err(AssembleError::IsolationUnavailable(why)))
}

/// The backend the config names, and either what it reports about its platform (Kubernetes,
/// which answered already) or the Docker backend itself (whose engine is asked later, see
/// [`report_engine`]; the egress proxy needs its network too).
async fn connect_backend(
    config: &Config,
    docker_socket: &str,
    instance_id: String,
    agent: PathBuf,
    state_dir: &Path,
) -> Result<(Arc<dyn Backend>, Platform), AssembleError> {
    match &config.backend {
        BackendSettings::Docker(settings) => {
            let backend = DockerBackend::connect(DockerOptions {
                socket: docker_socket.to_string(),
                instance_id,
                agent_binary: agent,
                socket_root: state_dir.join("sandboxes"),
                volume_root: state_dir.join("volumes"),
                checkpoint_root: state_dir.join("checkpoints"),
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
                volume_storage_class: settings.volume_storage_class.clone(),
                volume_access_mode: settings.volume_access_mode.clone(),
                agents_on_pod_network: match settings.agent_path {
                    AgentPath::Auto => None,
                    AgentPath::PodNetwork => Some(true),
                    AgentPath::PortForward => Some(false),
                },
            })
            .await
            .map_err(AssembleError::Kubernetes)?;
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
