//! The backend itself: the namespace prepared, a pod per sandbox started and watched until its
//! agent answers, connections claimed through the port-forward, and pods found again.

use crate::api_errors::{api_error, is_status};
use crate::connections::Connections;
use crate::labels::{LABEL_INSTANCE, LABEL_MANAGED, LABEL_NETWORK, LABEL_RUNTIME, LABEL_SESSION};
use crate::options::{KubernetesOptions, AGENT_PORT};
use crate::volumes::Claims;
use crate::{pod, runtime_classes, stops, usage};
use async_trait::async_trait;
use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Namespace, Pod, ServiceAccount};
use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicySpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};
use kube::{Api, Client};
use sandboxd_agent_proto::host::AgentKey;
use sandboxd_api::NetworkMode;
use sandboxd_backend::WORKDIR;
use sandboxd_backend::{
    AgentStream, Backend, BackendError, ExistingSandbox, ImageProgress, ImageRequest, Paused,
    Sandbox, SandboxSpec, Usage,
};
use std::collections::BTreeMap;
use std::os::unix::fs::DirBuilderExt;
use std::time::{Duration, Instant};

const DENY_ALL_POLICY: &str = "sandboxd-network-none";

/// What an operator does for a recipe runtime on a cluster: its nodes pull images, so the
/// recipe's image is built elsewhere and the runtime names it.
pub const RECIPE_REMEDY: &str = "build the recipe's image with a Docker-backed sandboxd (its runtime build), push it to a registry the nodes pull from, and name it in the runtime's `image` instead of the recipe";

/// How long a new pod may take until its agent answers (scheduling, the init container, the
/// sandbox's container starting).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a running pod's agent is tried until it answers.
const START_POLL: Duration = Duration::from_millis(100);
/// The watch of a starting pod outlasts [`START_TIMEOUT`]: the deadline ends the wait first.
const WATCH_BEYOND_START: Duration = Duration::from_secs(70);

pub struct KubernetesBackend {
    client: Client,
    pods: Api<Pod>,
    options: KubernetesOptions,
    key: AgentKey,
    connections: Connections,
    usage: usage::SummaryCache,
    claims: Claims,
    watch_refused: stops::WatchRefused,
    /// The service reaches pods on the pod network (it runs in the cluster, or the operator
    /// says so), so `bridge` sandboxes' agents listen there and are dialed there.
    on_pod_network: bool,
}

/// How long a namespace the service made may take to get its `default` service account (the
/// cluster's controller manager makes it; the API server refuses pods in a namespace without).
const SERVICE_ACCOUNT_TIMEOUT: Duration = Duration::from_secs(10);

impl KubernetesBackend {
    /// The labels of this instance's pods.
    fn instance_selector(&self) -> String {
        format!(
            "{LABEL_MANAGED}=true,{LABEL_INSTANCE}={}",
            self.options.instance_id
        )
    }

