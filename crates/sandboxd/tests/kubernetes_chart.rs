//! The Helm chart (`deploy/helm/sandboxd`) on the real test cluster: it lints, renders what an
//! operator asks and refuses what would break the service, installs the service's image as a
//! pod of its own (in-cluster credentials of its service account, the config from a ConfigMap,
//! the token from a Secret, the state on a claim), that pod opens sessions as pods through its
//! Role, and an upgrade that changes the config replaces the pod and keeps the sessions and the
//! token. Each release lives in a namespace of its own, labelled, removed with its cluster-wide
//! objects when the test ends, failing or not. Ignored without a cluster and helm, like the
//! kubernetes suite; scripts/test.sh's kubernetes step runs it (scripts/k8s-up.sh builds helm
//! and makes the image sandboxd/sandboxd:local from the build).
//!
//! The pod runs on the cluster's pod network: it reaches the API server through the `kubernetes`
//! Service, and the test reaches it through its own Service (the node's Service proxy leads
//! the host's connections to the pod).

mod common;

use common::{
    agent_peers, busybox_image, call_at, cluster, random_suffix, skip_or_fail, Kubernetes,
};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The label every namespace of this suite carries, for removal by label.
const SUITE_LABEL: &str = "org.sandboxd.test=chart";

fn chart() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/helm/sandboxd")
}

