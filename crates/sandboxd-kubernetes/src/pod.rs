//! The pod a sandbox runs in: the hardened profile of the Docker backend expressed as a pod
//! spec. Nothing in it comes from a client: the runtime's limits and the operator's options.

use crate::labels::{LABEL_INSTANCE, LABEL_MANAGED, LABEL_NETWORK, LABEL_RUNTIME, LABEL_SESSION};
use crate::options::{KubernetesOptions, AGENT_PORT, SANDBOX_UID};
use crate::volumes::claim_name;
use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, EnvVar, PersistentVolumeClaimVolumeSource, Pod,
    PodSecurityContext, PodSpec, ResourceRequirements, SeccompProfile, SecurityContext, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sandboxd_api::NetworkMode;
use sandboxd_backend::{SandboxSpec, HOME_DIR, WORKDIR};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// Where the init container leaves the agent, read-only in the sandbox's container.
const AGENT_DIR: &str = "/.sandboxd";
const AGENT_IN_IMAGE: &str = "/sandboxd-agent";
/// Where the volumes' init container mounts each of the session's volumes (by its index).
const VOLUMES_DIR: &str = "/.sandboxd-volumes";
/// The agent's volume holds one static binary.
const AGENT_VOLUME_SIZE: &str = "64Mi";
/// A CPU request of this share of the limit: sandboxes are scheduled by memory, which they
/// get in full, while CPU is a ceiling (as on Docker, where `cpus` is a quota).
const CPU_REQUEST_SHARE: f64 = 0.05;

/// The annotation of a pod whose agent listens on the pod network (its value
/// [`ON_POD_NETWORK`]), so that a service taking the pod back dials it there too.
const ANNOTATION_AGENT_LISTENS: &str = "org.sandboxd.agent-listens";
const ON_POD_NETWORK: &str = "pod-network";

/// How the pod's agent is started: the digest of the sandbox's secret, the only claims it
/// accepts, and whether it listens on the pod network (for a service in the cluster, which
/// dials it there) or on the pod's loopback only (reached through the port-forward).
pub struct AgentListen {
    pub claim_digest: String,
    pub on_pod_network: bool,
}

/// Where to dial the pod's agent on the pod network, if it listens there and the pod has its
/// address yet.
pub fn pod_network_address(pod: &Pod) -> Option<SocketAddr> {
    let listens = pod
        .metadata
        .annotations
        .as_ref()?
        .get(ANNOTATION_AGENT_LISTENS)?;
    if listens != ON_POD_NETWORK {
        return None;
    }
    let ip: IpAddr = pod.status.as_ref()?.pod_ip.as_deref()?.parse().ok()?;
    Some(SocketAddr::new(ip, AGENT_PORT))
}

pub fn pod_name(session_id: &str) -> String {
    format!("sandboxd-{session_id}")
}

pub fn labels(options: &KubernetesOptions, spec: &SandboxSpec) -> BTreeMap<String, String> {
    let network = match spec.limits.network_mode {
        // The config refuses egress runtimes on Kubernetes; were one to come, no network.
        NetworkMode::None | NetworkMode::Egress => "none",
        NetworkMode::Bridge => "pod",
    };
    BTreeMap::from([
        (LABEL_MANAGED.to_string(), "true".to_string()),
        (LABEL_INSTANCE.to_string(), options.instance_id.clone()),
        (LABEL_SESSION.to_string(), spec.session_id.clone()),
        (LABEL_RUNTIME.to_string(), spec.runtime.clone()),
        (LABEL_NETWORK.to_string(), network.to_string()),
    ])
}

fn hardened() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_string()]),
            add: None,
        }),
        privileged: Some(false),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(true),
        run_as_user: Some(i64::from(SANDBOX_UID)),
        run_as_group: Some(i64::from(SANDBOX_UID)),
        ..Default::default()
    }
}

/// Requests of its own for an init container: one without them requests its limits, and a pod
/// requests the larger of its init containers' and its containers' sum.
fn init_resources() -> ResourceRequirements {
    ResourceRequirements {
        limits: Some(BTreeMap::from([
            ("memory".to_string(), Quantity("64Mi".to_string())),
            ("cpu".to_string(), Quantity("500m".to_string())),
        ])),
        requests: Some(BTreeMap::from([
            ("memory".to_string(), Quantity("16Mi".to_string())),
            ("cpu".to_string(), Quantity("10m".to_string())),
        ])),
        ..Default::default()
    }
}