    /// Connects to the cluster and prepares the namespace: it exists, and sandboxes of
    /// `network_mode = "none"` runtimes are denied all traffic by a network policy; the
    /// RuntimeClasses the runtimes name exist.
    pub async fn connect(options: KubernetesOptions) -> Result<KubernetesBackend, BackendError> {
        let setup = |e: &dyn std::fmt::Display| {
            BackendError::Setup(format!("cannot configure the Kubernetes client: {e}"))
        };
        let config = match &options.kubeconfig {
            Some(path) => {
                let kubeconfig = kube::config::Kubeconfig::read_from(path).map_err(|e| {
                    BackendError::Setup(format!(
                        "cannot read the kubeconfig {}: {e}",
                        path.display()
                    ))
                })?;
                kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                    .await
                    .map_err(|e| setup(&e))?
            }
            None => kube::Config::infer().await.map_err(|e| setup(&e))?,
        };
        // In the cluster: its own pod's service account, no kubeconfig.
        let on_pod_network = options.agents_on_pod_network.unwrap_or_else(|| {
            options.kubeconfig.is_none()
                && std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
                && std::env::var_os("KUBECONFIG").is_none()
        });
        let client = Client::try_from(config)
            .map_err(|e| BackendError::Setup(format!("cannot make the Kubernetes client: {e}")))?;
        let key_dir = &options.key_dir;
        let key = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(key_dir)
            .and_then(|()| AgentKey::load_or_create(key_dir))
            .map_err(|e| {
                BackendError::Setup(format!("cannot prepare {}: {e}", options.key_dir.display()))
            })?;
        let backend = KubernetesBackend {
            pods: Api::namespaced(client.clone(), &options.namespace),
            claims: Claims::new(&client, &options.namespace),
            client,
            options,
            key,
            connections: Connections::default(),
            usage: usage::SummaryCache::default(),
            watch_refused: stops::WatchRefused::default(),
            on_pod_network,
        };
        backend.prepare_namespace().await?;
        runtime_classes::check(&backend.client, &backend.options.runtime_classes).await?;
        backend
            .claims
            .check_class(backend.options.volume_storage_class.as_deref())
            .await?;
        Ok(backend)
    }

    async fn prepare_namespace(&self) -> Result<(), BackendError> {
        let namespace = &self.options.namespace;
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let exists = match namespaces.get_opt(namespace).await {
            Ok(found) => found.is_some(),
            // Credentials limited to the namespace (a Role) cannot read it: it is there.
            Err(e) if is_status(&e, 403) => true,
            Err(e) => return Err(api_error(e)),
        };
        if !exists {
            let new = Namespace {
                metadata: ObjectMeta {
                    name: Some(namespace.clone()),
                    ..Default::default()
                },
                ..Default::default()
            };
            match namespaces.create(&PostParams::default(), &new).await {
                Ok(_) => tracing::info!(namespace, "created the sandboxes' namespace"),
                // Another service made it a moment ago: it may lack its account still.
                Err(e) if is_status(&e, 409) => {}
                Err(e) => {
                    return Err(BackendError::Setup(format!(
                        "the namespace {namespace} does not exist and cannot be created ({}); create it, or name one that exists in [backend] namespace",
                        api_error(e)
                    )))
                }
            }
            self.wait_for_service_account().await?;
        }
        let policies: Api<NetworkPolicy> = Api::namespaced(self.client.clone(), namespace);
        let deny_all = NetworkPolicy {
            metadata: ObjectMeta {
                name: Some(DENY_ALL_POLICY.to_string()),
                ..Default::default()
            },
            spec: Some(NetworkPolicySpec {
                pod_selector: Some(LabelSelector {
                    match_labels: Some(BTreeMap::from([(
                        LABEL_NETWORK.to_string(),
                        "none".to_string(),
                    )])),
                    ..Default::default()
                }),
                policy_types: Some(vec!["Ingress".to_string(), "Egress".to_string()]),
                ingress: None,
                egress: None,
            }),
        };
        match policies.create(&PostParams::default(), &deny_all).await {
            Ok(_) => Ok(()),
            Err(e) if is_status(&e, 409) => Ok(()),
            Err(e) if is_status(&e, 403) => {
                tracing::warn!(
                    namespace,
                    "cannot create the network policy {DENY_ALL_POLICY} (forbidden): on a cluster whose pods get a network, sandboxes of network_mode none runtimes are not held by it; grant networkpolicies create in the namespace"
                );
                Ok(())
            }
            Err(e) => Err(api_error(e)),
        }
    }

