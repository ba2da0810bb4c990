//! `[backend]`: which platform runs the sandboxes. Without the table, the Docker engine on
//! this host, as always.

use crate::error::invalid;
use crate::error::ConfigError;
use sandboxd_api::{Isolation, RuntimeInfo};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The namespace sandboxes go to when `[backend]` names none.
pub const DEFAULT_NAMESPACE: &str = "sandboxd";
/// The image holding the agent that Kubernetes sandboxes start with, when none is named.
pub const DEFAULT_AGENT_IMAGE: &str = "sandboxd/agent:local";
/// The access mode of the claims Kubernetes volumes are, when `[backend]` names none.
pub const DEFAULT_VOLUME_ACCESS_MODE: &str = "ReadWriteOnce";
/// The access modes a volume's claim may ask for: all read-write, as a volume is mounted
/// read-write or read-only as each session asks.
const VOLUME_ACCESS_MODES: &[&str] = &["ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod"];
/// How many Docker sandboxes share an engine shim when `[backend]` names no number.
pub const DEFAULT_SANDBOXES_PER_SHIM: u32 = 16;
/// More would put too many sandboxes behind one host process.
const MAX_SANDBOXES_PER_SHIM: u32 = 256;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum BackendSettings {
    Docker(DockerSettings),
    Kubernetes(KubernetesSettings),
}

