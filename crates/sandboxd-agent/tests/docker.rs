//! The static agent in the kind of container sandboxd makes: busybox only, uid 61000, no
//! capabilities, read-only root, no network, tini as init, the socket directory mounted
//! read-only. Needs a Docker engine and the busybox image (scripts/test.sh provides both,
//! and exports the static agent as SANDBOXD_AGENT; without it the test builds one).

use sandboxd_agent_proto::{
    run_exec, AgentHub, AgentSecret, ExecRequest, ExecResult, ProtoError, AGENT_SECRET_FILE,
    AGENT_SECRET_LEN,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const SANDBOX_USER: &str = "61000:61000";

/// The static agent: SANDBOXD_AGENT, or built here with the same flags as scripts/build.sh.
fn static_agent() -> PathBuf {
    if let Some(path) = std::env::var_os("SANDBOXD_AGENT") {
        return path.into();
    }
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("static-agent");
    let triple = "x86_64-unknown-linux-gnu";
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "build",
            "--release",
            "-p",
            "sandboxd-agent",
            "--target",
            triple,
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .status()
        .expect("run cargo");
    assert!(status.success(), "static agent build failed");
    target_dir.join(triple).join("release/sandboxd-agent")
}

fn busybox_image() -> String {
    std::env::var("SANDBOXD_TEST_BUSYBOX_IMAGE").unwrap_or_else(|_| "sandboxd/busybox:local".into())
}

/// A running container, removed on drop.
struct Container(String);

impl Container {
    fn start(socket_dir: &Path, agent: &Path) -> Self {
        let name = format!("sandboxd-agent-test-{}", std::process::id());
        let output = Command::new("docker")
            .args([
                "run",
                "--detach",
                "--name",
                &name,
                "--label",
                "org.sandboxd.test=true",
            ])
            .arg("--volume")
            .arg(format!("{}:/.sandboxd:ro", socket_dir.display()))
            .arg("--volume")
            .arg(format!("{}:/.sandboxd-agent:ro", agent.display()))
            .args(["--user", SANDBOX_USER, "--cap-drop", "ALL", "--read-only"])
            .args([
                "--network",
                "none",
                "--init",
                "--memory",
                "64m",
                "--memory-swap",
                "64m",
            ])
            .args([
                "--tmpfs",
                "/workspace:rw,uid=61000,gid=61000",
                "--workdir",
                "/workspace",
            ])
            .args([
                "--env",
                "SANDBOXD_SESSION=hidden",
                "--entrypoint",
                "/.sandboxd-agent",
            ])
            .arg(busybox_image())
            .output()
            .expect("run docker");
        assert!(
            output.status.success(),
            "docker run failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Self(name)
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "--force", "--volumes", &self.0])
            .output();
    }
}

async fn exec(
    hub: &AgentHub,
    argv: &[&str],
    timeout_ms: u64,
    stdin: Option<Vec<u8>>,
) -> Result<ExecResult, ProtoError> {
    let request = ExecRequest {
        argv: argv.iter().map(|arg| arg.to_string()).collect(),
        timeout_ms,
        output_limit: 1 << 20,
        ..ExecRequest::default()
    };
    let connection = hub.acquire(Duration::from_secs(5)).await?;
    run_exec(
        connection,
        &request,
        stdin,
        Duration::from_millis(timeout_ms) + Duration::from_secs(5),
    )
    .await
}

async fn stdout_of(hub: &AgentHub, argv: &[&str]) -> String {
    let result = exec(hub, argv, 10_000, None).await.unwrap();
    assert_eq!(
        result.report.exit_code,
        Some(0),
        "{argv:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    String::from_utf8(result.stdout).unwrap()
}

#[tokio::test]
async fn static_agent_runs_in_a_locked_down_container() {
    let agent = static_agent();
    let socket_dir = tempfile::tempdir().unwrap();
    // Like the service's socket directory when it cannot give it to the sandbox's uid:
    // root-owned, but the sandbox user may traverse it, dial the socket and read the secret.
    std::fs::set_permissions(socket_dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let secret = AgentSecret::from_bytes(&[7; AGENT_SECRET_LEN]);
    let secret_file = socket_dir.path().join(AGENT_SECRET_FILE);
    std::fs::write(&secret_file, secret.expose()).unwrap();
    std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let socket = socket_dir.path().join("agent.sock");
    let hub = AgentHub::bind(&socket, secret).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let _container = Container::start(socket_dir.path(), &agent);
    hub.wait_ready(Duration::from_secs(30))
        .await
        .expect("the agent dials in from the container");

    assert_eq!(stdout_of(&hub, &["id", "-u"]).await, "61000\n");
    assert_eq!(stdout_of(&hub, &["pwd"]).await, "/workspace\n");
    assert_eq!(
        stdout_of(&hub, &["sh", "-c", "echo \"[$SANDBOXD_SESSION]\""]).await,
        "[]\n"
    );
    let capabilities = stdout_of(&hub, &["grep", "CapEff", "/proc/self/status"]).await;
    assert!(
        capabilities.ends_with("0000000000000000\n"),
        "{capabilities}"
    );

    let echoed = exec(
        &hub,
        &["cat"],
        10_000,
        Some(b"through the sandbox".to_vec()),
    )
    .await
    .unwrap();
    assert_eq!(echoed.stdout, b"through the sandbox");

    let read_only = exec(&hub, &["touch", "/etc/x"], 10_000, None)
        .await
        .unwrap();
    assert_ne!(read_only.report.exit_code, Some(0));

    let timed_out = exec(&hub, &["sh", "-c", "sleep 1000 & sleep 1000"], 500, None)
        .await
        .unwrap();
    assert!(timed_out.report.timed_out);
    let processes = stdout_of(&hub, &["ps", "-o", "args"]).await;
    assert!(!processes.contains("sleep 1000"), "{processes}");

    match exec(&hub, &["no-such-program"], 10_000, None).await {
        Err(ProtoError::Agent { code, .. }) => assert_eq!(code, "spawn_failed"),
        other => panic!("expected a spawn failure, got {other:?}"),
    }

    // Twice the memory limit in one shell variable: the OOM killer takes the shell.
    let hog = exec(
        &hub,
        &["sh", "-c", "x=$(head -c 134217728 /dev/zero | tr '\\0' a)"],
        30_000,
        None,
    )
    .await
    .unwrap();
    assert_eq!(hog.report.signal, Some(9), "{:?}", hog.report);
    assert!(hog.report.oom_killed, "{:?}", hog.report);
    // And the agent survived it.
    assert_eq!(
        stdout_of(&hub, &["echo", "still here"]).await,
        "still here\n"
    );
}
