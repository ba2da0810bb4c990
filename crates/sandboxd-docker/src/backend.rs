//! The backend itself: a container per sandbox, created with the hardened profile, started
//! (twice when its shim did not come up) and watched until its agent dials in; adopted,
//! paused, listed and removed.

use crate::access;
use crate::agent_sockets::AgentSockets;
use crate::build;
use crate::build::image_hint;
use crate::checkpoint::{self, Checkpoints};
use crate::confined;
use crate::confined_paths;
use crate::egress;
use crate::engine;
use crate::host_volumes::HostVolumes;
use crate::isolation;
use crate::labels::{LABEL_INSTANCE, LABEL_MANAGED, LABEL_RUNTIME, LABEL_SESSION};
use crate::layout::{AGENT_IN_SANDBOX, SANDBOX_UID, SOCKET_DIR_IN_SANDBOX};
use crate::link;
use crate::link::{engine_error, is_not_found, Engine, EngineLink};
use crate::listing;
use crate::network;
use crate::network::BridgeNetwork;
use crate::options::DockerOptions;
use crate::pause;
use crate::stops;
use crate::work_volume;
use async_trait::async_trait;
use bollard::models::{ContainerCreateBody, HostConfig, HostConfigLogConfig, Mount};
use bollard::query_parameters::{CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder};
use bollard::Docker;
use sandboxd_agent_proto::host::{wake_agent, AgentKey};
use sandboxd_agent_proto::AgentHub;
use sandboxd_api::Limits;
use sandboxd_api::NetworkMode;
use sandboxd_backend::WORKDIR;
use sandboxd_backend::{
    AgentStream, Backend, BackendError, ExistingSandbox, ImageProgress, ImageRequest, Paused,
    Sandbox, SandboxSpec, Usage, VolumeEntry, VolumeMount, VolumePathOp,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How long a started container may take until its agent dials in.
const AGENT_START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a start whose shim did not come up waits before the second start: the other
/// start of its shim group is then done.
const SHIM_RETRY_DELAY: Duration = Duration::from_millis(50);
/// How long a request waits for an idle agent connection.
const AGENT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

mod late_volumes;
mod memory_copy;

pub struct DockerBackend {
    link: Arc<EngineLink>,
    options: DockerOptions,
    sockets: Arc<AgentSockets>,
    bridge: BridgeNetwork,
    /// Set up at the first egress sandbox (or when the service starts its proxy).
    egress: tokio::sync::OnceCell<Arc<egress::EgressNetwork>>,
    /// Set when the service starts its proxy with secrets in use.
    secrets: std::sync::OnceLock<egress::SecretsSetup>,
    volumes: HostVolumes,
    checkpoints: Checkpoints,
}

impl DockerBackend {
    /// Prepares the sockets' root and key. Asks nothing of the engine yet: see [`link`].
    pub fn connect(options: DockerOptions) -> Result<DockerBackend, BackendError> {
        let setup = |e: std::io::Error| {
            BackendError::Setup(format!(
                "cannot prepare {}: {e}",
                options.socket_root.display()
            ))
        };
        access::private_dir(&options.socket_root).map_err(setup)?;
        let volumes = HostVolumes::new(options.volume_root.clone());
        volumes.prepare()?;
        let key = AgentKey::load_or_create(&options.socket_root).map_err(setup)?;
        // SAFETY: geteuid has no preconditions.
        let service_is_root = unsafe { libc::geteuid() } == 0;
        Ok(DockerBackend {
            link: Arc::new(EngineLink::new(
                options.socket.clone(),
                options.instance_id.clone(),
                options.sandboxes_per_shim,
                service_is_root,
            )),
            sockets: Arc::new(AgentSockets::new(
                options.socket_root.clone(),
                key,
                service_is_root,
            )),
            checkpoints: Checkpoints::new(options.checkpoint_root.clone()),
            options,
            bridge: BridgeNetwork::default(),
            egress: tokio::sync::OnceCell::new(),
            secrets: std::sync::OnceLock::new(),
            volumes,
        })
    }

    /// What the engine said about itself at its first answers, checked against known
    /// escapes; asks it first if nothing did yet.
    pub async fn engine_report(&self) -> Result<&engine::EngineReport, BackendError> {
        Ok(&self.engine().await?.report)
    }

    async fn engine(&self) -> Result<&Engine, BackendError> {
        self.link.engine().await
    }

    async fn docker(&self) -> Result<&Docker, BackendError> {
        Ok(&self.engine().await?.docker)
    }

    fn container_name(&self, session_id: &str) -> String {
        format!("sandboxd-{session_id}")
    }

    /// The hub of a sandbox's agent, bound first if it was taken back and not yet bound.
    async fn open_hub(&self, sandbox: &Sandbox) -> Result<Arc<AgentHub>, BackendError> {
        self.sockets
            .hub(&sandbox.session_id)
            .await?
            .ok_or_else(|| BackendError::SandboxGone(sandbox.session_id.clone()))
    }

    /// [`DockerBackend::open_hub`] of a sandbox started before this service process, taken
    /// back first unless it was ([`Backend::reattach`]).
    async fn taken_back_hub(&self, sandbox: &Sandbox) -> Result<Arc<AgentHub>, BackendError> {
        self.sockets.take_back(&sandbox.session_id);
        self.open_hub(sandbox).await
    }

    /// Gives egress sandboxes started from now on their secrets' placeholders and CA bundle;
    /// set once, before the first sandbox.
    pub fn set_egress_secrets(&self, setup: egress::SecretsSetup) {
        if self.secrets.set(setup).is_err() {
            tracing::warn!("the egress secrets were set already; the first setting stays");
        }
    }

    /// This instance's egress network, made (with its firewall rules) at the first call.
    pub async fn egress_network(&self) -> Result<Arc<egress::EgressNetwork>, BackendError> {
        self.egress
            .get_or_try_init(|| async {
                let network = egress::EgressNetwork::ensure(
                    self.docker().await?,
                    &self.options.instance_id,
                    &self.options.socket_root,
                )
                .await?;
                Ok::<_, BackendError>(Arc::new(network))
            })
            .await
            .cloned()
    }

    fn container_body(
        &self,
        engine: &Engine,
        spec: &SandboxSpec,
        egress: Option<&egress::EgressNetwork>,
        volumes: Vec<Mount>,
        work_source: &str,
    ) -> ContainerCreateBody {
        let limits = &spec.limits;
        let tier = isolation::settings(limits);
        // Never the engine's default bridge, where containers reach each other.
        let network = match limits.network_mode {
            NetworkMode::Bridge => network::BRIDGE_NETWORK,
            NetworkMode::Egress => match egress {
                Some(egress) => egress.names().network.as_str(),
                None => "none",
            },
            NetworkMode::None => "none",
        };
        let mut env = vec![format!("HOME={WORKDIR}")];
        let mut binds = vec![
            format!(
                "{}:{AGENT_IN_SANDBOX}:ro",
                self.options.agent_binary.display()
            ),
            format!(
                "{}:{SOCKET_DIR_IN_SANDBOX}:ro",
                self.sockets.dir(&spec.session_id).display()
            ),
        ];
        if let Some(egress) = egress.filter(|_| limits.network_mode == NetworkMode::Egress) {
            env.extend(egress.environment());
            binds.push(egress.resolv_conf_bind());
            if let Some(secrets) = self.secrets.get() {
                let (secrets_env, secrets_binds) =
                    secrets.for_sandbox(&spec.session_id, &spec.runtime);
                env.extend(secrets_env);
                binds.extend(secrets_binds);
            }
        }
        ContainerCreateBody {
            image: Some(spec.image.clone()),
            user: Some(format!("{SANDBOX_UID}:{SANDBOX_UID}")),
            entrypoint: Some(
                [
                    AGENT_IN_SANDBOX.to_string(),
                    "--connect".to_string(),
                    format!("{SOCKET_DIR_IN_SANDBOX}/agent.sock"),
                ]
                .into_iter()
                .chain(tier.agent_args)
                .collect(),
            ),
            cmd: Some(vec![]),
            working_dir: Some(WORKDIR.to_string()),
            env: Some(env),
            hostname: Some("sandbox".to_string()),
            labels: Some(self.labels(spec)),
            host_config: Some(HostConfig {
                binds: Some(binds),
                cap_drop: Some(vec!["ALL".to_string()]),
                security_opt: Some(vec!["no-new-privileges".to_string()]),
                readonly_rootfs: Some(true),
                tmpfs: Some(HashMap::from([(
                    "/tmp".to_string(),
                    format!("{},mode=1777", tmpfs_options(limits)),
                )])),
                mounts: Some(
                    work_volume::mounts(&work_volume::name(&self.container_name(&spec.session_id)))
                        .into_iter()
                        .chain(volumes)
                        .collect(),
                ),
                pids_limit: Some(tier.host_pids_limit),
                ulimits: tier.ulimits,
                runtime: tier.runtime,
                // /dev/shm is one more memory-backed writable place: as large as the others.
                shm_size: Some(i64::try_from(limits.tmpfs_size_bytes).unwrap_or(i64::MAX)),
                memory: Some(tier.host_memory),
                memory_swap: Some(tier.host_memory),
                nano_cpus: Some(nano_cpus(limits.cpus)),
                // The agent is its own init (it reaps and passes stop signals on): no engine
                // init process beside it.
                init: Some(false),
                log_config: Some(HostConfigLogConfig {
                    typ: Some("none".to_string()),
                    config: None,
                }),
                network_mode: Some(network.to_string()),
                privileged: Some(false),
                annotations: self.annotations(engine, spec, work_source),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// The shim group's; a gVisor sandbox's checkpoint directory (where the engine's runsc,
    /// when sandboxd's wrapper, restores it from at its next start) and its working
    /// directory's hints (kept in gVisor's kernel, so a checkpoint saves it).
    fn annotations(
        &self,
        engine: &Engine,
        spec: &SandboxSpec,
        work_source: &str,
    ) -> Option<HashMap<String, String>> {
        let mut annotations = engine.shims.next_annotations().unwrap_or_default();
        if spec.limits.isolation == sandboxd_api::Isolation::Gvisor {
            annotations.extend([self.checkpoints.annotation(&spec.session_id)]);
            annotations.extend(work_volume::gvisor_hints(
                work_source,
                spec.limits.tmpfs_size_bytes,
            ));
        }
        (!annotations.is_empty()).then_some(annotations)
    }

    fn labels(&self, spec: &SandboxSpec) -> HashMap<String, String> {
        HashMap::from([
            (LABEL_MANAGED.to_string(), "true".to_string()),
            (LABEL_INSTANCE.to_string(), self.options.instance_id.clone()),
            (LABEL_SESSION.to_string(), spec.session_id.clone()),
            (LABEL_RUNTIME.to_string(), spec.runtime.clone()),
        ])
    }

    /// Removes a session's container (by its name or id), then its working directory's
    /// volume, which the engine keeps until no container holds it.
    async fn remove_sandbox(&self, container: &str, session_id: &str) -> Result<(), BackendError> {
        let removed = self.remove_container(container).await;
        let volume = work_volume::name(&self.container_name(session_id));
        removed.and(work_volume::remove(self.docker().await?, &volume).await)
    }

    async fn remove_container(&self, name: &str) -> Result<(), BackendError> {
        let options = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        match self
            .docker()
            .await?
            .remove_container(name, Some(options))
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            // Removal already under way (e.g. two closes at once) ends the same way.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409, ..
            }) => Ok(()),
            Err(e) => Err(engine_error(e)),
        }
    }

    /// Says why a container that never became ready stopped, for the error message.
    async fn describe_failed_start(&self, name: &str) -> String {
        let docker = match self.docker().await {
            Ok(docker) => docker,
            Err(e) => return e.to_string(),
        };
        match docker.inspect_container(name, None).await {
            Ok(inspect) => match inspect.state {
                Some(state) if state.running != Some(true) => format!(
                    "the container exited with code {} before its agent started{}",
                    state.exit_code.unwrap_or_default(),
                    state
                        .error
                        .filter(|e| !e.is_empty())
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                ),
                _ => format!(
                    "the sandbox agent did not dial in within {}s",
                    AGENT_START_TIMEOUT.as_secs()
                ),
            },
            Err(e) => format!("the container vanished during start: {e}"),
        }
    }

    async fn start_container(
        &self,
        spec: &SandboxSpec,
        hub: &AgentHub,
    ) -> Result<String, BackendError> {
        if spec.limits.network_mode == NetworkMode::Bridge {
            self.bridge.ensure(self.docker().await?).await?;
        }
        let egress = match spec.limits.network_mode {
            NetworkMode::Egress => Some(self.egress_network().await?),
            _ => None,
        };
        let name = self.container_name(&spec.session_id);
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let engine = self.engine().await?;
        let volumes = self.volumes.binds(&spec.volumes)?;
        let work_source = work_volume::create(
            &engine.docker,
            &work_volume::name(&name),
            &work_volume::host_options(&spec.limits, tmpfs_options),
            self.labels(spec),
        )
        .await?;
        let created = engine
            .docker
            .create_container(
                Some(options),
                self.container_body(engine, spec, egress.as_deref(), volumes, &work_source),
            )
            .await
            .map_err(|e| {
                if is_not_found(&e) {
                    BackendError::ImageMissing {
                        image: spec.image.clone(),
                        hint: image_hint(&spec.image),
                    }
                } else {
                    engine_error(e)
                }
            })?;
        self.seed_memory(spec)?;
        start_created(&engine.docker, &created.id).await?;
        self.call_restored_agent(spec, hub);
        if let Some(egress) = &egress {
            egress.forget_addresses();
        }
        if hub.wait_ready(AGENT_START_TIMEOUT).await.is_err() {
            return Err(BackendError::AgentUnavailable(
                self.describe_failed_start(&name).await,
            ));
        }
        self.sockets.remove_secret(&spec.session_id)?;
        self.unseed_memory(spec);
        Ok(created.id)
    }
}

/// The mount options of a sandbox's tmpfs places. Inodes are capped too (one per 4 KiB of
/// the size), so a flood of empty files stops with ENOSPC instead of pinning the sandbox at
/// its memory ceiling.
fn tmpfs_options(limits: &sandboxd_api::Limits) -> String {
    format!(
        "rw,exec,nosuid,nodev,size={},nr_inodes={}",
        limits.tmpfs_size_bytes,
        (limits.tmpfs_size_bytes / 4096).max(1024)
    )
}

/// Starts a created container, twice if containerd could not start its shim the first time
/// (see [`link::shim_did_not_start`]).
async fn start_created(docker: &Docker, id: &str) -> Result<(), BackendError> {
    match docker.start_container(id, None).await {
        Err(e) if link::shim_did_not_start(&e) => {
            tracing::warn!(container = %id, error = %e, "the engine could not start the sandbox's shim; starting it again");
            tokio::time::sleep(SHIM_RETRY_DELAY).await;
            docker.start_container(id, None).await.map_err(engine_error)
        }
        started => started.map_err(engine_error),
    }
}

#[async_trait]
impl Backend for DockerBackend {
    async fn create(&self, spec: &SandboxSpec) -> Result<Sandbox, BackendError> {
        let access = self.engine().await?.access;
        let secret_of = self.secret_of(spec)?;
        let hub = self
            .sockets
            .open_new(&spec.session_id, access, secret_of.as_deref())?;
        match self.start_container(spec, &hub).await {
            Ok(backend_id) => Ok(Sandbox {
                session_id: spec.session_id.clone(),
                backend_id,
            }),
            Err(e) => {
                let name = self.container_name(&spec.session_id);
                if let Err(cleanup) = self.remove_sandbox(&name, &spec.session_id).await {
                    tracing::warn!(container = %name, error = %cleanup, "cannot remove a sandbox that failed to start");
                }
                self.sockets.close(&spec.session_id);
                self.unseed_memory(spec);
                Err(e)
            }
        }
    }

    async fn adopt(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        let hub = self.taken_back_hub(sandbox).await?;
        if hub.wait_ready(AGENT_START_TIMEOUT).await.is_err() {
            self.sockets.close(&sandbox.session_id);
            return Err(BackendError::AgentUnavailable(format!(
                "the agent of sandbox {} did not dial back within {}s",
                sandbox.session_id,
                AGENT_START_TIMEOUT.as_secs()
            )));
        }
        Ok(())
    }

    /// Takes the sandbox's agent socket back; it is bound again in the background, from
    /// [`Backend::call_agents_back`] on, or at the first call that needs it.
    fn reattach(&self, sandbox: &Sandbox) {
        self.sockets.take_back(&sandbox.session_id);
    }

    fn call_agents_back(&self) {
        self.sockets.bind_taken_back();
    }

    async fn adopt_paused(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        self.taken_back_hub(sandbox).await.map(drop)
    }

    /// A gVisor sandbox is paused to disk when the engine's runsc restores (see
    /// [`crate::checkpoint`]); any other is frozen.
    async fn pause(&self, sandbox: &Sandbox) -> Result<Paused, BackendError> {
        if let Some(bytes) = self.checkpoints.image_bytes(&sandbox.session_id) {
            return Ok(Paused::OnDisk { bytes });
        }
        let engine = self.engine().await?;
        if engine.restores_from_disk && self.checkpoints.restorable(&engine.docker, sandbox).await?
        {
            let memory = engine.cgroups.usage(&sandbox.backend_id).await.memory_bytes;
            let bytes = self
                .checkpoints
                .write(
                    &engine.docker,
                    &sandbox.backend_id,
                    &sandbox.session_id,
                    memory,
                )
                .await?;
            return Ok(Paused::OnDisk { bytes });
        }
        pause::set_frozen(&engine.docker, &sandbox.backend_id, true).await?;
        Ok(Paused::Frozen)
    }

    async fn resume(&self, sandbox: &Sandbox) -> Result<Option<u64>, BackendError> {
        let engine = self.engine().await?;
        let on_disk = self.checkpoints.image_bytes(&sandbox.session_id);
        if on_disk.is_some() {
            // A plain start would boot it afresh, its memory lost.
            if !engine.restores_from_disk {
                return Err(BackendError::Setup(format!(
                    "sandbox {} is paused to disk, and the engine's runsc runtime is no longer sandboxd's {} wrapper that restores it; run scripts/host-setup.sh",
                    sandbox.session_id,
                    checkpoint::RESTORING_RUNSC
                )));
            }
            checkpoint::await_stopped(&engine.docker, &sandbox.backend_id).await?;
            start_created(&engine.docker, &sandbox.backend_id).await?;
            // Restored: the image must not restore it again at a later start (runsc holds
            // its files open for what it still reads).
            self.checkpoints.remove(&sandbox.session_id);
        } else {
            pause::set_frozen(&engine.docker, &sandbox.backend_id, false).await?;
        }
        // An agent frozen across a restart of the service dials the new socket only now; a
        // restored one finds its connections broken and dials when called.
        let hub = self.open_hub(sandbox).await?;
        if on_disk.is_some() {
            wake_agent(hub.path());
        }
        hub.wait_ready(AGENT_START_TIMEOUT).await.map_err(|_| {
            BackendError::AgentUnavailable(format!(
                "the agent of sandbox {} did not answer within {}s of being resumed",
                sandbox.session_id,
                AGENT_START_TIMEOUT.as_secs()
            ))
        })?;
        Ok(on_disk)
    }

    async fn copy_memory(&self, sandbox: &Sandbox, copy_id: &str) -> Result<u64, BackendError> {
        self.write_memory_copy(sandbox, copy_id).await
    }

    fn remove_memory_copy(&self, copy_id: &str) {
        self.checkpoints.remove(copy_id);
    }

    fn offers_volumes(&self) -> bool {
        true
    }

    fn mounts_into_started(&self, limits: &Limits) -> bool {
        limits.isolation == sandboxd_api::Isolation::Runc
    }

    async fn mount_volumes(
        &self,
        sandbox: &Sandbox,
        mounts: &[VolumeMount],
    ) -> Result<(), BackendError> {
        self.mount_into_running(sandbox, mounts).await
    }

    async fn create_volume(&self, id: &str, size_bytes: u64) -> Result<(), BackendError> {
        self.volumes.create(id, size_bytes).await
    }

    async fn restore_volume(&self, id: &str) -> Result<(), BackendError> {
        self.volumes.restore(id).await
    }

    async fn remove_volume(&self, id: &str) -> Result<(), BackendError> {
        self.volumes.remove(id).await
    }

    async fn list_volumes(&self) -> Result<Vec<String>, BackendError> {
        self.volumes.list()
    }

    async fn volume_used_bytes(&self, id: &str) -> Option<u64> {
        self.volumes.used_bytes(id)
    }

    fn open_volume_file(
        &self,
        id: &str,
        path: &str,
        write: bool,
    ) -> Option<std::io::Result<std::fs::File>> {
        let root = match self.volumes.mounted(id) {
            Ok(root) => root,
            Err(e) => return Some(Err(std::io::Error::other(e.to_string()))),
        };
        Some(confined::open(&root, path, write, SANDBOX_UID))
    }

    fn volume_path(
        &self,
        id: &str,
        path: &str,
        op: VolumePathOp,
    ) -> Option<std::io::Result<Vec<VolumeEntry>>> {
        let root = match self.volumes.mounted(id) {
            Ok(root) => root,
            Err(e) => return Some(Err(std::io::Error::other(e.to_string()))),
        };
        Some(confined_paths::at(&root, path, op, SANDBOX_UID))
    }

    fn writable_places(&self) -> Vec<String> {
        // The profile's tmpfs mounts and the engine's /dev/shm; the root is read-only.
        [WORKDIR, "/tmp", "/dev/shm"].map(str::to_string).to_vec()
    }

    async fn destroy(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        let result = self
            .remove_sandbox(&sandbox.backend_id, &sandbox.session_id)
            .await;
        self.sockets.close(&sandbox.session_id);
        self.checkpoints.remove(&sandbox.session_id);
        if let Some(egress) = self.egress.get() {
            egress.forget_addresses();
        }
        result
    }

    async fn agent(&self, sandbox: &Sandbox) -> Result<AgentStream, BackendError> {
        let hub = self.open_hub(sandbox).await?;
        let stream = hub.acquire(AGENT_ACQUIRE_TIMEOUT).await.map_err(|e| {
            BackendError::AgentUnavailable(format!(
                "{e}; the sandbox may have killed its agent or be overloaded"
            ))
        })?;
        Ok(Box::new(stream))
    }

    async fn usage(&self, sandbox: &Sandbox) -> Result<Usage, BackendError> {
        Ok(self
            .engine()
            .await?
            .cgroups
            .usage(&sandbox.backend_id)
            .await)
    }

    async fn ran_out_of_memory(&self, sandbox: &Sandbox) -> bool {
        let Ok(docker) = self.docker().await else {
            return false;
        };
        let inspect = docker.inspect_container(&sandbox.backend_id, None).await;
        inspect.is_ok_and(|i| i.state.and_then(|s| s.oom_killed) == Some(true))
    }

    async fn list(&self) -> Result<Vec<ExistingSandbox>, BackendError> {
        // Once the engine answered, as every other call: its errors say what is wrong.
        self.engine().await?;
        let mut sandboxes =
            listing::sandboxes(&self.options.socket, &self.options.instance_id).await?;
        self.checkpoints.mark_paused(&mut sandboxes);
        Ok(sandboxes)
    }

    fn watch_stops(&self) -> Option<tokio::sync::mpsc::Receiver<()>> {
        let label = format!("{LABEL_INSTANCE}={}", self.options.instance_id);
        Some(stops::watch(self.link.clone(), label))
    }

    async fn has_image(&self, image: &str) -> Result<bool, BackendError> {
        build::has_image(self.docker().await?, image).await
    }

    async fn ensure_image(
        &self,
        request: &ImageRequest,
        progress: &(dyn Fn(ImageProgress) + Send + Sync),
    ) -> Result<String, BackendError> {
        build::ensure_image(self.docker().await?, request, progress).await
    }
}

/// The engine's CPU limit, in billionths of a CPU. The config checks `cpus` is a number above
/// 0; the cast of a rounded float keeps whole numbers and saturates.
#[allow(clippy::cast_possible_truncation)]
fn nano_cpus(cpus: f64) -> i64 {
    (cpus * 1e9).round() as i64
}