impl Default for BackendSettings {
    fn default() -> Self {
        BackendSettings::Docker(DockerSettings::default())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DockerSettings {
    /// Sandboxes made one after another share one containerd shim, this many to a shim: an
    /// idle sandbox then costs the host under 1 MB instead of about 4. A shim is one host
    /// process, so a fault in it reaches all of its sandboxes; 1 gives each its own.
    pub sandboxes_per_shim: u32,
}

impl Default for DockerSettings {
    fn default() -> Self {
        DockerSettings {
            sandboxes_per_shim: DEFAULT_SANDBOXES_PER_SHIM,
        }
    }
}

/// How the service reaches its Kubernetes sandboxes' agents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentPath {
    /// On the pod network where the service runs in the cluster, else the port-forward.
    #[default]
    Auto,
    /// On the pod network: the service reaches the pods' addresses (in the cluster, or on a
    /// host routed to them).
    PodNetwork,
    /// Always through the API server's port-forward.
    PortForward,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KubernetesSettings {
    /// Credentials for the cluster; in-cluster ones (or `KUBECONFIG`) when absent.
    pub kubeconfig: Option<PathBuf>,
    pub namespace: String,
    pub node_selector: BTreeMap<String, String>,
    /// Runtime alias to the `runtimeClassName` its pods get.
    pub runtime_class: BTreeMap<String, String>,
    pub agent_image: String,
    /// The StorageClass of the volumes' claims; the cluster's default class when absent.
    pub volume_storage_class: Option<String>,
    /// The access mode of the volumes' claims (one of [`VOLUME_ACCESS_MODES`]).
    pub volume_access_mode: String,
    /// How `bridge` sandboxes' agents are reached (others' always through the port-forward).
    pub agent_path: AgentPath,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BackendFile {
    kind: String,
    kubeconfig: Option<PathBuf>,
    namespace: Option<String>,
    #[serde(default)]
    node_selector: BTreeMap<String, String>,
    #[serde(default)]
    runtime_class: BTreeMap<String, String>,
    agent_image: Option<String>,
    volume_storage_class: Option<String>,
    volume_access_mode: Option<String>,
    agent_path: Option<AgentPath>,
    sandboxes_per_shim: Option<u32>,
}

pub(crate) fn resolve(
    file: Option<&BackendFile>,
    runtimes: &BTreeMap<String, RuntimeInfo>,
) -> Result<BackendSettings, ConfigError> {
    let Some(file) = file else {
        return Ok(BackendSettings::default());
    };
    let kubernetes_only = [
        ("kubeconfig", file.kubeconfig.is_some()),
        ("namespace", file.namespace.is_some()),
        ("node_selector", !file.node_selector.is_empty()),
        ("runtime_class", !file.runtime_class.is_empty()),
        ("agent_image", file.agent_image.is_some()),
        ("volume_storage_class", file.volume_storage_class.is_some()),
        ("volume_access_mode", file.volume_access_mode.is_some()),
        ("agent_path", file.agent_path.is_some()),
    ];
    match file.kind.as_str() {
        "docker" => match kubernetes_only.iter().find(|(_, given)| *given) {
            Some((key, _)) => Err(invalid(
                format!("backend.{key}"),
                "is a setting of kind = \"kubernetes\"",
            )),
            None => docker(file.sandboxes_per_shim),
        },
        "kubernetes" => {
            if file.sandboxes_per_shim.is_some() {
                return Err(invalid(
                    "backend.sandboxes_per_shim",
                    "is a setting of kind = \"docker\" (a pod's containers share its shim already)",
                ));
            }
            if let Some(runtime) = runtimes
                .values()
                .find(|r| r.limits.isolation == Isolation::Gvisor)
            {
                return Err(invalid(
                    format!("runtimes.{}.isolation", runtime.name),
                    "\"gvisor\" is a setting of the Docker backend; on Kubernetes give the runtime a gVisor RuntimeClass in [backend.runtime_class]",
                ));
            }
            if let Some(alias) = file
                .runtime_class
                .keys()
                .find(|a| !runtimes.contains_key(*a))
            {
                return Err(invalid(
                    format!("backend.runtime_class.{alias}"),
                    "names no configured runtime",
                ));
            }
            let namespace = file.namespace.clone().unwrap_or(DEFAULT_NAMESPACE.into());
            if !is_dns_label(&namespace) {
                return Err(invalid(
                    "backend.namespace",
                    "must be a DNS label: lowercase letters, digits and '-', at most 63",
                ));
            }
            if let Some(class) = &file.volume_storage_class {
                if !is_dns_subdomain(class) {
                    return Err(invalid(
                        "backend.volume_storage_class",
                        "must be a StorageClass's name: lowercase letters, digits, '-' and '.', at most 253",
                    ));
                }
            }
            let volume_access_mode = file
                .volume_access_mode
                .clone()
                .unwrap_or(DEFAULT_VOLUME_ACCESS_MODE.into());
            if !VOLUME_ACCESS_MODES.contains(&volume_access_mode.as_str()) {
                return Err(invalid(
                    "backend.volume_access_mode",
                    format!(
                        "\"{volume_access_mode}\" is not an access mode a volume can have; use one of {}",
                        VOLUME_ACCESS_MODES.join(", ")
                    ),
                ));
            }
            Ok(BackendSettings::Kubernetes(KubernetesSettings {
                kubeconfig: file.kubeconfig.clone(),
                namespace,
                node_selector: file.node_selector.clone(),
                runtime_class: file.runtime_class.clone(),
                agent_image: file
                    .agent_image
                    .clone()
                    .unwrap_or(DEFAULT_AGENT_IMAGE.into()),
                volume_storage_class: file.volume_storage_class.clone(),
                volume_access_mode,
                agent_path: file.agent_path.unwrap_or_default(),
            }))
        }
        other => Err(invalid(
            "backend.kind",
            format!("\"{other}\" is not a backend; use \"docker\" or \"kubernetes\""),
        )),
    }
}

fn docker(sandboxes_per_shim: Option<u32>) -> Result<BackendSettings, ConfigError> {
    let sandboxes_per_shim = sandboxes_per_shim.unwrap_or(DEFAULT_SANDBOXES_PER_SHIM);
    if !(1..=MAX_SANDBOXES_PER_SHIM).contains(&sandboxes_per_shim) {
        return Err(invalid(
            "backend.sandboxes_per_shim",
            format!("must be 1 to {MAX_SANDBOXES_PER_SHIM} (1: each sandbox its own shim)"),
        ));
    }
    Ok(BackendSettings::Docker(DockerSettings {
        sandboxes_per_shim,
    }))
}

fn is_dns_label(name: &str) -> bool {
    (1..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// A Kubernetes object name of most kinds (a StorageClass's among them).
fn is_dns_subdomain(name: &str) -> bool {
    (1..=253).contains(&name.len())
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use crate::backend::BackendSettings;
    use crate::config::Config;

    const RUNTIMES: &str = "default_runtime = \"python\"\n[runtimes.python]\nimage = \"p\"\n";

    fn parse(backend: &str) -> Result<Config, crate::error::ConfigError> {
        Config::parse(&format!("{RUNTIMES}{backend}"))
    }

    #[test]
    fn docker_without_the_table_and_kubernetes_with_it() {
        assert_eq!(parse("").unwrap().backend, BackendSettings::default());
        let BackendSettings::Docker(docker) =
            parse("[backend]\nkind = \"docker\"\nsandboxes_per_shim = 4\n")
                .unwrap()
                .backend
        else {
            panic!("docker expected")
        };
        assert_eq!(docker.sandboxes_per_shim, 4);
        let config = parse(
            "[backend]\nkind = \"kubernetes\"\nnamespace = \"sb\"\n[backend.runtime_class]\npython = \"runsc\"\n[backend.node_selector]\npool = \"s\"\n",
        )
        .unwrap();
        let BackendSettings::Kubernetes(k) = config.backend else {
            panic!("kubernetes expected")
        };
        assert_eq!(k.namespace, "sb");
        assert_eq!(k.runtime_class["python"], "runsc");
        assert_eq!(k.node_selector["pool"], "s");
        assert_eq!(k.agent_image, super::DEFAULT_AGENT_IMAGE);
        assert_eq!(k.volume_storage_class, None, "the cluster's default class");
        assert_eq!(k.volume_access_mode, "ReadWriteOnce");
        let BackendSettings::Kubernetes(k) = parse(
            "[backend]\nkind = \"kubernetes\"\nvolume_storage_class = \"fast-ssd\"\nvolume_access_mode = \"ReadWriteMany\"\n",
        )
        .unwrap()
        .backend
        else {
            panic!("kubernetes expected")
        };
        assert_eq!(k.volume_storage_class.as_deref(), Some("fast-ssd"));
        assert_eq!(k.volume_access_mode, "ReadWriteMany");
        assert_eq!(k.agent_path, super::AgentPath::Auto);
        let BackendSettings::Kubernetes(k) =
            parse("[backend]\nkind = \"kubernetes\"\nagent_path = \"pod-network\"\n")
                .unwrap()
                .backend
        else {
            panic!("kubernetes expected")
        };
        assert_eq!(k.agent_path, super::AgentPath::PodNetwork);
        let wrong = parse("[backend]\nkind = \"kubernetes\"\nagent_path = \"tunnel\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(wrong.contains("port-forward"), "{wrong}");
        let docker = parse("[backend]\nkind = \"docker\"\nagent_path = \"auto\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(docker.contains("backend.agent_path"), "{docker}");
    }

    #[test]
    fn mistakes_are_named() {
        let unknown = parse("[backend]\nkind = \"podman\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(unknown.contains("backend.kind"), "{unknown}");
        let stray = parse("[backend]\nkind = \"docker\"\nnamespace = \"x\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(stray.contains("backend.namespace"), "{stray}");
        let alias =
            parse("[backend]\nkind = \"kubernetes\"\n[backend.runtime_class]\nnope = \"runsc\"\n")
                .err()
                .unwrap()
                .to_string();
        assert!(alias.contains("runtime_class.nope"), "{alias}");
        let gvisor = Config::parse(&format!(
            "{RUNTIMES}isolation = \"gvisor\"\n[backend]\nkind = \"kubernetes\"\n"
        ))
        .err()
        .unwrap()
        .to_string();
        assert!(
            gvisor.contains("runtimes.python.isolation") && gvisor.contains("RuntimeClass"),
            "{gvisor}"
        );
        let bad = parse("[backend]\nkind = \"kubernetes\"\nnamespace = \"Not_OK\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(bad.contains("DNS label"), "{bad}");
        for (backend, key, wanted) in [
            (
                "kind = \"kubernetes\"\nvolume_access_mode = \"ReadOnlyMany\"",
                "backend.volume_access_mode",
                "ReadWriteOnce, ReadWriteMany, ReadWriteOncePod",
            ),
            (
                "kind = \"kubernetes\"\nvolume_storage_class = \"Fast_SSD\"",
                "backend.volume_storage_class",
                "StorageClass's name",
            ),
            (
                "kind = \"docker\"\nvolume_storage_class = \"x\"",
                "backend.volume_storage_class",
                "of kind = \"kubernetes\"",
            ),
        ] {
            let error = parse(&format!("[backend]\n{backend}\n"))
                .err()
                .unwrap()
                .to_string();
            assert!(error.contains(key) && error.contains(wanted), "{error}");
        }
        for (backend, wanted) in [
            (
                "kind = \"docker\"\nsandboxes_per_shim = 0",
                "must be 1 to 256",
            ),
            (
                "kind = \"docker\"\nsandboxes_per_shim = 1000",
                "must be 1 to 256",
            ),
            (
                "kind = \"kubernetes\"\nsandboxes_per_shim = 4",
                "of kind = \"docker\"",
            ),
        ] {
            let error = parse(&format!("[backend]\n{backend}\n"))
                .err()
                .unwrap()
                .to_string();
            assert!(
                error.contains("backend.sandboxes_per_shim") && error.contains(wanted),
                "{error}"
            );
        }
    }
}