    /// Waits until the new namespace has its `default` service account, so that the first
    /// session's pod is not refused for want of it; a cluster without a controller manager
    /// never makes one, which the error says.
    async fn wait_for_service_account(&self) -> Result<(), BackendError> {
        let namespace = &self.options.namespace;
        let accounts: Api<ServiceAccount> = Api::namespaced(self.client.clone(), namespace);
        let deadline = Instant::now() + SERVICE_ACCOUNT_TIMEOUT;
        loop {
            match accounts.get_opt("default").await {
                Ok(Some(_)) => return Ok(()),
                Ok(None) => {}
                // Credentials that may not read service accounts cannot tell: go on.
                Err(e) if is_status(&e, 403) => return Ok(()),
                Err(e) => return Err(api_error(e)),
            }
            if Instant::now() >= deadline {
                return Err(BackendError::Setup(format!(
                    "the new namespace {namespace} has no `default` service account after {}s, and the API server refuses pods without it: the cluster's controller manager (its serviceaccount controller) makes it; is it running?",
                    SERVICE_ACCOUNT_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(START_POLL).await;
        }
    }

    fn secret(&self, session_id: &str) -> sandboxd_agent_proto::AgentSecret {
        self.key.secret_for(session_id)
    }

    /// Waits until the pod runs and its agent takes a claimed connection. The pod is followed
    /// through a watch (the API server sends each change of it) rather than read again and
    /// again; once it runs, the agent is tried every [`START_POLL`] until it answers.
    async fn wait_ready(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        let name = &sandbox.backend_id;
        let deadline = Instant::now() + START_TIMEOUT;
        let not_ready = || {
            BackendError::AgentUnavailable(format!(
                "pod {name}'s agent did not answer within {}s",
                START_TIMEOUT.as_secs()
            ))
        };
        let params = WatchParams::default()
            .fields(&format!("metadata.name={name}"))
            .timeout(WATCH_BEYOND_START.as_secs().try_into().unwrap_or(u32::MAX));
        // From "0": the pod as it is now comes first.
        let mut changes = match self.pods.watch(&params, "0").await {
            Ok(changes) => changes.boxed(),
            Err(e) if is_status(&e, 403) => {
                self.watch_refused.note(&e);
                stops::polled(self.pods.clone(), name.clone(), START_POLL).boxed()
            }
            Err(e) => return Err(api_error(e)),
        };
        let mut running = false;
        loop {
            if running {
                if let Ok(connection) = self.agent(sandbox).await {
                    connection.reuse();
                    return Ok(());
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(not_ready());
            }
            let wait = if running { left.min(START_POLL) } else { left };
            let change = match tokio::time::timeout(wait, changes.try_next()).await {
                // Nothing new: the agent is tried again, or the deadline has come.
                Err(_) => continue,
                Ok(change) => change.map_err(api_error)?,
            };
            let pod = match change {
                Some(WatchEvent::Added(pod) | WatchEvent::Modified(pod)) => pod,
                Some(WatchEvent::Bookmark(_)) => continue,
                Some(WatchEvent::Deleted(_)) => {
                    return Err(BackendError::SandboxGone(format!("pod {name} is gone")))
                }
                Some(WatchEvent::Error(status)) => {
                    return Err(BackendError::Engine(format!(
                        "the watch of pod {name} ended: {} (status {})",
                        status.message, status.code
                    )))
                }
                None => return Err(not_ready()),
            };
            running = false;
            match usage::pod_state(&pod) {
                usage::PodState::Running => {
                    if let Some(node) = pod.spec.as_ref().and_then(|spec| spec.node_name.as_ref()) {
                        self.usage.remember_node(name, node);
                    }
                    // Annotated when its agent listens on the pod network: dialed there.
                    self.connections
                        .register(name, pod::pod_network_address(&pod));
                    running = true;
                }
                usage::PodState::Failed(why) => {
                    return Err(BackendError::AgentUnavailable(format!(
                        "pod {name} did not start: {why}"
                    )))
                }
                usage::PodState::ImageMissing(image, why) => {
                    return Err(BackendError::ImageMissing {
                        image,
                        hint: format!(
                            "the cluster cannot pull it ({why}); push it to a registry the nodes pull from, or load it into their container runtime"
                        ),
                    })
                }
                usage::PodState::Unschedulable(why) => {
                    return Err(BackendError::Engine(format!(
                        "the cluster has no room for pod {name}: {why}"
                    )))
                }
                usage::PodState::Pending => {}
            }
        }
    }
}

#[async_trait]
impl Backend for KubernetesBackend {
    async fn create(&self, spec: &SandboxSpec) -> Result<Sandbox, BackendError> {
        let agent_listen = pod::AgentListen {
            claim_digest: self.secret(&spec.session_id).digest(),
            // A pod without a network has its interfaces taken down: only the loopback.
            on_pod_network: self.on_pod_network && spec.limits.network_mode == NetworkMode::Bridge,
        };
        let manifest = pod::pod(&self.options, spec, &agent_listen);
        let name = pod::pod_name(&spec.session_id);
        self.pods
            .create(&PostParams::default(), &manifest)
            .await
            .map_err(api_error)?;
        let sandbox = Sandbox {
            session_id: spec.session_id.clone(),
            backend_id: name,
        };
        self.connections.register(&sandbox.backend_id, None);
        if let Err(e) = self.wait_ready(&sandbox).await {
            let _ = self.destroy(&sandbox).await;
            return Err(e);
        }
        Ok(sandbox)
    }

    async fn adopt(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        let connection = self.agent(sandbox).await?;
        connection.reuse();
        Ok(())
    }

    /// A pod is never paused (see [`Backend::pause`] here), so this is [`Backend::adopt`].
    async fn adopt_paused(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        self.adopt(sandbox).await
    }

    /// Kubernetes has no way to freeze a pod's processes.
    async fn pause(&self, _sandbox: &Sandbox) -> Result<Paused, BackendError> {
        Err(BackendError::Unsupported(
            "the Kubernetes backend cannot pause a sandbox (Kubernetes has no freezer for a pod); snapshot it and close it instead".into(),
        ))
    }

    /// Nothing is paused (see [`Backend::pause`] here): resuming is no error.
    async fn resume(&self, _sandbox: &Sandbox) -> Result<Option<u64>, BackendError> {
        Ok(None)
    }

    /// The memory-backed volumes, and the container runtime's `/dev/shm`.
    fn writable_places(&self) -> Vec<String> {
        vec![
            WORKDIR.to_string(),
            "/tmp".to_string(),
            "/dev/shm".to_string(),
        ]
    }

    async fn destroy(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        self.connections.forget(&sandbox.backend_id);
        self.usage.forget(&sandbox.backend_id);
        match self
            .pods
            .delete(
                &sandbox.backend_id,
                &DeleteParams::default().grace_period(0),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_status(&e, 404) => Ok(()),
            Err(e) => Err(api_error(e)),
        }
    }

    async fn agent(&self, sandbox: &Sandbox) -> Result<AgentStream, BackendError> {
        let pod = &sandbox.backend_id;
        // A pod this service did not start (it started before the service did): its agent's
        // address on the pod network, if it listens there, is read once.
        if !self.connections.knows(pod) {
            let direct = if self.on_pod_network {
                let found = self.pods.get_opt(pod).await.map_err(api_error)?;
                found.as_ref().and_then(pod::pod_network_address)
            } else {
                None
            };
            self.connections.register(pod, direct);
        }
        let connection = self
            .connections
            .take(
                &self.pods,
                &sandbox.backend_id,
                AGENT_PORT,
                &self.secret(&sandbox.session_id),
            )
            .await?;
        Ok(connection)
    }

    async fn usage(&self, sandbox: &Sandbox) -> Result<Usage, BackendError> {
        let figures = self
            .usage
            .usage(
                &self.client,
                &self.pods,
                &self.options.namespace,
                &sandbox.backend_id,
            )
            .await?;
        let processes = match figures.processes {
            Some(count) => count,
            // A cgroup v1 node: the memory figure stands even when the agent cannot answer.
            None => self
                .usage
                .processes(&sandbox.backend_id, self.agent(sandbox))
                .await
                .unwrap_or_else(|e| {
                    tracing::debug!(pod = %sandbox.backend_id, "no process count: {e}");
                    0
                }),
        };
        Ok(Usage {
            memory_bytes: figures.memory_bytes,
            // The pod's limit is the runtime's memory, which clients know already.
            memory_limit_bytes: None,
            processes,
        })
    }

    /// The API reports OOM kills only of containers that died of one; a command killed inside
    /// a living sandbox is seen by the agent alone, in its container's cgroup's counter (which
    /// it reads before and after each command, and reports in the command's exit).
    async fn list(&self) -> Result<Vec<ExistingSandbox>, BackendError> {
        let pods = self
            .pods
            .list(&ListParams::default().labels(&self.instance_selector()))
            .await
            .map_err(api_error)?;
        Ok(pods
            .items
            .into_iter()
            .filter_map(|pod| {
                let labels = pod.metadata.labels.clone().unwrap_or_default();
                let session_id = labels.get(LABEL_SESSION)?.clone();
                let running = matches!(usage::pod_state(&pod), usage::PodState::Running);
                Some(ExistingSandbox {
                    sandbox: Sandbox {
                        session_id,
                        backend_id: pod.metadata.name?,
                    },
                    runtime: labels.get(LABEL_RUNTIME).cloned().unwrap_or_default(),
                    running,
                    paused: false,
                    memory_on_disk: None,
                })
            })
            .collect())
    }

    fn watch_stops(&self) -> Option<tokio::sync::mpsc::Receiver<()>> {
        if self.watch_refused.get() {
            return None;
        }
        Some(stops::watch(
            self.pods.clone(),
            self.instance_selector(),
            self.watch_refused.clone(),
        ))
    }

    fn offers_volumes(&self) -> bool {
        true
    }

    async fn create_volume(&self, id: &str, size_bytes: u64) -> Result<(), BackendError> {
        self.claims.create(&self.options, id, size_bytes).await
    }

    /// A claim needs nothing after a restart: it is checked to be there.
    async fn restore_volume(&self, id: &str) -> Result<(), BackendError> {
        if self.claims.exists(id).await? {
            Ok(())
        } else {
            Err(BackendError::Engine(format!(
                "the volume's claim {} is gone from namespace {}: its data with it",
                crate::volumes::claim_name(id),
                self.options.namespace
            )))
        }
    }

    async fn remove_volume(&self, id: &str) -> Result<(), BackendError> {
        self.claims.remove(id).await
    }

    async fn list_volumes(&self) -> Result<Vec<String>, BackendError> {
        self.claims.list(&self.options.instance_id).await
    }

    async fn volume_used_bytes(&self, id: &str) -> Option<u64> {
        let claim = crate::volumes::claim_name(id);
        self.usage
            .claim_used_bytes(&self.client, &self.options.namespace, &claim)
            .await
    }

    // A volume's files without a session (`open_volume_file`, `volume_path`) are not served
    // here: the data is a claim only a pod on a node can mount, so the service could reach it
    // only through a pod of its own per request (seconds to start, and with ReadWriteOnce
    // refused while a session on another node has it). The core answers that a session must
    // mount the volume.

    /// Whether the nodes have the image is not known ahead (they pull on demand): a missing
    /// one is reported when a pod cannot start with it.
    async fn has_image(&self, _image: &str) -> Result<bool, BackendError> {
        Ok(true)
    }

    async fn ensure_image(
        &self,
        request: &ImageRequest,
        progress: &(dyn Fn(ImageProgress) + Send + Sync),
    ) -> Result<String, BackendError> {
        if let Some(build) = &request.build {
            return Err(BackendError::ImageMissing {
                image: request.image.clone(),
                hint: format!(
                    "the Kubernetes backend does not build recipes (recipe {}): {RECIPE_REMEDY}",
                    build.recipe
                ),
            });
        }
        progress(ImageProgress {
            step: None,
            line: format!("the cluster pulls {} when a pod needs it", request.image),
        });
        Ok(request.image.clone())
    }
}
