//! What the operator configures for the Kubernetes backend, and the fixed points of a pod
//! every module agrees on.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The uid every sandbox process runs as, as on Docker.
pub const SANDBOX_UID: u32 = 61000;
/// The agent's port on the pod's loopback.
pub const AGENT_PORT: u16 = 7719;

pub struct KubernetesOptions {
    /// A kubeconfig file; the in-cluster service account (or `KUBECONFIG`) when absent.
    pub kubeconfig: Option<PathBuf>,
    /// Where the sandboxes' pods go; created if missing (when the credentials allow).
    pub namespace: String,
    pub node_selector: BTreeMap<String, String>,
    /// Runtime alias to the `runtimeClassName` its pods get (gVisor, Kata, ...).
    pub runtime_classes: BTreeMap<String, String>,
    /// Identifies this service's pods among all pods of the namespace.
    pub instance_id: String,
    /// An image the cluster can pull that holds the static agent at `/sandboxd-agent`.
    pub agent_image: String,
    /// A directory private to the service, holding the key the agents' secrets derive from.
    pub key_dir: PathBuf,
    /// The StorageClass of the volumes' claims; the cluster's default one when absent.
    pub volume_storage_class: Option<String>,
    /// The access mode of the volumes' claims (`ReadWriteOnce`...).
    pub volume_access_mode: String,
    /// Whether `bridge` sandboxes' agents listen on the pod network and are dialed there;
    /// `None`: where the service runs in the cluster.
    pub agents_on_pod_network: Option<bool>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Options of a service for the pod's and the claims' tests.
    pub(crate) fn options() -> KubernetesOptions {
        KubernetesOptions {
            kubeconfig: None,
            namespace: "sandboxes".into(),
            node_selector: BTreeMap::from([("pool".into(), "sandboxes".into())]),
            runtime_classes: BTreeMap::from([("gvisor".into(), "runsc".into())]),
            instance_id: "i1".into(),
            agent_image: "sandboxd/agent:local".into(),
            key_dir: "/nonexistent".into(),
            volume_storage_class: None,
            volume_access_mode: "ReadWriteOnce".into(),
            agents_on_pod_network: None,
        }
    }
}
