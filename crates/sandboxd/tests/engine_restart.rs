//! The Docker engine restarting under a running service. A restart stops every container on
//! its engine, so the test runs on an engine of its own (scripts/test-engine.sh: the project's
//! dockerd with its own roots, socket and pid file), started for it and removed after it,
//! failing or not: no other service's containers on this host stop with it. It still runs
//! alone, after the rest of the suite (scripts/test.sh does that), as a restart's load would
//! weigh on timed checks. A gVisor session paused to disk is no running container: it survives
//! the restart, its processes restored at the resume.

mod common;

use common::{base_config, docker, TestService};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const TEST_ENGINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/test-engine.sh");

/// The pid file of the tests' own engine (scripts/test-engine.sh).
const ENGINE_PID_FILE: &str = "/run/sandboxd-test-engine/docker.pid";

/// The tests' own engine, started with the busybox image in it; stopped and its data removed
/// when this goes.
struct OwnEngine {
    socket: PathBuf,
}

impl OwnEngine {
    fn start() -> OwnEngine {
        let output = Command::new("bash")
            .args([TEST_ENGINE, "start", &common::busybox_image()])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "scripts/test-engine.sh could not start an engine: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let socket = String::from_utf8_lossy(&output.stdout).trim().to_string();
        OwnEngine {
            socket: socket.into(),
        }
    }

    /// What `docker` needs to talk to it.
    fn host(&self) -> String {
        format!("unix://{}", self.socket.display())
    }
}

impl Drop for OwnEngine {
    fn drop(&mut self) {
        let _ = Command::new("bash").args([TEST_ENGINE, "stop"]).status();
    }
}

/// A container on the project's engine, standing for another service's sandbox there: it must
/// run on through the restart of the tests' own engine, and its network, the host's `docker0`,
/// must stay the same interface. Removed when this goes.
struct Bystander {
    id: String,
    bridge: Option<String>,
}

/// The interface index of the project engine's bridge.
fn docker0_index() -> Option<String> {
    std::fs::read_to_string("/sys/class/net/docker0/ifindex").ok()
}

impl Bystander {
    fn start() -> Bystander {
        let label = format!(
            "org.sandboxd.test=engine-restart-{}",
            common::random_suffix()
        );
        let image = common::busybox_image();
        let id = docker(&["run", "-d", "--label", &label, &image, "sleep", "600"]);
        let id = id.trim().to_string();
        assert!(
            !id.is_empty(),
            "cannot start a container on the project's engine"
        );
        Bystander {
            id,
            bridge: docker0_index(),
        }
    }

    fn assert_untouched(&self) {
        let running = docker(&["inspect", "-f", "{{.State.Running}}", &self.id]);
        assert_eq!(
            running.trim(),
            "true",
            "a container on the project's engine stopped with the tests' own"
        );
        assert!(self.bridge.is_some(), "the project's engine has no docker0");
        assert_eq!(
            docker0_index(),
            self.bridge,
            "the host's docker0 was removed or made again"
        );
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        docker(&["rm", "-f", &self.id]);
    }
}

/// The engine the service uses, by the pid it wrote when it started: only that engine is
/// stopped, never another one on the machine.
fn engine_pid() -> libc::pid_t {
    let text = std::fs::read_to_string(ENGINE_PID_FILE)
        .unwrap_or_else(|e| panic!("cannot read {ENGINE_PID_FILE}: {e}"));
    let pid: libc::pid_t = text.trim().parse().expect("a pid in the engine's pid file");
    let program = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    assert_eq!(
        program.trim(),
        "dockerd",
        "{ENGINE_PID_FILE} names pid {pid}, which is not a running dockerd"
    );
    pid
}

fn is_alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn restart_engine() {
    let pid = engine_pid();
    // SAFETY: SIGTERM to the one process checked above.
    let stopped = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(stopped, 0, "cannot stop dockerd {pid}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while is_alive(pid) {
        assert!(Instant::now() < deadline, "dockerd {pid} did not stop");
        std::thread::sleep(Duration::from_millis(200));
    }
    let started = Command::new("bash")
        .args([TEST_ENGINE, "start"])
        .status()
        .unwrap();
    assert!(
        started.success(),
        "scripts/test-engine.sh could not start dockerd again"
    );
}

