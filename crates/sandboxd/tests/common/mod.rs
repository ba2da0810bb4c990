//! A real sandboxd service for integration tests: the built binary, a real Docker engine,
//! real HTTP over loopback. Each service has its own state directory and instance id, and on
//! drop (also when a test fails) it is killed and every container it made is removed by label.
//!
//! With `SANDBOXD_TEST_KUBECONFIG` set (scripts/k8s-up.sh prints it), the services run their
//! sandboxes as pods on that cluster instead ([`Kubernetes`]), and their pods are removed by
//! label the same way.

#![allow(dead_code)] // each test binary uses a different part of the harness

mod calls;
#[allow(unused_imports)] // each test binary uses a different part
pub use calls::call_at;
mod kubernetes;
#[path = "../../../sandboxd-egress/tests/support/ledger.rs"]
pub mod ledger;
mod running;
mod skip;
#[allow(unused_imports)] // each test binary uses a different part
pub use kubernetes::{
    agent_peers, cluster, kubernetes, Kubernetes, TEST_NAMESPACE, TEST_STORAGE_CLASS,
};
#[allow(unused_imports)] // each test binary uses a different part
pub use skip::{in_ci, skip_or_fail};

use running::{spawn_service, start_in_process, Running};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

pub const TOKEN: &str = "test-token-0123456789abcdef";

pub fn busybox_image() -> String {
    std::env::var("SANDBOXD_TEST_BUSYBOX_IMAGE").unwrap_or_else(|_| "sandboxd/busybox:local".into())
}

pub fn python_image() -> String {
    std::env::var("SANDBOXD_TEST_PYTHON_IMAGE")
        .unwrap_or_else(|_| "sandboxd/python:3.11-bookworm".into())
}

/// The config every test service starts from; `extra` is appended (more runtimes, policy).
pub fn base_config(max_sessions: u32, extra: &str) -> String {
    format!(
        r#"
token = "{TOKEN}"
default_runtime = "sh"
max_sessions = {max_sessions}
mem_limit = "128m"
cpus = 0.5
pids_limit = 64
tmpfs_size = "16m"
isolation = "{isolation}"

[runtimes.sh]
image = "{busybox}"

[runtimes.python]
image = "{python}"
mem_limit = "256m"
interpreter = ["python3"]

[runtimes.ghost]
image = "sandboxd/does-not-exist:never"

[runtimes.recipe]
runtime = "python-datascience"

# A stand-in for the catalogue's recipe, so that no test builds it by accident: its base is
# missing, so opening a session fails at once with runtime_unavailable.
[recipes.python-datascience]
base = "sandboxd/does-not-exist:never"

[policy]
default_timeout_secs = 20
max_timeout_secs = 60
max_output_bytes = "64k"
{extra}
"#,
        busybox = busybox_image(),
        python = python_image(),
        // scripts/test.sh's gvisor step runs the shared suites with every runtime on gVisor.
        isolation = std::env::var("SANDBOXD_TEST_ISOLATION").unwrap_or_else(|_| "runc".into()),
    )
}

/// A new tenant token and its config lines, from `sandboxd token --tenant NAME`.
pub fn tenant_token(name: &str) -> (String, String) {
    let output = std::process::Command::new(sandboxd_bin())
        .args(["token", "--tenant", name])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let token = text
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap()
        .to_string();
    let config: String = text
        .lines()
        .filter(|l| l.starts_with("[tenants.") || l.starts_with("token_sha256"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        !config.contains(&token),
        "the config lines hold only the hash"
    );
    (token, config)
}

/// Whether the suites run with every runtime on gVisor (scripts/test.sh's gvisor step).
pub fn on_gvisor() -> bool {
    std::env::var("SANDBOXD_TEST_ISOLATION").is_ok_and(|tier| tier == "gvisor")
}

/// Whether the suites' sandboxes are pods on a cluster rather than Docker containers.
pub fn on_kubernetes() -> bool {
    kubernetes().is_some()
}

/// Whether a check that only makes sense with Docker's containers is run: on Kubernetes the
/// test says it leaves it out, which and why, in a `NOT HERE:` line that scripts/test.sh counts
/// apart from skips (nothing is missing: the check is not this backend's).
pub fn docker_only(check: &str, why: &str) -> bool {
    if !on_kubernetes() {
        return true;
    }
    skip::report("NOT HERE", &format!("on Kubernetes: {check}: {why}"));
    false
}

/// The processes of a sandbox running no command: docker-init and the agent in a container;
/// in a pod the agent is PID 1 and forks once (PID 1 only reaps, its child serves).
pub fn idle_processes() -> u64 {
    2
}

/// Words of what a missing image's error tells the operator to do, on each backend.
pub fn image_missing_remedy() -> &'static str {
    if on_kubernetes() {
        "push it to a registry the nodes pull from"
    } else {
        "build-images"
    }
}