/// The session's volumes: the pod's volume of each (its claim), and an init container that
/// gives each volume's root to the sandbox's uid. `fsGroup` does that on drivers that manage
/// ownership, but not all do (host-path, many NFS ones make the root root's, mode 0750): so the
/// agent does it, as root with `CAP_CHOWN` alone, on the root directory only (what is below
/// it was written by the sandboxes), never following a symlink. Each volume is mounted
/// read-write there, whatever the session asked: a volume first mounted read-only must be
/// readable too.
fn session_volumes(
    options: &KubernetesOptions,
    spec: &SandboxSpec,
) -> (Vec<Volume>, Vec<VolumeMount>, Option<Container>) {
    if spec.volumes.is_empty() {
        return (Vec::new(), Vec::new(), None);
    }
    let name = |index: usize| format!("volume-{index}");
    let volumes = spec
        .volumes
        .iter()
        .enumerate()
        .map(|(index, mounted)| Volume {
            name: name(index),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim_name(&mounted.volume_id),
                read_only: Some(false),
            }),
            ..Default::default()
        })
        .collect();
    let mounts = spec
        .volumes
        .iter()
        .enumerate()
        .map(|(index, mounted)| mount(&name(index), &mounted.path, mounted.read_only))
        .collect();
    let roots: Vec<String> = (0..spec.volumes.len())
        .map(|index| format!("{VOLUMES_DIR}/{index}"))
        .collect();
    let mut command = vec![
        AGENT_IN_IMAGE.to_string(),
        "--own".to_string(),
        SANDBOX_UID.to_string(),
    ];
    command.extend(roots.iter().cloned());
    let owner = Container {
        name: "volumes".to_string(),
        image: Some(options.agent_image.clone()),
        image_pull_policy: Some("IfNotPresent".to_string()),
        command: Some(command),
        security_context: Some(root_with(&["CHOWN"])),
        resources: Some(init_resources()),
        volume_mounts: Some(
            roots
                .iter()
                .enumerate()
                .map(|(index, root)| mount(&name(index), root, false))
                .collect(),
        ),
        ..Default::default()
    };
    (volumes, mounts, Some(owner))
}

/// An init container's profile that runs as root with these capabilities alone.
fn root_with(capabilities: &[&str]) -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_string()]),
            add: Some(capabilities.iter().map(|c| c.to_string()).collect()),
        }),
        privileged: Some(false),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(false),
        run_as_user: Some(0),
        run_as_group: Some(0),
        ..Default::default()
    }
}

fn memory_volume(name: &str, size: Quantity) -> Volume {
    Volume {
        name: name.to_string(),
        empty_dir: Some(EmptyDirVolumeSource {
            medium: Some("Memory".to_string()),
            size_limit: Some(size),
        }),
        ..Default::default()
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_string(),
        mount_path: path.to_string(),
        read_only: Some(read_only),
        ..Default::default()
    }
}

