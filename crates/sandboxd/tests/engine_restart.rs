//! The Docker engine restarting under a running service. It stops every container on the
//! engine, so it runs alone, after the rest of the suite (scripts/test.sh does that).

mod common;

use common::{base_config, TestService};
use std::process::Command;
use std::time::{Duration, Instant};

/// The pid file of the engine answering on the default socket (dockerd's default, which
/// scripts/host-setup.sh starts it with).
const ENGINE_PID_FILE: &str = "/var/run/docker.pid";

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
    let setup = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/host-setup.sh");
    let started = Command::new("bash").arg(setup).status().unwrap();
    assert!(
        started.success(),
        "host-setup.sh could not start dockerd again"
    );
}

#[tokio::test]
#[ignore = "restarts the Docker engine: run alone, as scripts/test.sh does"]
async fn the_service_survives_an_engine_restart() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    assert_eq!(service.sh(&id, "echo before").await["stdout"], "before\n");

    tokio::task::spawn_blocking(restart_engine).await.unwrap();

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
}
