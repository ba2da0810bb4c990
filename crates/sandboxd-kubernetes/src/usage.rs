//! What the platform says about a pod: its state, from the pod's status, and its resource use,
//! from the kubelet's summary API (through the API server's node proxy), which also gives the
//! bytes each mounted claim holds. Only where the kubelet counts no processes (cgroup v1 nodes)
//! are they counted by the agent, PID 1 of the sandbox's container, in the sandbox's own
//! `/proc` ([`processes_seen_by_agent`]).

use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client};
use sandboxd_agent_proto::host::list_dir;
use sandboxd_agent_proto::{DirEntry, EntryKind};
use sandboxd_backend::{AgentStream, BackendError};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One summary answers for every pod of its node for this long: the kubelet refreshes its
/// figures every 10-15 s, and a summary takes it 40-80 ms to answer, which an open or a
/// listing would otherwise wait for every second.
const SUMMARY_MAX_AGE: Duration = Duration::from_secs(5);
/// A process count from a pod's agent answers for this long.
const PROCESSES_MAX_AGE: Duration = Duration::from_secs(1);
/// How long a volume's figure waits for a node's summary: a listing of volumes is not held up
/// by a kubelet that does not answer (the last figure is given then).
const VOLUME_FIGURES_TIMEOUT: Duration = Duration::from_secs(5);
/// The summary of a node with hundreds of pods is a few hundred KiB.
const MAX_SUMMARY_LEN: usize = 16 << 20;

/// Where a pod is in its life, as far as a sandbox is concerned.
#[derive(Debug, PartialEq, Eq)]
pub enum PodState {
    Pending,
    Running,
    /// It will not run: why.
    Failed(String),
    /// A container waits for an image the node cannot get: the image and why.
    ImageMissing(String, String),
    /// No node can take it now: the scheduler's reason.
    Unschedulable(String),
}

const IMAGE_REASONS: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
];

pub fn pod_state(pod: &Pod) -> PodState {
    if pod.metadata.deletion_timestamp.is_some() {
        return PodState::Failed("it is being deleted".into());
    }
    let Some(status) = &pod.status else {
        return PodState::Pending;
    };
    // Init containers (the agent's installer, the volumes' owner) end, with 0 when done.
    let containers = status
        .init_container_statuses
        .iter()
        .flatten()
        .map(|c| (c, true))
        .chain(
            status
                .container_statuses
                .iter()
                .flatten()
                .map(|c| (c, false)),
        );
    for (container, init) in containers {
        let Some(state) = &container.state else {
            continue;
        };
        if let Some(waiting) = &state.waiting {
            let reason = waiting.reason.clone().unwrap_or_default();
            if IMAGE_REASONS.contains(&reason.as_str()) {
                let message = waiting.message.clone().unwrap_or(reason);
                return PodState::ImageMissing(container.image.clone(), message);
            }
        }
        if let Some(terminated) = &state.terminated {
            let init_done = terminated.exit_code == 0 && init;
            if !init_done {
                return PodState::Failed(format!(
                    "container {} ended with code {} ({})",
                    container.name,
                    terminated.exit_code,
                    terminated.reason.clone().unwrap_or_default()
                ));
            }
        }
    }
    let unschedulable = status.conditions.iter().flatten().find(|c| {
        c.type_ == "PodScheduled"
            && c.status == "False"
            && c.reason.as_deref() == Some("Unschedulable")
    });
    if let Some(condition) = unschedulable {
        return PodState::Unschedulable(condition.message.clone().unwrap_or_default());
    }
    match status.phase.as_deref() {
        Some("Running") => {
            let sandbox_running = status.container_statuses.iter().flatten().any(|c| {
                c.name == "sandbox" && c.state.as_ref().is_some_and(|s| s.running.is_some())
            });
            if sandbox_running {
                PodState::Running
            } else {
                PodState::Pending
            }
        }
        Some(phase @ ("Failed" | "Succeeded")) => PodState::Failed(format!(
            "the pod's phase is {phase}{}",
            status
                .message
                .as_ref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        )),
        _ => PodState::Pending,
    }
}