pub fn pod(options: &KubernetesOptions, spec: &SandboxSpec, agent_listen: &AgentListen) -> Pod {
    let limits = &spec.limits;
    let memory = Quantity(limits.mem_limit_bytes.to_string());
    let cpu_limit = Quantity(format!("{}m", millicpus(limits.cpus)));
    let cpu_request = Quantity(format!("{}m", millicpus(limits.cpus * CPU_REQUEST_SHARE)));
    let tmpfs = Quantity(limits.tmpfs_size_bytes.to_string());
    let resources = ResourceRequirements {
        limits: Some(BTreeMap::from([
            ("memory".to_string(), memory.clone()),
            ("cpu".to_string(), cpu_limit),
        ])),
        requests: Some(BTreeMap::from([
            ("memory".to_string(), memory),
            ("cpu".to_string(), cpu_request),
        ])),
        ..Default::default()
    };
    let agent = format!("{AGENT_DIR}/sandboxd-agent");
    let mut install_command = vec![
        AGENT_IN_IMAGE.to_string(),
        "--install".to_string(),
        agent.clone(),
    ];
    // For a sandbox without a network the same init container takes the pod's interfaces down
    // first (as root with `CAP_NET_ADMIN` alone): the deny-all NetworkPolicy holds such pods
    // only where the cluster enforces policies, this on every cluster. The sandbox's
    // container, without the capability, cannot bring them up again. One init container
    // rather than two: the kubelet notices each one's end at its next relist.
    let no_network = spec.limits.network_mode != NetworkMode::Bridge;
    if no_network {
        install_command.push("--no-network".to_string());
    }
    let install = Container {
        name: "agent".to_string(),
        image: Some(options.agent_image.clone()),
        image_pull_policy: Some("IfNotPresent".to_string()),
        command: Some(install_command),
        security_context: Some(if no_network {
            root_with(&["NET_ADMIN"])
        } else {
            hardened()
        }),
        resources: Some(init_resources()),
        volume_mounts: Some(vec![mount("agent", AGENT_DIR, false)]),
        ..Default::default()
    };
    let (claims, claim_mounts, owner) = session_volumes(options, spec);
    let mut mounts = vec![
        mount("agent", AGENT_DIR, true),
        mount("tmp", "/tmp", false),
        mount("workspace", WORKDIR, false),
        // The same volume: one cap for both names.
        mount("workspace", HOME_DIR, false),
    ];
    mounts.extend(claim_mounts);
    let mut volumes = vec![
        memory_volume("agent", Quantity(AGENT_VOLUME_SIZE.to_string())),
        memory_volume("tmp", tmpfs.clone()),
        memory_volume("workspace", tmpfs),
    ];
    volumes.extend(claims);
    let sandbox = Container {
        name: "sandbox".to_string(),
        image: Some(spec.image.clone()),
        image_pull_policy: Some("IfNotPresent".to_string()),
        command: Some(vec![
            agent,
            "--listen".to_string(),
            if agent_listen.on_pod_network {
                format!("0.0.0.0:{AGENT_PORT}")
            } else {
                format!("127.0.0.1:{AGENT_PORT}")
            },
            "--claim-digest".to_string(),
            agent_listen.claim_digest.clone(),
        ]),
        args: Some(vec![]),
        working_dir: Some(WORKDIR.to_string()),
        env: Some(vec![EnvVar {
            name: "HOME".to_string(),
            value: Some(WORKDIR.to_string()),
            ..Default::default()
        }]),
        security_context: Some(hardened()),
        resources: Some(resources),
        volume_mounts: Some(mounts),
        ..Default::default()
    };
    Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(&spec.session_id)),
            namespace: Some(options.namespace.clone()),
            labels: Some(labels(options, spec)),
            annotations: agent_listen.on_pod_network.then(|| {
                BTreeMap::from([(
                    ANNOTATION_AGENT_LISTENS.to_string(),
                    ON_POD_NETWORK.to_string(),
                )])
            }),
            ..Default::default()
        },
        spec: Some(PodSpec {
            init_containers: Some([Some(install), owner].into_iter().flatten().collect()),
            containers: vec![sandbox],
            volumes: Some(volumes),
            // As on Docker: the pod's name is the service's business, not the sandbox's.
            hostname: Some("sandbox".to_string()),
            restart_policy: Some("Never".to_string()),
            automount_service_account_token: Some(false),
            enable_service_links: Some(false),
            host_network: Some(false),
            host_pid: Some(false),
            host_ipc: Some(false),
            share_process_namespace: Some(false),
            termination_grace_period_seconds: Some(0),
            node_selector: (!options.node_selector.is_empty())
                .then(|| options.node_selector.clone()),
            runtime_class_name: options.runtime_classes.get(&spec.runtime).cloned(),
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                run_as_user: Some(i64::from(SANDBOX_UID)),
                run_as_group: Some(i64::from(SANDBOX_UID)),
                fs_group: Some(i64::from(SANDBOX_UID)),
                // Volumes whose root has the group already are not walked again at each mount.
                fs_group_change_policy: Some("OnRootMismatch".to_string()),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_string(),
                    localhost_profile: None,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: None,
    }
}