/// A counter whose state is only in the shell's memory, appended to a file every 0.1 s.
const COUNTER: &str =
    "i=0; while true; do echo $i >> /workspace/count; i=$((i+1)); sleep 0.1; done";

/// The lines of the counter's file, checked to be 0, 1, 2, ... (no restart, no gap).
async fn counted(service: &TestService, id: &str) -> usize {
    let text = service.sh(id, "cat /workspace/count").await["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    let numbers: Vec<usize> = text.lines().map(|l| l.parse().unwrap()).collect();
    for (expected, got) in numbers.iter().enumerate() {
        assert_eq!(
            *got, expected,
            "the counter restarted or skipped: {numbers:?}"
        );
    }
    numbers.len()
}

/// A gVisor session counting in memory, paused to disk; `None` where the engine's runsc does
/// not restore from disk (host-setup registers the wrapper that does).
async fn paused_to_disk(service: &TestService, engine: &OwnEngine) -> Option<String> {
    let runtimes = docker(&[
        "-H",
        &engine.host(),
        "info",
        "--format",
        "{{json .Runtimes}}",
    ]);
    if !runtimes.contains("runsc-sandboxd") {
        common::skip_or_fail("the engine's runsc is not scripts/runsc-sandboxd: no pause to disk to take across the restart");
        return None;
    }
    let id = service.open("sh-gvisor").await;
    let process = service
        .post(&format!("/v1/sessions/{id}/processes"))
        .json(&serde_json::json!({"command": COUNTER}))
        .send()
        .await
        .unwrap();
    assert_eq!(process.status(), 201);
    while counted(service, &id).await < 5 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let paused: serde_json::Value = service
        .post(&format!("/v1/sessions/{id}/pause"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(paused["paused_memory"], "disk", "{paused}");
    Some(id)
}

#[tokio::test]
#[ignore = "restarts the Docker engine: run alone, as scripts/test.sh does"]
async fn the_service_survives_an_engine_restart() {
    let gvisor = format!(
        "[runtimes.sh-gvisor]\nimage = \"{}\"\nisolation = \"gvisor\"\n",
        common::busybox_image()
    );
    // Started before the tests' own engine, whose start must leave the host's bridge alone.
    let bystander = Bystander::start();
    let engine = OwnEngine::start();
    let service = TestService::start_with_engine_at(&base_config(3, &gvisor), &engine.socket);
    let id = service.open("sh").await;
    assert_eq!(service.sh(&id, "echo before").await["stdout"], "before\n");
    let on_disk = paused_to_disk(&service, &engine).await;

    tokio::task::spawn_blocking(restart_engine).await.unwrap();
    bystander.assert_untouched();

    let health = service.healthz().await;
    assert_eq!(health.status(), 200, "the service kept serving");
    let info = service.wait_for_end(&id, Duration::from_secs(20)).await;
    assert_eq!(
        info["state"], "ended",
        "the session whose sandbox died is reported: {info}"
    );
    assert!(
        info["end_reason"]
            .as_str()
            .unwrap()
            .contains("Docker engine restarted"),
        "{info}"
    );

    let fresh = service.open("sh").await;
    assert_eq!(
        service.sh(&fresh, "echo after").await["stdout"],
        "after\n",
        "new sessions work"
    );

    if let Some(paused) = on_disk {
        let info = service.get_json(&format!("/v1/sessions/{paused}")).await;
        assert_eq!(
            info["paused_memory"], "disk",
            "still paused to disk: {info}"
        );
        // The operation resumes it: the counter goes on from where it was.
        let before = counted(&service, &paused).await;
        let deadline = Instant::now() + Duration::from_secs(60);
        while counted(&service, &paused).await <= before {
            assert!(Instant::now() < deadline, "the counter stayed at {before}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