/// Where the agent is inside a sandbox: Docker copies it to the root, a pod's init container
/// puts it in a volume of its own.
pub fn agent_path() -> &'static str {
    if on_kubernetes() {
        "/.sandboxd/sandboxd-agent"
    } else {
        "/.sandboxd-agent"
    }
}

/// The agent's program name, as `pidof` finds it.
pub fn agent_program() -> &'static str {
    agent_path().rsplit('/').next().unwrap()
}

pub struct TestService {
    pub url: String,
    pub instance_id: String,
    pub state_dir: tempfile::TempDir,
    running: Running,
    pub client: reqwest::Client,
    /// The Docker engine's socket the service is given, when not the default.
    engine_socket: Option<PathBuf>,
}

/// The static agent: `SANDBOXD_AGENT`, or where scripts/build.sh puts the debug build.
pub fn agent_binary() -> PathBuf {
    std::env::var_os("SANDBOXD_AGENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../target/x86_64-unknown-linux-gnu/debug/sandboxd-agent"
            ))
        })
}

pub fn sandboxd_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sandboxd"))
}

/// The `name` of each item of a listing's array (`/v1/volumes`' `volumes`, ...).
pub fn names(items: &serde_json::Value) -> Vec<&str> {
    items
        .as_array()
        .expect("a listing's array")
        .iter()
        .map(|item| item["name"].as_str().expect("a name"))
        .collect()
}

pub fn random_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{}-{nanos:x}", std::process::id())
}

/// Notes an instance and the egress network state it may make, for scripts/test.sh's check
/// that nothing of them is left.
fn record_instance(instance_id: &str) {
    let names = sandboxd_docker::egress::EgressNames::for_instance(instance_id);
    ledger::record_made("instance", instance_id);
    ledger::record_made("network", &names.network);
    ledger::record_made("chain", &names.chain);
}

/// Where a service started with [`TestService::start_logged`] writes its output.
const LOG_FILE: &str = "service.log";

impl TestService {
    /// As [`start`](TestService::start), keeping everything the service prints (stdout, and
    /// stderr at debug level) in a file of its state directory, for [`log`](TestService::log).
    pub fn start_logged(config: &str) -> TestService {
        Self::start_in(config, true, None)
    }

    /// As [`start`](TestService::start), reaching the Docker engine at `socket`, after a
    /// restart too.
    pub fn start_with_engine_at(config: &str, socket: &std::path::Path) -> TestService {
        Self::start_in(config, false, Some(socket.to_path_buf()))
    }