#[derive(Deserialize)]
struct Summary {
    #[serde(default)]
    pods: Vec<PodSummary>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSummary {
    pod_ref: PodRef,
    #[serde(default)]
    memory: Option<MemoryStats>,
    #[serde(default, rename = "process_stats")]
    process_stats: Option<ProcessStats>,
    #[serde(default)]
    volume: Vec<VolumeStats>,
}

/// A pod's or a claim's reference: its namespace and name.
#[derive(Deserialize)]
struct PodRef {
    name: String,
    namespace: String,
}

/// A volume of a pod, as the kubelet measured its filesystem (only volumes of kinds it
/// measures are listed: `local` and most block-backed ones, not host-path).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VolumeStats {
    #[serde(default)]
    pvc_ref: Option<PodRef>,
    #[serde(default)]
    used_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MemoryStats {
    #[serde(default)]
    working_set_bytes: Option<u64>,
}

#[derive(Deserialize)]
struct ProcessStats {
    #[serde(default)]
    process_count: Option<u64>,
}

/// A pod's use as its kubelet reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PodFigures {
    pub memory_bytes: u64,
    /// `None` where the kubelet counts no processes: its process stats need cgroup v2.
    pub processes: Option<u64>,
}

/// A namespace and a name.
type Key = (String, String);

/// What a node's summary says: the use of each pod, and the bytes held by each claim a pod of
/// the node mounts.
#[derive(Default)]
struct NodeFigures {
    pods: HashMap<Key, PodFigures>,
    claims: HashMap<Key, u64>,
}

/// The latest summary of each node, the node each pod runs on, the latest process count the
/// agent of each pod gave (on cgroup v1 nodes), and the bytes each claim held when a summary
/// last listed it.
#[derive(Default)]
pub struct SummaryCache {
    nodes: Mutex<HashMap<String, (Instant, NodeFigures)>>,
    pod_nodes: Mutex<HashMap<String, String>>,
    processes: Mutex<HashMap<String, (Instant, u64)>>,
    claims: Mutex<HashMap<Key, u64>>,
}

impl SummaryCache {
    /// The pod's process count from its agent, asked at most once per [`PROCESSES_MAX_AGE`]
    /// (a listing of many sessions asks for all of theirs at once).
    pub async fn processes(
        &self,
        pod: &str,
        agent: impl std::future::Future<Output = Result<AgentStream, BackendError>>,
    ) -> Result<u64, BackendError> {
        let cached = self
            .processes
            .lock()
            .expect("process count lock")
            .get(pod)
            .copied();
        if let Some((at, count)) = cached {
            if at.elapsed() < PROCESSES_MAX_AGE {
                return Ok(count);
            }
        }
        let count = processes_seen_by_agent(agent.await?).await?;
        self.processes
            .lock()
            .expect("process count lock")
            .insert(pod.to_string(), (Instant::now(), count));
        Ok(count)
    }

    /// Notes the node a pod was seen on, so its first usage needs no lookup.
    pub fn remember_node(&self, pod: &str, node: &str) {
        self.pod_nodes
            .lock()
            .expect("pod node lock")
            .insert(pod.to_string(), node.to_string());
    }

    /// Forgets what is known of a pod that is gone.
    pub fn forget(&self, pod: &str) {
        self.pod_nodes.lock().expect("pod node lock").remove(pod);
        self.processes
            .lock()
            .expect("process count lock")
            .remove(pod);
    }

    pub async fn usage(
        &self,
        client: &Client,
        pods: &Api<Pod>,
        namespace: &str,
        pod: &str,
    ) -> Result<PodFigures, BackendError> {
        let node = self.node_of(pods, pod).await?;
        let key = (namespace.to_string(), pod.to_string());
        if let Some(usage) = self.cached(&node, &key) {
            return Ok(usage);
        }
        let figures = fetch(client, &node).await?;
        let usage = figures.pods.get(&key).copied().unwrap_or_default();
        self.keep(node, figures);
        Ok(usage)
    }

    /// The bytes a claim's volume holds, as the kubelet of a node where a pod mounts it last
    /// measured them: the summaries of the nodes this service's pods run on are read (each at
    /// most once per [`SUMMARY_MAX_AGE`]). The last figure seen stays while no pod mounts the
    /// claim (nothing can write to it then); `None` before any summary listed it, and where the
    /// class's volumes are not measured by the kubelet (host-path).
    pub async fn claim_used_bytes(
        &self,
        client: &Client,
        namespace: &str,
        claim: &str,
    ) -> Option<u64> {
        let nodes: HashSet<String> = self
            .pod_nodes
            .lock()
            .expect("pod node lock")
            .values()
            .cloned()
            .collect();
        for node in nodes {
            if self.is_fresh(&node) {
                continue;
            }
            match tokio::time::timeout(VOLUME_FIGURES_TIMEOUT, fetch(client, &node)).await {
                Ok(Ok(figures)) => self.keep(node, figures),
                Ok(Err(e)) => tracing::debug!(node, "no volume figures: {e}"),
                Err(_) => tracing::debug!(node, "no volume figures: the summary took over 5 s"),
            }
        }
        let key = (namespace.to_string(), claim.to_string());
        self.claims
            .lock()
            .expect("claim figures lock")
            .get(&key)
            .copied()
    }

