//! The Kubernetes implementation of the sandbox backend: a pod per sandbox in a namespace the
//! operator names, with the hardened profile of the Docker backend expressed as a pod spec
//! ([`pod`]).
//!
//! The agent is delivered by an init container (an image holding only the static agent, which
//! copies itself into a memory-backed volume the sandbox's container mounts read-only) and is
//! the container's entrypoint, listening on a loopback port of the pod. The service reaches it
//! through the API server's port-forward ([`connections`]), so a sandbox needs no network and
//! the agent needs no route to the service; each connection is claimed with the sandbox's
//! secret, derived from the service's key as on Docker, so a restarted service takes its pods
//! back. Resource use is read from the kubelet's summary API ([`usage`]); on nodes where it
//! counts no processes (cgroup v1), the agent counts those its `/proc` shows. Volumes are
//! PersistentVolumeClaims ([`volumes`]) mounted into the pods of the sessions that ask.

mod api_errors;
mod backend;
mod connections;
mod labels;
mod options;
mod pod;
mod runtime_classes;
mod stops;
mod usage;
mod volumes;

pub use backend::{KubernetesBackend, RECIPE_REMEDY};
pub use labels::{
    LABEL_INSTANCE, LABEL_MANAGED, LABEL_NETWORK, LABEL_RUNTIME, LABEL_SESSION, LABEL_VOLUME,
};
pub use options::{KubernetesOptions, AGENT_PORT, SANDBOX_UID};
pub use pod::pod_name;
pub use sandboxd_backend::{HOME_DIR, WORKDIR};
pub use volumes::claim_name;