/// CPUs in thousandths, at least one. The config checks `cpus` is a number above 0; the cast
/// of a rounded float keeps whole numbers and saturates.
#[allow(clippy::cast_possible_truncation)]
fn millicpus(cpus: f64) -> u64 {
    (cpus * 1000.0).round().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::tests::options;
    use sandboxd_api::Limits;

    fn pod_of(spec: &SandboxSpec) -> Pod {
        let agent_listen = AgentListen {
            claim_digest: "ab".repeat(32),
            on_pod_network: false,
        };
        pod(&options(), spec, &agent_listen)
    }

    fn spec(runtime: &str) -> SandboxSpec {
        SandboxSpec {
            session_id: "abc123".into(),
            runtime: runtime.into(),
            image: "sandboxd/busybox:local".into(),
            limits: Limits {
                mem_limit_bytes: 256 << 20,
                cpus: 0.5,
                pids_limit: 64,
                network_mode: NetworkMode::None,
                tmpfs_size_bytes: 64 << 20,
                isolation: Default::default(),
            },
            volumes: Vec::new(),
            memory_from: None,
        }
    }

    #[test]
    fn the_pod_carries_the_hardened_profile() {
        let pod = pod_of(&spec("gvisor"));
        let spec = pod.spec.unwrap();
        assert_eq!(spec.automount_service_account_token, Some(false));
        assert_eq!(spec.enable_service_links, Some(false));
        assert_eq!(spec.runtime_class_name.as_deref(), Some("runsc"));
        let container = &spec.containers[0];
        let security = container.security_context.as_ref().unwrap();
        assert_eq!(security.read_only_root_filesystem, Some(true));
        assert_eq!(security.allow_privilege_escalation, Some(false));
        assert_eq!(
            security.capabilities.as_ref().unwrap().drop,
            Some(vec!["ALL".to_string()])
        );
        let resources = container.resources.as_ref().unwrap();
        let limits = resources.limits.as_ref().unwrap();
        assert_eq!(limits["memory"], Quantity((256u64 << 20).to_string()));
        assert_eq!(limits["cpu"], Quantity("500m".into()));
        assert_eq!(
            resources.requests.as_ref().unwrap()["memory"],
            limits["memory"]
        );
        let volumes = spec.volumes.unwrap();
        let workspace = volumes.iter().find(|v| v.name == "workspace").unwrap();
        let dir = workspace.empty_dir.as_ref().unwrap();
        assert_eq!(dir.medium.as_deref(), Some("Memory"));
        assert_eq!(dir.size_limit, Some(Quantity((64u64 << 20).to_string())));
        let mut workspace_paths: Vec<_> = container
            .volume_mounts
            .iter()
            .flatten()
            .filter(|m| m.name == "workspace")
            .map(|m| m.mount_path.as_str())
            .collect();
        workspace_paths.sort();
        assert_eq!(
            workspace_paths,
            [HOME_DIR, WORKDIR],
            "one volume, two names"
        );
        let install = &spec.init_containers.as_ref().unwrap()[0];
        assert_eq!(
            install
                .resources
                .as_ref()
                .unwrap()
                .requests
                .as_ref()
                .unwrap()["cpu"],
            Quantity("10m".into()),
            "the agent's installer does not reserve its CPU limit"
        );
        let agent_mount = container
            .volume_mounts
            .as_ref()
            .unwrap()
            .iter()
            .find(|m| m.name == "agent")
            .unwrap();
        assert_eq!(agent_mount.read_only, Some(true));
        assert_eq!(
            pod.metadata.labels.unwrap()[LABEL_NETWORK],
            "none",
            "the label the deny-all network policy selects"
        );
    }

    #[test]
    fn volumes_are_their_claims_mounted_as_asked_and_owned_by_an_init_step() {
        let mut asked = spec("sh");
        asked.volumes = vec![
            sandboxd_backend::VolumeMount {
                volume_id: "v1".into(),
                path: "/workspace/data".into(),
                read_only: false,
            },
            sandboxd_backend::VolumeMount {
                volume_id: "v2".into(),
                path: "/tmp/ref".into(),
                read_only: true,
            },
        ];
        let spec = pod_of(&asked).spec.unwrap();
        let claims: Vec<_> = spec
            .volumes
            .iter()
            .flatten()
            .filter_map(|v| v.persistent_volume_claim.as_ref())
            .map(|c| c.claim_name.as_str())
            .collect();
        assert_eq!(claims, ["sandboxd-volume-v1", "sandboxd-volume-v2"]);
        let mounts = spec.containers[0].volume_mounts.as_ref().unwrap();
        let mounted = |path: &str| mounts.iter().find(|m| m.mount_path == path).unwrap();
        assert_eq!(mounted("/workspace/data").read_only, Some(false));
        assert_eq!(mounted("/tmp/ref").read_only, Some(true));
        let inits = spec.init_containers.unwrap();
        assert_eq!(
            init_names(&inits),
            ["agent", "volumes"],
            "the agent's installer, then the volumes' owner"
        );
        let owner = &inits[1];
        assert_eq!(
            owner.command.as_ref().unwrap()[1..],
            [
                "--own",
                "61000",
                "/.sandboxd-volumes/0",
                "/.sandboxd-volumes/1"
            ]
        );
        let security = owner.security_context.as_ref().unwrap();
        let capabilities = security.capabilities.as_ref().unwrap();
        assert_eq!(
            capabilities.add,
            Some(vec!["CHOWN".to_string()]),
            "nothing more"
        );
        assert_eq!(capabilities.drop, Some(vec!["ALL".to_string()]));
        assert_eq!(security.allow_privilege_escalation, Some(false));
        assert!(
            owner
                .volume_mounts
                .iter()
                .flatten()
                .all(|m| m.read_only == Some(false)),
            "a volume mounted read-only is made readable too"
        );
    }

    fn init_names(inits: &[Container]) -> Vec<&str> {
        inits.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn a_session_without_volumes_has_no_owner_step() {
        let spec = pod_of(&spec("sh")).spec.unwrap();
        assert_eq!(init_names(&spec.init_containers.unwrap()), ["agent"]);
    }

    #[test]
    fn a_sandbox_without_a_network_has_its_interfaces_taken_down_first() {
        let spec_none = pod_of(&spec("sh")).spec.unwrap();
        let install = &spec_none.init_containers.unwrap()[0];
        assert_eq!(
            install.command.as_ref().unwrap()[1..],
            ["--install", "/.sandboxd/sandboxd-agent", "--no-network"]
        );
        let security = install.security_context.as_ref().unwrap();
        let capabilities = security.capabilities.as_ref().unwrap();
        assert_eq!(capabilities.add, Some(vec!["NET_ADMIN".to_string()]));
        assert_eq!(capabilities.drop, Some(vec!["ALL".to_string()]));
        assert_eq!(security.allow_privilege_escalation, Some(false));
        let mut bridge = spec("sh");
        bridge.limits.network_mode = NetworkMode::Bridge;
        let install = &pod_of(&bridge).spec.unwrap().init_containers.unwrap()[0];
        assert_eq!(
            install.command.as_ref().unwrap().last().map(String::as_str),
            Some("/.sandboxd/sandboxd-agent"),
            "a bridge sandbox keeps its network"
        );
        let security = install.security_context.as_ref().unwrap();
        assert_eq!(
            security.run_as_non_root,
            Some(true),
            "and a non-root installer"
        );
    }

    #[test]
    fn an_agent_on_the_pod_network_listens_there_for_its_secret_alone_and_says_so() {
        let agent_listen = AgentListen {
            claim_digest: "cd".repeat(32),
            on_pod_network: true,
        };
        let mut made = pod(&options(), &spec("sh"), &agent_listen);
        let command = made.spec.as_ref().unwrap().containers[0]
            .command
            .clone()
            .unwrap();
        assert_eq!(
            command[1..],
            [
                "--listen",
                "0.0.0.0:7719",
                "--claim-digest",
                &"cd".repeat(32)
            ]
        );
        assert_eq!(pod_network_address(&made), None, "no address yet");
        made.status = Some(k8s_openapi::api::core::v1::PodStatus {
            pod_ip: Some("10.244.0.7".into()),
            ..Default::default()
        });
        assert_eq!(
            pod_network_address(&made),
            Some("10.244.0.7:7719".parse().unwrap())
        );
        let mut loopback = pod_of(&spec("sh"));
        let command = loopback.spec.as_ref().unwrap().containers[0]
            .command
            .clone()
            .unwrap();
        assert_eq!(command[2], "127.0.0.1:7719");
        loopback.status = made.status.clone();
        assert_eq!(
            pod_network_address(&loopback),
            None,
            "reached by port-forward"
        );
    }

    #[test]
    fn runtimes_without_a_class_get_the_clusters_default() {
        let pod = pod_of(&spec("python"));
        assert_eq!(pod.spec.unwrap().runtime_class_name, None);
    }
}