    fn cached(&self, node: &str, key: &Key) -> Option<PodFigures> {
        let nodes = self.nodes.lock().expect("summary cache lock");
        let (at, figures) = nodes.get(node)?;
        (at.elapsed() < SUMMARY_MAX_AGE).then(|| figures.pods.get(key).copied().unwrap_or_default())
    }

    fn is_fresh(&self, node: &str) -> bool {
        let nodes = self.nodes.lock().expect("summary cache lock");
        nodes
            .get(node)
            .is_some_and(|(at, _)| at.elapsed() < SUMMARY_MAX_AGE)
    }

    /// Keeps a node's new summary; the claims' figures it gives go to the figures of all nodes.
    fn keep(&self, node: String, mut figures: NodeFigures) {
        self.claims
            .lock()
            .expect("claim figures lock")
            .extend(std::mem::take(&mut figures.claims));
        self.nodes
            .lock()
            .expect("summary cache lock")
            .insert(node, (Instant::now(), figures));
    }

    async fn node_of(&self, pods: &Api<Pod>, pod: &str) -> Result<String, BackendError> {
        if let Some(node) = self.pod_nodes.lock().expect("pod node lock").get(pod) {
            return Ok(node.clone());
        }
        let found = pods
            .get_opt(pod)
            .await
            .map_err(|e| BackendError::EngineUnavailable(format!("the Kubernetes API: {e}")))?
            .ok_or_else(|| BackendError::SandboxGone(format!("pod {pod} is gone")))?;
        let node = found
            .spec
            .and_then(|spec| spec.node_name)
            .ok_or_else(|| BackendError::Engine(format!("pod {pod} is not on a node yet")))?;
        self.remember_node(pod, &node);
        Ok(node)
    }
}

async fn fetch(client: &Client, node: &str) -> Result<NodeFigures, BackendError> {
    let request = http::Request::get(format!("/api/v1/nodes/{node}/proxy/stats/summary"))
        .body(Vec::new())
        .map_err(|e| BackendError::Engine(e.to_string()))?;
    let text = client.request_text(request).await.map_err(|e| {
        BackendError::Engine(format!(
            "cannot read node {node}'s summary from the kubelet (the service needs `get` on nodes/proxy): {e}"
        ))
    })?;
    if text.len() > MAX_SUMMARY_LEN {
        return Err(BackendError::Engine(format!(
            "node {node}'s summary is larger than {MAX_SUMMARY_LEN} bytes"
        )));
    }
    let summary: Summary = serde_json::from_str(&text)
        .map_err(|e| BackendError::Engine(format!("node {node}'s summary: {e}")))?;
    Ok(figures(summary))
}

fn figures(summary: Summary) -> NodeFigures {
    let mut figures = NodeFigures::default();
    for pod in summary.pods {
        for volume in pod.volume {
            if let (Some(claim), Some(used)) = (volume.pvc_ref, volume.used_bytes) {
                // Pods mounting one claim see one filesystem: the same figure, or a newer one.
                let held = figures
                    .claims
                    .entry((claim.namespace, claim.name))
                    .or_default();
                *held = (*held).max(used);
            }
        }
        let usage = PodFigures {
            memory_bytes: pod.memory.and_then(|m| m.working_set_bytes).unwrap_or(0),
            processes: pod.process_stats.and_then(|s| s.process_count),
        };
        figures
            .pods
            .insert((pod.pod_ref.namespace, pod.pod_ref.name), usage);
    }
    figures
}

/// The most `/proc` entries read: its own few dozen, and a process each, well above any
/// sandbox's pids limit.
const MAX_PROC_ENTRIES: u32 = 16_384;
const PROC_LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// How many processes the sandbox's `/proc` shows: its numbered directories, listed by the
/// agent. The kernel makes the entries, but the agent's answer is the sandbox's word, so the
/// figure only informs (the pids limit is the kubelet's, enforced by the kernel) and a
/// listing that is not one is counted as none.
async fn processes_seen_by_agent(mut agent: AgentStream) -> Result<u64, BackendError> {
    let listing = list_dir(&mut agent, "/proc", MAX_PROC_ENTRIES, PROC_LIST_TIMEOUT)
        .await
        .map_err(|e| BackendError::AgentUnavailable(format!("listing /proc: {e}")))?;
    agent.reuse();
    Ok(count_processes(&listing.entries))
}