/// The helm binary scripts/k8s-up.sh built; a skip (a failure in CI) without it.
fn helm_binary() -> Option<String> {
    let found = std::env::var("SANDBOXD_TEST_HELM").ok();
    if found.is_none() {
        skip_or_fail("helm: SANDBOXD_TEST_HELM is not set (scripts/k8s-up.sh prints HELM=)");
    }
    found
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A release of the chart in a namespace of its own; uninstalled and removed when dropped.
struct Release {
    cluster: Kubernetes,
    helm: String,
    name: String,
    namespace: String,
    values: tempfile::NamedTempFile,
}

impl Release {
    fn new(cluster: Kubernetes, helm: String) -> Release {
        let suffix = random_suffix();
        let namespace = format!("sandboxd-chart-{suffix}");
        cluster.kubectl(&["create", "namespace", &namespace]);
        cluster.kubectl(&["label", "namespace", &namespace, SUITE_LABEL]);
        Release {
            cluster,
            helm,
            name: format!("chart-{suffix}"),
            namespace,
            values: tempfile::NamedTempFile::new().unwrap(),
        }
    }

    fn helm(&self, args: &[&str]) -> Output {
        Command::new(&self.helm)
            .arg("--kubeconfig")
            .arg(&self.cluster.kubeconfig)
            .arg("--namespace")
            .arg(&self.namespace)
            .args(args)
            .output()
            .expect("run helm")
    }

    /// `helm install` or `helm upgrade` with these values, waiting until the pod is ready.
    fn apply(&self, verb: &str, values: &str) {
        std::fs::write(self.values.path(), values).unwrap();
        let chart = chart();
        let output = self.helm(&[
            verb,
            &self.name,
            chart.to_str().unwrap(),
            "--values",
            self.values.path().to_str().unwrap(),
            "--wait",
            "--timeout",
            "240s",
        ]);
        assert!(
            output.status.success(),
            "helm {verb}: {}\n{}",
            said(&output),
            self.cluster
                .kubectl(&["get", "pods", "-n", &self.namespace, "-o", "wide"])
        );
    }

    fn kubectl(&self, args: &[&str]) -> String {
        let mut all = vec!["-n", &self.namespace];
        all.extend_from_slice(args);
        self.cluster.kubectl(&all)
    }

    /// The address and port of the release's Service.
    fn service_address(&self) -> String {
        self.kubectl(&[
            "get",
            "service",
            &format!("{}-sandboxd", self.name),
            "-o",
            "jsonpath={.spec.clusterIP}:{.spec.ports[0].port}",
        ])
        .trim()
        .to_string()
    }

    /// The session's agent holds connections from the service's pod alone: it was dialed on
    /// the pod network, not through the port-forward (which ends at the pod's loopback).
    async fn assert_dialed_on_the_pod_network(&self, service: &InCluster, id: &str) {
        let peers = agent_peers(&service.exec(id, "cat /proc/net/tcp").await);
        let service_ip = self.kubectl(&[
            "get",
            "pods",
            &format!("-lapp.kubernetes.io/instance={}", self.name),
            "-o",
            "jsonpath={.items[0].status.podIP}",
        ]);
        assert!(
            !peers.is_empty() && peers.iter().all(|peer| *peer == service_ip.trim()),
            "the agent's peers {peers:?}, the service's pod {service_ip}"
        );
    }

    /// The service's pods (not the sessions'), by the chart's labels.
    fn service_pods(&self) -> Vec<String> {
        let selector = format!("app.kubernetes.io/instance={}", self.name);
        self.cluster.live_names("pods", &self.namespace, &selector)
    }

    fn token(&self) -> String {
        let encoded = self.kubectl(&[
            "get",
            "secret",
            &format!("{}-sandboxd", self.name),
            "-o",
            "jsonpath={.data.token}",
        ]);
        use base64::Engine;
        let token = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .expect("the token Secret");
        String::from_utf8(token).unwrap()
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        self.helm(&["uninstall", &self.name, "--wait", "--timeout", "60s"]);
        let instance = format!("-lapp.kubernetes.io/instance={}", self.name);
        self.cluster
            .kubectl(&["delete", "clusterrole,clusterrolebinding", &instance]);
        self.cluster
            .kubectl(&["delete", "namespace", &self.namespace, "--wait=false"]);
    }
}

fn values(config: &str) -> String {
    let config = config.replace('\n', "\n  ");
    format!(
        r#"image: {{repository: sandboxd/sandboxd, tag: local, pullPolicy: Never}}
agentImage: sandboxd/agent:local
persistence: {{storageClass: sandboxd-test, size: 1Gi}}
# The test StorageClass's host-path volumes ignore fsGroup: the state directory is root's.
podSecurityContext: {{runAsNonRoot: false, runAsUser: 0, runAsGroup: 0, fsGroup: 0}}
config: |
  {config}
"#
    )
}

/// The service the chart installed, at its Service's address, with its token.
struct InCluster {
    client: reqwest::Client,
    url: String,
    token: String,
}

impl InCluster {
    /// A client of its own: one made before an upgrade keeps connections to the old pod.
    fn new(url: &str, token: &str) -> InCluster {
        InCluster {
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .unwrap(),
            url: url.to_string(),
            token: token.to_string(),
        }
    }

    /// Once its Service leads to the ready pod: the node's Service proxy follows the pod's
    /// readiness a moment after `helm --wait` has seen it (until then it refuses).
    async fn reachable(self) -> InCluster {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let health = self
                .client
                .get(format!("{}/healthz", self.url))
                .send()
                .await;
            match health {
                Ok(response) if response.status().is_success() => return self,
                _ if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await
                }
                other => panic!("the service at {} never answered: {other:?}", self.url),
            }
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        call_at(&self.client, &url, &self.token, method, body).await
    }

    async fn exec(&self, id: &str, command: &str) -> String {
        let (status, body) = self
            .call(
                reqwest::Method::POST,
                &format!("/v1/sessions/{id}/exec"),
                Some(json!({"command": command})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["exit_code"], 0, "{body}");
        body["stdout"].as_str().unwrap().to_string()
    }
}

#[test]
#[ignore = "needs helm: scripts/test.sh's kubernetes step runs it"]
fn the_chart_lints_and_renders_what_an_operator_asks() {
    let Some(helm) = helm_binary() else { return };
    let chart = chart();
    let run = |args: &[&str]| {
        Command::new(&helm)
            .args(args)
            .arg(&chart)
            .output()
            .expect("run helm")
    };
    let chart_file = std::fs::read_to_string(chart.join("Chart.yaml")).unwrap();
    assert!(
        chart_file.contains(&format!("appVersion: \"{}\"", env!("CARGO_PKG_VERSION"))),
        "Chart.yaml's appVersion is the service's version, {}",
        env!("CARGO_PKG_VERSION")
    );
    let lint = run(&["lint", "--strict"]);
    assert!(lint.status.success(), "{}", said(&lint));

    let rendered = run(&[
        "template",
        "demo",
        "--namespace",
        "agents",
        "--set",
        "ingress.enabled=true,ingress.domain=sandboxes.example.com,ingress.tlsSecret=wildcard",
        "--set",
        "sandboxes.namespace=agents-sandboxes,sandboxes.createNamespace=true",
        "--set",
        "sandboxes.runtimeClass.untrusted=gvisor",
    ]);
    assert!(rendered.status.success(), "{}", said(&rendered));
    let text = String::from_utf8(rendered.stdout).unwrap();
    for expected in [
        // One service per state directory, replaced whole.
        "replicas: 1",
        "type: Recreate",
        // The E2B API's host and its sandboxes' hosts.
        "host: \"api.sandboxes.example.com\"",
        "host: \"*.sandboxes.example.com\"",
        // The backend table from the values, after the operator's config.
        "kind = \"kubernetes\"",
        "namespace = \"agents-sandboxes\"",
        "\"untrusted\" = \"gvisor\"",
        // The Role where the sessions' pods go, bound to the service's account.
        "kind: Role\nmetadata:\n  name: demo-sandboxd\n  namespace: agents-sandboxes",
        "resources: [pods/portforward]",
        // The token from the Secret, never in the ConfigMap.
        "secretKeyRef:\n                  name: demo-sandboxd\n                  key: token",
        "claimName: demo-sandboxd-state",
    ] {
        assert!(text.contains(expected), "no {expected:?} in:\n{text}");
    }
    assert!(!text.contains("token ="), "a token in the config:\n{text}");

    // A [backend] table of the operator's own would clash with the chart's: refused, saying why.
    let clash = run(&[
        "template",
        "demo",
        "--set-string",
        "config=[backend]\nkind = \"docker\"",
    ]);
    assert!(!clash.status.success());
    assert!(
        said(&clash).contains("the chart writes it from `sandboxes`"),
        "{}",
        said(&clash)
    );
    let no_domain = run(&["template", "demo", "--set", "ingress.enabled=true"]);
    assert!(!no_domain.status.success());
    assert!(
        said(&no_domain).contains("ingress.domain"),
        "{}",
        said(&no_domain)
    );
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn the_chart_installs_the_service_in_the_cluster_and_an_upgrade_keeps_its_sessions() {
    let (Some(cluster), Some(helm)) = (cluster(), helm_binary()) else {
        return;
    };
    let config = format!(
        "default_runtime = \"sh\"\n\n[runtimes.sh]\nimage = \"{0}\"\ninterpreter = [\"sh\"]\n\n\
         [runtimes.online]\nimage = \"{0}\"\nnetwork_mode = \"bridge\"\n",
        busybox_image()
    );
    let release = Release::new(cluster, helm);
    let started = Instant::now();
    release.apply("install", &values(&config));
    println!(
        "# helm install, until the service's pod was ready: {:?}",
        started.elapsed()
    );
    let first_pods = release.service_pods();
    assert_eq!(first_pods.len(), 1, "{first_pods:?}");

    let url = format!("http://{}", release.service_address());
    let token = release.token();
    assert_eq!(token.len(), 40, "a random token was made");
    let service = InCluster::new(&url, &token).reachable().await;
    let (status, health) = service.call(reqwest::Method::GET, "/healthz", None).await;
    assert_eq!(status, 200, "{health}");
    // A session's pod, made by the service's own account under the chart's Role.
    let (status, opened) = service
        .call(
            reqwest::Method::POST,
            "/v1/sessions",
            Some(json!({"runtime": "sh"})),
        )
        .await;
    assert_eq!(status, 201, "{opened}");
    let id = opened["id"].as_str().unwrap().to_string();
    let pod = release.kubectl(&[
        "get",
        "pod",
        &format!("sandboxd-{id}"),
        "-o",
        "jsonpath={.metadata.name}",
    ]);
    assert_eq!(
        pod,
        format!("sandboxd-{id}"),
        "the session's pod is in the release's namespace"
    );
    service.exec(&id, "echo kept > /workspace/mark").await;

    // A bridge sandbox's agent is dialed on the pod network, not through the API server: the
    // connections the agent holds come from the service's pod, not from the pod's loopback
    // (where the kubelet's port-forward ends).
    let (status, online) = service
        .call(
            reqwest::Method::POST,
            "/v1/sessions",
            Some(json!({"runtime": "online"})),
        )
        .await;
    assert_eq!(status, 201, "{online}");
    let online = online["id"].as_str().unwrap().to_string();
    release
        .assert_dialed_on_the_pod_network(&service, &online)
        .await;

    // An upgrade that changes the config replaces the service's pod; the new one takes the
    // session back, the token stays.
    let upgraded = format!(
        "{config}\n[runtimes.other]\nimage = \"{}\"\ninterpreter = [\"sh\"]\n",
        busybox_image()
    );
    release.apply("upgrade", &values(&upgraded));
    let second_pods = release.service_pods();
    assert_eq!(second_pods.len(), 1, "{second_pods:?}");
    assert_ne!(
        first_pods, second_pods,
        "the config's change replaced the pod"
    );
    assert_eq!(release.token(), token, "the upgrade kept the token");
    // The old pod's connections went with it.
    let service = InCluster::new(&url, &token).reachable().await;
    let (status, runtimes) = service
        .call(reqwest::Method::GET, "/v1/runtimes", None)
        .await;
    assert_eq!(status, 200, "{runtimes}");
    assert!(runtimes.to_string().contains("\"other\""), "{runtimes}");
    let (status, session) = service
        .call(reqwest::Method::GET, &format!("/v1/sessions/{id}"), None)
        .await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["state"], "running", "{session}");
    assert_eq!(service.exec(&id, "cat /workspace/mark").await, "kept\n");
    // The new pod took the bridge sandbox back on the pod network too.
    release
        .assert_dialed_on_the_pod_network(&service, &online)
        .await;
    let (status, closed) = service
        .call(reqwest::Method::DELETE, &format!("/v1/sessions/{id}"), None)
        .await;
    assert_eq!(status, 200, "{closed}");
}
