//! The Kubernetes cluster the suites run against instead of Docker, when
//! `SANDBOXD_TEST_KUBECONFIG` names one (scripts/k8s-up.sh prints it): the services' config,
//! and kubectl to look at and remove what they made there.

use super::{busybox_image, random_suffix};
use std::process::Command;

/// The Kubernetes cluster the suites run against instead of Docker, when one is named.
pub struct Kubernetes {
    pub kubeconfig: String,
    pub kubectl: String,
}

/// The namespace test pods go to.
pub const TEST_NAMESPACE: &str = "sandboxd-test";
/// The StorageClass the test cluster provisions volumes of (scripts/k8s-up.sh makes it).
pub const TEST_STORAGE_CLASS: &str = "sandboxd-test";

pub fn kubernetes() -> Option<Kubernetes> {
    let kubeconfig = std::env::var("SANDBOXD_TEST_KUBECONFIG").ok()?;
    let kubectl = std::env::var("SANDBOXD_TEST_KUBECTL").unwrap_or_else(|_| "kubectl".into());
    Some(Kubernetes {
        kubeconfig,
        kubectl,
    })
}

/// The cluster, for a suite that cannot run without one: reported as a skip (a failure in CI)
/// when none is named.
pub fn cluster() -> Option<Kubernetes> {
    let found = kubernetes();
    if found.is_none() {
        super::skip_or_fail(
            "a cluster: SANDBOXD_TEST_KUBECONFIG is not set (scripts/k8s-up.sh prints it)",
        );
    }
    found
}

/// What a service's config gets to run on the cluster with the credentials of `kubeconfig`,
/// its pods in `namespace`.
pub(super) fn backend_table(kubeconfig: &str, namespace: &str) -> String {
    let agent_image = std::env::var("SANDBOXD_TEST_AGENT_IMAGE")
        .unwrap_or_else(|_| "sandboxd/agent:local".into());
    format!(
        "\n[backend]\nkind = \"kubernetes\"\nkubeconfig = \"{kubeconfig}\"\nnamespace = \"{namespace}\"\nagent_image = \"{agent_image}\"\nvolume_storage_class = \"{TEST_STORAGE_CLASS}\"\n"
    )
}

impl Kubernetes {
    pub fn kubectl(&self, args: &[&str]) -> String {
        let output = Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .output()
            .expect("run kubectl");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The names of the pods of a service instance, leaving out those being deleted (a deleted
    /// pod is listed until its kubelet has stopped it; its sandbox is gone already).
    pub fn pods(&self, instance_id: &str) -> Vec<String> {
        let selector = format!("org.sandboxd.instance={instance_id}");
        self.live_names("pods", TEST_NAMESPACE, &selector)
    }

    /// The names of the objects of `kind` in `namespace` that the label `selector` picks,
    /// leaving out those being deleted.
    pub fn live_names(&self, kind: &str, namespace: &str, selector: &str) -> Vec<String> {
        let selector = format!("-l{selector}");
        let text = self.kubectl(&["get", kind, "-n", namespace, &selector, "-o", "json"]);
        let list: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("kubectl get {kind}: {e}: {text}"));
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["metadata"]["deletionTimestamp"].is_null())
            .map(|item| item["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// The pod of a session, as `kubectl get -o json` shows it.
    pub fn pod_json(&self, session: &str) -> serde_json::Value {
        let text = self.kubectl(&[
            "get",
            "pod",
            "-n",
            TEST_NAMESPACE,
            &format!("sandboxd-{session}"),
            "-o",
            "json",
        ]);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("pod of {session}: {e}: {text}"))
    }

    /// Starts a pod labelled as a sandbox of `instance_id` that no session of it owns.
    pub(super) fn start_unowned_pod(&self, instance_id: &str) {
        let labels = format!(
            "org.sandboxd.instance={instance_id},org.sandboxd.session=unknown,org.sandboxd.managed=true"
        );
        let name = format!("unowned-{}", random_suffix());
        self.kubectl(&[
            "run",
            &name,
            "-n",
            TEST_NAMESPACE,
            "--labels",
            &labels,
            "--image",
            &busybox_image(),
            "--image-pull-policy=Never",
            "--restart=Never",
            "--command",
            "--",
            "sleep",
            "1000",
        ]);
    }

    /// The names of the volume claims of a service instance, leaving out those being deleted
    /// (a claim a pod still uses stays until the pod is gone).
    pub fn claims(&self, instance_id: &str) -> Vec<String> {
        let selector = format!("org.sandboxd.instance={instance_id}");
        self.live_names("pvc", TEST_NAMESPACE, &selector)
    }

    /// Removes what a service instance made on the cluster, by its label: pods, then claims.
    pub(super) fn remove_instance(&self, instance_id: &str) {
        let selector = format!("-lorg.sandboxd.instance={instance_id}");
        self.kubectl(&[
            "delete",
            "pods",
            "-n",
            TEST_NAMESPACE,
            &selector,
            "--grace-period=0",
            "--force",
            "--wait=false",
        ]);
        self.kubectl(&[
            "delete",
            "pvc",
            "-n",
            TEST_NAMESPACE,
            &selector,
            "--wait=false",
        ]);
    }
}

/// The addresses of the peers of the agent's established connections (its port, 7719), from
/// the sandbox's `/proc/net/tcp` (little-endian hex).
pub fn agent_peers(proc_net_tcp: &str) -> Vec<String> {
    proc_net_tcp
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, remote, state) = (fields.get(1)?, fields.get(2)?, fields.get(3)?);
            (local.ends_with(":1E27") && *state == "01").then_some(())?;
            let ip = u32::from_str_radix(remote.split(':').next()?, 16).ok()?;
            Some(std::net::Ipv4Addr::from(ip.swap_bytes()).to_string())
        })
        .collect()
}