fn count_processes(entries: &[DirEntry]) -> u64 {
    entries
        .iter()
        .filter(|e| e.kind == EntryKind::Dir && e.name.parse::<u32>().is_ok())
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(status: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn states_from_the_pods_status() {
        assert_eq!(
            pod_state(&pod(serde_json::json!({"phase": "Pending"}))),
            PodState::Pending
        );
        let running = pod(serde_json::json!({
            "phase": "Running",
            "initContainerStatuses": [
                {"name": "agent", "image": "a", "imageID": "", "ready": true,
                 "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
                {"name": "volumes", "image": "a", "imageID": "", "ready": true,
                 "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}],
            "containerStatuses": [{"name": "sandbox", "image": "i", "imageID": "", "ready": true,
                "restartCount": 0, "state": {"running": {}}}],
        }));
        assert_eq!(pod_state(&running), PodState::Running);
        let volumes_refused = pod(serde_json::json!({
            "phase": "Pending",
            "initContainerStatuses": [{"name": "volumes", "image": "a", "imageID": "", "ready": false,
                 "restartCount": 0, "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}],
        }));
        assert!(
            matches!(pod_state(&volumes_refused), PodState::Failed(why) if why.contains("volumes ended with code 1"))
        );
        let no_image = pod(serde_json::json!({
            "phase": "Pending",
            "containerStatuses": [{"name": "sandbox", "image": "nope:1", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"waiting": {"reason": "ErrImageNeverPull", "message": "never"}}}],
        }));
        assert_eq!(
            pod_state(&no_image),
            PodState::ImageMissing("nope:1".into(), "never".into())
        );
        let died = pod(serde_json::json!({
            "phase": "Running",
            "containerStatuses": [{"name": "sandbox", "image": "i", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}],
        }));
        assert!(matches!(pod_state(&died), PodState::Failed(why) if why.contains("137")));
        let no_room = pod(serde_json::json!({
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": "0/1 nodes are available: 1 Insufficient cpu."}],
        }));
        assert_eq!(
            pod_state(&no_room),
            PodState::Unschedulable("0/1 nodes are available: 1 Insufficient cpu.".into())
        );
    }

    #[test]
    fn the_summary_gives_memory_and_processes_per_pod() {
        let summary: Summary = serde_json::from_value(serde_json::json!({
            "node": {"nodeName": "n"},
            "pods": [{"podRef": {"name": "p", "namespace": "ns", "uid": "u"},
                      "memory": {"workingSetBytes": 1234},
                      "process_stats": {"process_count": 3}}],
        }))
        .unwrap();
        let p = &summary.pods[0];
        assert_eq!(p.memory.as_ref().unwrap().working_set_bytes, Some(1234));
        assert_eq!(p.process_stats.as_ref().unwrap().process_count, Some(3));
    }

    #[test]
    fn the_summary_gives_the_bytes_each_mounted_claim_holds() {
        let summary: Summary = serde_json::from_value(serde_json::json!({
            "pods": [
                {"podRef": {"name": "a", "namespace": "ns"},
                 "volume": [
                    {"name": "v0", "usedBytes": 4096, "capacityBytes": 1,
                     "pvcRef": {"name": "sandboxd-volume-x", "namespace": "ns"}},
                    {"name": "agent", "usedBytes": 77}]},
                {"podRef": {"name": "b", "namespace": "ns"},
                 "volume": [{"name": "v0", "usedBytes": 8192,
                             "pvcRef": {"name": "sandboxd-volume-x", "namespace": "ns"}}]},
            ],
        }))
        .unwrap();
        let figures = figures(summary);
        let claim = ("ns".to_string(), "sandboxd-volume-x".to_string());
        assert_eq!(figures.claims.get(&claim), Some(&8192));
        assert_eq!(figures.claims.len(), 1, "a volume of no claim is not one");
        assert_eq!(figures.pods.len(), 2);
    }

    #[test]
    fn processes_are_the_numbered_directories_of_proc() {
        let entry = |name: &str, kind| DirEntry {
            name: name.into(),
            kind,
            size: 0,
            mode: 0o555,
            modified_secs: 0,
            modified_nanos: 0,
            target_kind: None,
        };
        let entries = [
            entry("1", EntryKind::Dir),
            entry("self", EntryKind::Symlink),
            entry("sys", EntryKind::Dir),
            entry("42", EntryKind::Dir),
            entry("7", EntryKind::File),
        ];
        assert_eq!(count_processes(&entries), 2);
    }
}