    /// What a service started with [`start_logged`](TestService::start_logged) printed.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.state_dir.path().join(LOG_FILE)).unwrap_or_default()
    }

    pub fn start(config: &str) -> TestService {
        Self::start_in(config, false, None)
    }

    /// As [`start`](TestService::start), the service assembled inside the test process by the
    /// function `sandboxd serve` calls, with the options its flags would give. It cannot be
    /// crashed ([`crash_and_restart`](TestService::crash_and_restart)) nor has a process id.
    pub fn start_in_process(config: &str) -> TestService {
        let (state_dir, instance_id) = Self::prepare(config, false);
        let (service, url) = start_in_process(state_dir.path(), None);
        Self::serving(
            state_dir,
            instance_id,
            url,
            Running::InProcess(service),
            None,
        )
    }

    fn start_in(config: &str, logged: bool, engine_socket: Option<PathBuf>) -> TestService {
        let (state_dir, instance_id) = Self::prepare(config, logged);
        let (child, url) = spawn_service(state_dir.path(), engine_socket.as_deref());
        let running = Running::Process(child);
        Self::serving(state_dir, instance_id, url, running, engine_socket)
    }

    /// As [`start`](TestService::start), with its pods (on a cluster) in `namespace` rather
    /// than the suites' own.
    pub fn start_in_namespace(config: &str, namespace: &str) -> TestService {
        let (state_dir, instance_id) = Self::prepare_in(config, false, namespace);
        let (child, url) = spawn_service(state_dir.path(), None);
        Self::serving(state_dir, instance_id, url, Running::Process(child), None)
    }

    /// As [`start_logged`](TestService::start_logged) on the cluster, its Kubernetes client
    /// with the credentials of `kubeconfig` rather than the suites' own.
    pub fn start_logged_with_credentials(config: &str, kubeconfig: &str) -> TestService {
        let backend = kubernetes::backend_table(kubeconfig, TEST_NAMESPACE);
        let (state_dir, instance_id) = Self::prepare_with(config, true, &backend);
        let (child, url) = spawn_service(state_dir.path(), None);
        Self::serving(state_dir, instance_id, url, Running::Process(child), None)
    }

    /// As [`start`](TestService::start) on the cluster, with these lines added to its
    /// `[backend]` table.
    pub fn start_with_backend_lines(config: &str, lines: &str) -> TestService {
        let cluster = kubernetes().expect("a cluster");
        let backend = kubernetes::backend_table(&cluster.kubeconfig, TEST_NAMESPACE) + lines;
        let (state_dir, instance_id) = Self::prepare_with(config, false, &backend);
        let (child, url) = spawn_service(state_dir.path(), None);
        Self::serving(state_dir, instance_id, url, Running::Process(child), None)
    }

    /// A new state directory with its instance id and config.
    fn prepare(config: &str, logged: bool) -> (tempfile::TempDir, String) {
        Self::prepare_in(config, logged, TEST_NAMESPACE)
    }

    fn prepare_in(config: &str, logged: bool, namespace: &str) -> (tempfile::TempDir, String) {
        let backend = kubernetes()
            .map(|k| kubernetes::backend_table(&k.kubeconfig, namespace))
            .unwrap_or_default();
        Self::prepare_with(config, logged, &backend)
    }

    fn prepare_with(config: &str, logged: bool, backend: &str) -> (tempfile::TempDir, String) {
        // Short paths: the agent socket path must fit a unix socket address.
        let state_dir = tempfile::Builder::new()
            .prefix("sbd")
            .tempdir_in("/tmp")
            .unwrap();
        let instance_id = format!("test-{}", random_suffix());
        std::fs::write(state_dir.path().join("instance-id"), &instance_id).unwrap();
        record_instance(&instance_id);
        if logged {
            std::fs::write(state_dir.path().join(LOG_FILE), "").unwrap();
        }
        let config_path = state_dir.path().join("config.toml");
        std::fs::write(&config_path, format!("{config}{backend}")).unwrap();
        (state_dir, instance_id)
    }

    fn serving(
        state_dir: tempfile::TempDir,
        instance_id: String,
        url: String,
        running: Running,
        engine_socket: Option<PathBuf>,
    ) -> TestService {
        TestService {
            engine_socket,
            url,
            instance_id,
            state_dir,
            running,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .unwrap(),
        }
    }

    /// Kills the service with SIGKILL (no chance to clean up) and starts it again on the same
    /// state directory, as after a crash.
    pub fn crash_and_restart(&mut self) {
        self.crash_and_restart_with(|| {});
    }

    /// As [`crash_and_restart`], doing `while_down` between the crash and the start.
    pub fn crash_and_restart_with(&mut self, while_down: impl FnOnce()) {
        let child = self.child();
        child.kill().unwrap();
        child.wait().unwrap();
        while_down();
        let (child, url) = spawn_service(self.state_dir.path(), self.engine_socket.as_deref());
        self.running = Running::Process(child);
        self.url = url;
    }

    /// The service process's id, e.g. to read its memory use in `/proc/PID/status`.
    pub fn pid(&self) -> u32 {
        match &self.running {
            Running::Process(child) => child.id(),
            Running::InProcess(_) => panic!("an in-process service has no process of its own"),
        }
    }

    /// Whether the service is still running (it may have crashed).
    pub fn is_running(&mut self) -> bool {
        match &mut self.running {
            Running::Process(child) => matches!(child.try_wait(), Ok(None)),
            Running::InProcess(service) => service.is_running(),
        }
    }

    fn child(&mut self) -> &mut std::process::Child {
        match &mut self.running {
            Running::Process(child) => child,
            Running::InProcess(_) => panic!("an in-process service cannot be crashed"),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path)).bearer_auth(TOKEN)
    }

    /// GETs a path with the token and returns the JSON body, whatever the status.
    pub async fn get_json(&self, path: &str) -> serde_json::Value {
        self.get(path).send().await.unwrap().json().await.unwrap()
    }

    /// Polls a session until it has ended or `within` has passed; returns its last record.
    pub async fn wait_for_end(&self, id: &str, within: Duration) -> serde_json::Value {
        let deadline = std::time::Instant::now() + within;
        loop {
            let info = self.get_json(&format!("/v1/sessions/{id}")).await;
            if info["state"] == "ended" || std::time::Instant::now() > deadline {
                return info;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.post(self.url(path)).bearer_auth(TOKEN)
    }

    pub fn delete(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.delete(self.url(path)).bearer_auth(TOKEN)
    }

    /// Kills every process in the session; fails the test unless all of them (at least
    /// `at_least`) are gone. Returns how many were killed.
    pub async fn kill_all_processes(&self, id: &str, at_least: u64) -> u64 {
        let response = self
            .delete(&format!("/v1/sessions/{id}/processes"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let outcome: serde_json::Value = response.json().await.unwrap();
        assert_eq!(outcome["remaining"], 0, "{outcome}");
        let killed = outcome["killed"].as_u64().unwrap();
        assert!(killed >= at_least, "{outcome}");
        killed
    }

    pub fn put(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.put(self.url(path)).bearer_auth(TOKEN)
    }

    /// Opens a session and returns its id, failing the test with the service's message.
    pub async fn open(&self, runtime: &str) -> String {
        let response = self
            .post("/v1/sessions")
            .json(&serde_json::json!({"runtime": runtime}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(status, 201, "create session failed: {body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Runs a shell command and returns the result's JSON.
    pub async fn exec(&self, id: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
        let response = self
            .post(&format!("/v1/sessions/{id}/exec"))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    /// `GET /healthz`, which needs no token.
    pub async fn healthz(&self) -> reqwest::Response {
        self.client.get(self.url("/healthz")).send().await.unwrap()
    }

    pub async fn sh(&self, id: &str, command: &str) -> serde_json::Value {
        let (status, body) = self.exec(id, serde_json::json!({"command": command})).await;
        assert_eq!(status, 200, "exec {command:?} failed: {body}");
        body
    }

    /// The session ids of this service instance's sandboxes (containers, or pods on a cluster).
    pub fn sandbox_session_ids(&self) -> Vec<String> {
        if let Some(kubernetes) = kubernetes() {
            return kubernetes
                .pods(&self.instance_id)
                .iter()
                .map(|pod| pod.trim_start_matches("sandboxd-").to_string())
                .collect();
        }
        self.containers()
            .iter()
            .map(|c| {
                c["Config"]["Labels"]["org.sandboxd.session"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    /// How many sandboxes of this service instance exist (containers, or pods on a cluster).
    pub fn sandbox_count(&self) -> usize {
        self.sandbox_session_ids().len()
    }

    /// A session's record once its platform reports its memory use: Docker reads the cgroup
    /// at once, the kubelet's summary has a new pod only after its next refresh (10-15 s).
    pub async fn session_with_usage(&self, id: &str) -> serde_json::Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(45);
        loop {
            let info = self.get_json(&format!("/v1/sessions/{id}")).await;
            let reported = info["memory_bytes"].as_u64().unwrap_or(0) > 0;
            if reported || !on_kubernetes() || std::time::Instant::now() > deadline {
                return info;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The containers of this service instance, as `docker inspect` shows them.
    pub fn containers(&self) -> Vec<serde_json::Value> {
        let ids = docker(&[
            "ps",
            "-aq",
            "--filter",
            &format!("label=org.sandboxd.instance={}", self.instance_id),
        ]);
        ids.lines()
            .filter(|l| !l.is_empty())
            .filter_map(|id| {
                // Removed between the listing and now (the service removes orphans beside
                // serving): inspect finds nothing.
                let json: serde_json::Value =
                    serde_json::from_str(&docker(&["inspect", id])).unwrap_or_default();
                json.get(0).filter(|c| c.is_object()).cloned()
            })
            .collect()
    }
}

/// Starts a sandbox labelled as service instance `instance_id`'s that no session owns, as a
/// crashed service may leave behind.
pub fn start_unowned_sandbox(instance_id: &str) {
    if let Some(kubernetes) = kubernetes() {
        kubernetes.start_unowned_pod(instance_id);
        return;
    }
    docker(&[
        "run",
        "-d",
        "--label",
        &format!("org.sandboxd.instance={instance_id}"),
        "--label",
        "org.sandboxd.session=unknown",
        "--label",
        "org.sandboxd.managed=true",
        &busybox_image(),
        "sleep",
        "1000",
    ]);
}

/// Removes a session's sandbox behind the service's back: its container, or its pod.
pub fn remove_sandbox_outside(session_id: &str) {
    if let Some(kubernetes) = kubernetes() {
        let pod = format!("sandboxd-{session_id}");
        kubernetes.kubectl(&[
            "delete",
            "pod",
            "-n",
            TEST_NAMESPACE,
            &pod,
            "--grace-period=0",
            "--force",
            "--wait=false",
        ]);
        return;
    }
    let container = docker(&[
        "ps",
        "-q",
        "--filter",
        &format!("label=org.sandboxd.session={session_id}"),
    ]);
    docker(&["rm", "-f", container.trim()]);
}

/// `sandboxd serve --remove-network-state` for a service instance whose state directory may
/// be gone (a scratch one holding its id stands in): whether it succeeded, and what it printed.
pub fn remove_network_state(instance_id: &str) -> (bool, String) {
    let scratch = tempfile::Builder::new()
        .prefix("sbd")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(scratch.path().join("instance-id"), instance_id).unwrap();
    let output = Command::new(sandboxd_bin())
        .arg("serve")
        .arg("--state-dir")
        .arg(scratch.path())
        .arg("--remove-network-state")
        .output()
        .expect("run sandboxd serve --remove-network-state");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

pub fn docker(args: &[&str]) -> String {
    let output = Command::new("docker")
        .args(args)
        .output()
        .expect("run docker");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

impl Drop for TestService {
    fn drop(&mut self) {
        match &mut self.running {
            Running::Process(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            Running::InProcess(service) => service.stop(),
        }
        if let Some(kubernetes) = kubernetes() {
            kubernetes.remove_instance(&self.instance_id);
            return;
        }
        let ids = docker(&[
            "ps",
            "-aq",
            "--filter",
            &format!("label=org.sandboxd.instance={}", self.instance_id),
        ]);
        let ids: Vec<&str> = ids.lines().filter(|l| !l.is_empty()).collect();
        if !ids.is_empty() {
            let mut args = vec!["rm", "-f"];
            args.extend(ids);
            docker(&args);
        }
        // The working directories' volumes outlive containers removed this way.
        let volumes = docker(&[
            "volume",
            "ls",
            "-q",
            "--filter",
            &format!("label=org.sandboxd.instance={}", self.instance_id),
        ]);
        let volumes: Vec<&str> = volumes.lines().filter(|l| !l.is_empty()).collect();
        if !volumes.is_empty() {
            let mut args = vec!["volume", "rm", "-f"];
            args.extend(volumes);
            docker(&args);
        }
    }
}
