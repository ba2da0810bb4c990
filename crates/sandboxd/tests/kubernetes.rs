//! What is particular to the Kubernetes backend, on a real single-node cluster
//! (scripts/k8s-up.sh; `SANDBOXD_TEST_KUBECONFIG` names it). The suites shared with Docker
//! (api, files, processes, state, pool) run against the cluster too, from scripts/test.sh.
//! They need a cluster, so they are ignored in a plain `cargo test`; scripts/test.sh's
//! kubernetes step runs them (`--include-ignored`) on the one it starts. Run without one, they
//! report a skip, and fail in CI. Volumes on the cluster: tests/kubernetes_volumes.rs.

mod common;

use common::{
    agent_peers, base_config, busybox_image, cluster, idle_processes, python_image, Kubernetes,
    TestService, TEST_NAMESPACE,
};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn a_sandbox_is_a_hardened_pod_with_its_limits() {
    let Some(cluster) = cluster() else { return };
    let service = TestService::start(&base_config(4, ""));
    let id = service.open("sh").await;
    assert_eq!(cluster.pods(&service.instance_id).len(), 1);
    let pod = cluster.pod_json(&id);
    let spec = &pod["spec"];
    assert_eq!(spec["automountServiceAccountToken"], false);
    assert_eq!(spec["enableServiceLinks"], false);
    assert_eq!(spec["securityContext"]["runAsUser"], 61000);
    assert_eq!(
        spec["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let sandbox = &spec["containers"][0];
    let security = &sandbox["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(sandbox["resources"]["limits"]["memory"], "134217728");
    assert_eq!(sandbox["resources"]["limits"]["cpu"], "500m");

    // Inside: the uid, a read-only root, the writable places capped, no service account.
    let inside = service
        .sh(
            &id,
            "id -u; touch /etc/x 2>&1 | head -c 0 && echo rootfs-ro; df -k /workspace | tail -1; \
             ls /var/run/secrets/kubernetes.io 2>/dev/null | wc -l",
        )
        .await;
    let stdout = inside["stdout"].as_str().unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "61000", "{inside}");
    assert_eq!(lines[1], "rootfs-ro", "{inside}");
    let size_kib: u64 = lines[2].split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(
        size_kib,
        16 * 1024,
        "the workspace is the runtime's tmpfs_size: {inside}"
    );
    assert_eq!(
        lines[3], "0",
        "no service account token is mounted: {inside}"
    );
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn a_network_none_sandbox_reaches_nothing_and_its_agent_still_answers() {
    let Some(_cluster) = cluster() else { return };
    let service = TestService::start(&base_config(4, ""));
    let id = service.open("python").await;
    // The API server's service address, the node's API server port through the pod's own
    // loopback, an outside address: none is reachable from the pod's network namespace, whose
    // interfaces but the loopback were taken down before the sandbox started (the test
    // cluster does not enforce the deny-all NetworkPolicy).
    let probe = r#"
import socket
for host, port in [("10.96.0.1", 443), ("127.0.0.1", 16443), ("8.8.8.8", 53), ("169.254.169.254", 80)]:
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, port))
        print(host, "open")
    except OSError as e:
        print(host, "refused", e.errno)
print(sorted(open("/proc/net/dev").read().split()[::17])[:5])
"#;
    let result = python(&service, &id, probe).await;
    let stdout = result["stdout"].as_str().unwrap();
    assert!(!stdout.contains(" open"), "a connection was made: {result}");
    assert_eq!(stdout.matches(" refused ").count(), 4, "{result}");
    let again = service.sh(&id, "echo still here").await;
    assert_eq!(again["stdout"], "still here\n");
}

/// What `python3 -c probe` gave in the session.
async fn python(service: &TestService, id: &str, probe: &str) -> serde_json::Value {
    service
        .exec(id, json!({"argv": ["python3", "-c", probe]}))
        .await
        .1
}

/// The peers of the connections the session's agent holds, from its `/proc/net/tcp`.
async fn peers_of_agent(service: &TestService, id: &str) -> Vec<String> {
    let listing = service.sh(id, "cat /proc/net/tcp").await;
    agent_peers(listing["stdout"].as_str().unwrap())
}

/// A runtime `online` of `image` on the pod network.
fn bridge_runtime(image: &str) -> String {
    format!("[runtimes.online]\nimage = \"{image}\"\nnetwork_mode = \"bridge\"\n")
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn a_bridge_sandbox_gets_the_pod_network_with_services_and_dns() {
    let Some(_cluster) = cluster() else { return };
    let service = TestService::start(&base_config(4, &bridge_runtime(&python_image())));
    let id = service.open("online").await;
    // The cluster's DNS names the API server's Service, and its address leads to the API
    // server (through the Service proxy), which answers TLS.
    let probe = r#"
import socket, ssl
print("resolved", socket.gethostbyname("kubernetes.default"))
raw = socket.create_connection(("kubernetes.default", 443), timeout=5)
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
with ctx.wrap_socket(raw) as tls:
    print("tls", tls.version())
print("default routes", sum(1 for l in open("/proc/net/route").readlines()[1:] if l.split()[1] == "00000000"))
"#;
    let result = python(&service, &id, probe).await;
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.contains("resolved 10.96.0.1\n"), "{result}");
    assert!(stdout.contains("tls TLS"), "{result}");
    assert!(stdout.contains("default routes 1\n"), "{result}");
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn told_the_pod_network_a_service_outside_dials_bridge_agents_there() {
    let Some(_cluster) = cluster() else { return };
    let service = TestService::start_with_backend_lines(
        &base_config(4, &bridge_runtime(&busybox_image())),
        "agent_path = \"pod-network\"\n",
    );
    let online = service.open("online").await;
    let none = service.open("sh").await;
    // The agents' peers: this host's address on the pods' bridge for the bridge sandbox (no
    // port-forward, which ends at the pod's loopback), the loopback for the one without a
    // network (its pod has only that).
    let online_peers = peers_of_agent(&service, &online).await;
    assert!(
        !online_peers.is_empty() && online_peers.iter().all(|p| p != "127.0.0.1"),
        "{online_peers:?}"
    );
    let none_peers = peers_of_agent(&service, &none).await;
    assert!(
        !none_peers.is_empty() && none_peers.iter().all(|p| p == "127.0.0.1"),
        "{none_peers:?}"
    );
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn the_agent_refuses_a_claim_from_inside_the_sandbox() {
    let Some(_cluster) = cluster() else { return };
    let service = TestService::start(&base_config(4, ""));
    let id = service.open("python").await;
    // A sandbox process dials the agent's loopback port and claims with a made-up secret.
    let impostor = r#"
import json, socket, struct
s = socket.create_connection(("127.0.0.1", 7719), timeout=5)
body = json.dumps({"op": "claim", "secret": "ab" * 32}).encode()
s.sendall(struct.pack(">BI", 1, len(body)) + body)
try:
    print("answered" if s.recv(64) else "closed")
except OSError:
    print("closed")
"#;
    let result = python(&service, &id, impostor).await;
    assert_eq!(result["stdout"], "closed\n", "{result}");
    assert_eq!(service.sh(&id, "echo ok").await["stdout"], "ok\n");
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn usage_comes_from_the_kubelet_and_a_restart_takes_the_pods_back() {
    let Some(cluster) = cluster() else { return };
    let mut service = TestService::start(&base_config(4, ""));
    let id = service.open("sh").await;
    // Its timeout outlasts the kubelet's first figures (the policy's default, 20 s, may not).
    let started = service
        .post(&format!("/v1/sessions/{id}/processes"))
        .json(&json!({"command": "sleep 300", "timeout_secs": 60}))
        .send()
        .await
        .unwrap();
    assert!(
        started.status().is_success(),
        "{}",
        started.text().await.unwrap()
    );
    // The kubelet's process counts need cgroup v2 nodes; on cgroup v1 ones (as here) the agent
    // counts the processes of its /proc, asked at most once a second (the count of the open
    // may stand a moment).
    let mut info = service.get_json(&format!("/v1/sessions/{id}")).await;
    for _ in 0..20 {
        if info["process_count"] == idle_processes() + 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        info = service.get_json(&format!("/v1/sessions/{id}")).await;
    }
    assert_eq!(
        info["process_count"],
        idle_processes() + 1,
        "the agent's two and the sleep: {info}"
    );
    // The kubelet's summary is refreshed every 10-15 s.
    let info = service.session_with_usage(&id).await;
    let memory = info["memory_bytes"].as_u64().unwrap();
    assert!(memory > 0 && memory < 128 << 20, "{info}");

    // A command the kernel kills for lack of memory in a living pod is reported so: the
    // agent compares its container cgroup's OOM-kill count before and after.
    let (status, bomb) = service
        .exec(
            &id,
            json!({"command": "tail /dev/zero", "timeout_secs": 30}),
        )
        .await;
    assert_eq!(status, 200, "{bomb}");
    assert_eq!(bomb["oom_killed"], true, "{bomb}");
    let fine = service.sh(&id, "echo fine").await;
    assert_eq!(fine["oom_killed"], false, "{fine}");

    service.crash_and_restart();
    let again = service.sh(&id, "echo back").await;
    assert_eq!(again["stdout"], "back\n");
    let processes = service
        .get_json(&format!("/v1/sessions/{id}/processes"))
        .await;
    assert_eq!(processes["processes"][0]["state"], "running", "{processes}");

    // A pod removed behind the service's back ends its session.
    cluster.kubectl(&[
        "delete",
        "pod",
        "-n",
        TEST_NAMESPACE,
        &format!("sandboxd-{id}"),
        "--grace-period=0",
        "--force",
    ]);
    let ended = service.wait_for_end(&id, Duration::from_secs(30)).await;
    assert_eq!(ended["state"], "ended", "{ended}");
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn a_recipe_runtime_says_what_the_operator_must_do() {
    let Some(_cluster) = cluster() else { return };
    let service = TestService::start(&base_config(4, ""));
    let response = service
        .post("/v1/sessions")
        .json(&json!({"runtime": "recipe"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "runtime_unavailable", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    for words in [
        "does not build recipes",
        "push it to a registry the nodes pull from",
        "runtime's `image`",
    ] {
        assert!(message.contains(words), "{message}");
    }
    assert_eq!(service.sandbox_count(), 0);
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn pausing_a_pod_is_refused_as_unsupported_and_the_session_keeps_running() {
    let Some(_cluster) = cluster() else { return };
    let service = TestService::start(&base_config(4, ""));
    let id = service.open("sh").await;
    let response = service
        .post(&format!("/v1/sessions/{id}/pause"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 501);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unsupported", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("snapshot it"), "{message}");
    let (status, ran) = service.exec(&id, json!({"command": "echo still"})).await;
    assert_eq!((status, ran["stdout"].as_str()), (200, Some("still\n")));
}

/// A namespace of a test's own, deleted with everything in it when the test ends, failing or not.
struct OwnNamespace<'a> {
    cluster: &'a Kubernetes,
    name: String,
}

impl Drop for OwnNamespace<'_> {
    fn drop(&mut self) {
        self.cluster
            .kubectl(&["delete", "namespace", &self.name, "--wait=false"]);
    }
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn a_brand_new_namespace_gets_sessions() {
    let Some(cluster) = cluster() else { return };
    let namespace = OwnNamespace {
        cluster: &cluster,
        name: format!("sandboxd-new-{}", common::random_suffix()),
    };
    assert_eq!(
        cluster.kubectl(&["get", "namespace", &namespace.name, "-o", "name"]),
        "",
        "the namespace does not exist before the service"
    );
    // The service makes the namespace; the cluster's controller manager gives it the `default`
    // service account, without which the API server refuses every pod there.
    let service = TestService::start_in_namespace(&base_config(4, ""), &namespace.name);
    let id = service.open("sh").await;
    assert_eq!(service.sh(&id, "echo here").await["stdout"], "here\n");
    let pod = cluster.kubectl(&[
        "get",
        "pod",
        "-n",
        &namespace.name,
        &format!("sandboxd-{id}"),
        "-o",
        "jsonpath={.spec.serviceAccountName}",
    ]);
    assert_eq!(pod, "default");
}

/// A service account in the suites' namespace whose Role grants what the service needs but
/// `watch` on pods, and a kubeconfig with its token; removed when the test ends.
struct WatchlessAccount<'a> {
    cluster: &'a Kubernetes,
    name: String,
    kubeconfig: tempfile::NamedTempFile,
}

impl<'a> WatchlessAccount<'a> {
    fn new(cluster: &'a Kubernetes) -> WatchlessAccount<'a> {
        let name = format!("sandboxd-watchless-{}", common::random_suffix());
        let manifest = format!(
            r#"{{"apiVersion": "v1", "kind": "List", "items": [
  {{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {{"name": "{name}"}}}},
  {{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {{"name": "{name}"}},
    "rules": [
      {{"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "delete", "get", "list"]}},
      {{"apiGroups": [""], "resources": ["pods/portforward"], "verbs": ["create", "get"]}},
      {{"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["create"]}},
      {{"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["create", "delete", "get", "list"]}}]}},
  {{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {{"name": "{name}"}},
    "roleRef": {{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "{name}"}},
    "subjects": [{{"kind": "ServiceAccount", "name": "{name}", "namespace": "{TEST_NAMESPACE}"}}]}}]}}"#
        );
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), manifest).unwrap();
        let path = file.path().to_str().unwrap();
        cluster.kubectl(&["apply", "-n", TEST_NAMESPACE, "-f", path]);
        let token = cluster.kubectl(&[
            "create",
            "token",
            &name,
            "-n",
            TEST_NAMESPACE,
            "--duration=10m",
        ]);
        let view = |path: &str| {
            cluster.kubectl(&[
                "config",
                "view",
                "--raw",
                "--minify",
                // The CA's file as data, for a kubeconfig of its own.
                "--flatten",
                "-o",
                &format!("jsonpath={{.clusters[0].cluster.{path}}}"),
            ])
        };
        let kubeconfig = tempfile::NamedTempFile::new().unwrap();
        let account = WatchlessAccount {
            cluster,
            name,
            kubeconfig,
        };
        assert!(!token.trim().is_empty(), "a token for {}", account.name);
        std::fs::write(
            account.kubeconfig.path(),
            format!(
                "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"{}\", certificate-authority-data: \"{}\"}}}}]\nusers: [{{name: u, user: {{token: \"{}\"}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\ncurrent-context: x\n",
                view("server"),
                view("certificate-authority-data"),
                token.trim()
            ),
        )
        .unwrap();
        account
    }
}

impl Drop for WatchlessAccount<'_> {
    fn drop(&mut self) {
        self.cluster.kubectl(&[
            "delete",
            "-n",
            TEST_NAMESPACE,
            "serviceaccount,role,rolebinding",
            &self.name,
        ]);
    }
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn credentials_that_may_not_watch_pods_still_open_sessions_and_notice_stops() {
    let Some(cluster) = cluster() else { return };
    let account = WatchlessAccount::new(&cluster);
    let service = TestService::start_logged_with_credentials(
        &base_config(2, ""),
        account.kubeconfig.path().to_str().unwrap(),
    );
    // The starting pod is read again and again instead of watched.
    let id = service.open("sh").await;
    assert_eq!(service.sh(&id, "echo here").await["stdout"], "here\n");
    // Without the watch the service lists every second: a pod removed outside is noticed well
    // before the listing it would make every 30 s with one.
    common::remove_sandbox_outside(&id);
    let info = service.wait_for_end(&id, Duration::from_secs(15)).await;
    assert!(
        info["end_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("removed outside sandboxd"),
        "{info}"
    );
    let log = service.log();
    assert_eq!(
        log.matches("may not watch its pods").count(),
        1,
        "said once: {log}"
    );
}
