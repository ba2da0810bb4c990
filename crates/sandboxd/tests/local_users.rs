//! Other users of the host against the service's state: they cannot list the sessions, read
//! the database or dial an agent socket, and a process that can dial one (root here) but does
//! not hold the sandbox's secret is never taken for its agent. Nor can they connect to a bridge
//! or egress sandbox at its own address, which would pass by the port proxy's token.

mod common;

#[path = "../../sandboxd-egress/tests/support/testnet.rs"]
mod testnet;

mod egress_world;

// What testnet notes its namespaces in.
use common::ledger;

use common::{base_config, TestService};
use egress_world::{python_open, EgressCleanup};
use serde_json::json;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const NOBODY: u32 = 65534;
/// The sandbox's uid: on the host it must get no further than any other user.
const SANDBOX_UID: u32 = 61000;

/// Runs `argv` as `uid` (its own group, no supplementary groups); returns whether it
/// succeeded and what it printed.
fn as_user(uid: u32, argv: &[&str]) -> (bool, String) {
    let output = Command::new("setpriv")
        .arg(format!("--reuid={uid}"))
        .arg(format!("--regid={uid}"))
        .arg("--clear-groups")
        .args(argv)
        .output()
        .expect("run setpriv (util-linux)");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

/// Dials a unix socket with perl (perl-base is always on Debian), as `uid`.
fn dial_as(uid: u32, socket: &Path) -> (bool, String) {
    let script = "use Socket; socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
                  connect($s, pack_sockaddr_un($ARGV[0])) or die \"connect: $!\\n\"; print \"connected\\n\"";
    as_user(uid, &["perl", "-e", script, &socket.display().to_string()])
}

/// Everything a local user went for in the finding; each attempt must be refused.
fn assert_out_of_reach(state: &Path, session: &str) {
    let db = state.join("sandboxd.db");
    let socket = state.join("sandboxes").join(session).join("agent.sock");
    for uid in [NOBODY, SANDBOX_UID] {
        let attempts: [(&str, (bool, String)); 5] = [
            (
                "list the state dir",
                as_user(uid, &["ls", &state.display().to_string()]),
            ),
            (
                "list the sessions",
                as_user(uid, &["ls", &state.join("sandboxes").display().to_string()]),
            ),
            (
                "read the database",
                as_user(uid, &["head", "-c", "16", &db.display().to_string()]),
            ),
            (
                "read the database's WAL",
                as_user(uid, &["head", "-c", "16", &format!("{}-wal", db.display())]),
            ),
            ("dial the agent socket", dial_as(uid, &socket)),
        ];
        for (what, (succeeded, output)) in attempts {
            assert!(!succeeded, "uid {uid} could {what}: {output}");
            assert!(
                output.contains("Permission denied"),
                "uid {uid}, {what}: {output}"
            );
        }
    }
}

fn mode_and_owner(path: &Path) -> (u32, u32) {
    let meta =
        std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (meta.mode() & 0o7777, meta.uid())
}

/// The modes the service must leave, whatever it found at start.
fn assert_private(state: &Path, session: &str) {
    let sandbox_dir = state.join("sandboxes").join(session);
    let expected: Vec<(PathBuf, (u32, u32))> = vec![
        (state.to_path_buf(), (0o700, 0)),
        (state.join("sandboxes"), (0o700, 0)),
        (state.join("agent"), (0o700, 0)),
        (state.join("sandboxes/.agent-key"), (0o600, 0)),
        (state.join("sandboxd.db"), (0o600, 0)),
        (state.join("sandboxd.db-wal"), (0o600, 0)),
        (state.join("sandboxd.db-shm"), (0o600, 0)),
        (sandbox_dir.clone(), (0o700, SANDBOX_UID)),
        (sandbox_dir.join("agent.sock"), (0o600, SANDBOX_UID)),
        (sandbox_dir.join("agent-wake"), (0o600, SANDBOX_UID)),
    ];
    for (path, want) in expected {
        assert_eq!(mode_and_owner(&path), want, "{}", path.display());
    }
    // The agent read its secret at start; the file went before any command could run.
    let mut left: Vec<String> = std::fs::read_dir(&sandbox_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["agent-wake", "agent.sock"],
        "{}",
        sandbox_dir.display()
    );
}

/// What the service's earlier versions left: readable state, a socket anyone could dial.
fn loosen_as_before(state: &Path, session: &str) {
    let chmod = |path: PathBuf, mode: u32| {
        if path.exists() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    };
    chmod(state.to_path_buf(), 0o711);
    chmod(state.join("sandboxes"), 0o755);
    chmod(state.join("agent"), 0o755);
    for file in ["sandboxd.db", "sandboxd.db-wal", "sandboxd.db-shm"] {
        chmod(state.join(file), 0o644);
    }
    let sandbox_dir = state.join("sandboxes").join(session);
    std::os::unix::fs::chown(&sandbox_dir, Some(0), Some(0)).unwrap();
    chmod(sandbox_dir.clone(), 0o755);
    chmod(sandbox_dir.join("agent.sock"), 0o666);
}

#[tokio::test]
async fn other_local_users_cannot_reach_the_state_or_the_agent_sockets() {
    let mut service = TestService::start(&base_config(2, ""));
    let state = service.state_dir.path().to_path_buf();
    let id = service.open("sh").await;
    assert_eq!(service.sh(&id, "echo before").await["stdout"], "before\n");
    assert_private(&state, &id);
    assert_out_of_reach(&state, &id);

    // Inside the sandbox the secret is nowhere: not in the socket directory, not in any
    // environment a sandbox process can read (PID 1 keeps its own).
    let inside = service
        .sh(
            &id,
            "ls -a /.sandboxd; cat /.sandboxd/agent-secret 2>&1; \
             cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -cE '[0-9a-f]{64}'",
        )
        .await;
    let stdout = inside["stdout"].as_str().unwrap();
    assert!(stdout.contains("agent.sock"), "{inside}");
    assert!(stdout.contains("No such file"), "{inside}");
    assert!(stdout.ends_with("0\n"), "{inside}");

    // A restart tightens what an earlier version left loose, and adopts the session: its
    // agent still proves the secret, derived again from the service key.
    service.crash_and_restart_with(|| loosen_as_before(&state, &id));
    let after = service.sh(&id, "echo after").await;
    assert_eq!(after["stdout"], "after\n", "{after}");
    assert_private(&state, &id);
    assert_out_of_reach(&state, &id);
}

/// Writes one JSON frame as the protocol frames it: kind 1, big-endian length, payload.
fn write_json_frame(stream: &mut UnixStream, message: &serde_json::Value) {
    let payload = serde_json::to_vec(message).unwrap();
    let mut frame = vec![1u8];
    frame.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(&payload);
    stream.write_all(&frame).unwrap();
}

#[tokio::test]
async fn a_dialer_without_the_secret_is_refused_and_execs_stay_with_the_real_agent() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let socket = service
        .state_dir
        .path()
        .join("sandboxes")
        .join(&id)
        .join("agent.sock");
    // Root can dial the socket; what it lacks is the secret. As many impostors as the hub
    // would park, saying hello as the agent did before secrets, or with a made-up one.
    let mut impostors: Vec<UnixStream> = (0..16)
        .map(|i| {
            let mut stream = UnixStream::connect(&socket).expect("root reaches the socket");
            let hello = match i % 3 {
                0 => json!({"type": "hello", "version": 1, "pid": 1}),
                1 => json!({"type": "hello", "version": 2, "pid": 1}),
                _ => json!({"type": "hello", "version": 2, "pid": 1, "secret": "ab".repeat(32)}),
            };
            write_json_frame(&mut stream, &hello);
            stream
        })
        .collect();

    for i in 0..8 {
        let (status, body) = service
            .exec(
                &id,
                json!({"argv": ["sh", "-c", "cat; echo \" $N\""], "stdin": format!("real {i}"),
                       "env": {"N": format!("n{i}")}}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["stdout"], format!("real {i} n{i}\n"), "{body}");
    }
    // The hub closed every impostor without sending it a byte: no argv, env or stdin.
    for impostor in &mut impostors {
        impostor
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let mut received = Vec::new();
        let read = impostor.read_to_end(&mut received);
        assert!(read.is_ok(), "the hub did not close an impostor: {read:?}");
        assert!(received.is_empty(), "an impostor received {received:?}");
    }
}

/// Connects to ADDRESS:PORT with perl as `uid`, sends an HTTP request and prints the answer's
/// first line (`answered: ...`), or dies with the error; at most 20 s, whatever the firewall
/// does with the packets.
fn http_as(uid: u32, address: &str, port: u16) -> (bool, String) {
    let script = "use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
                  connect($s, pack_sockaddr_in($ARGV[1], inet_aton($ARGV[0]))) or die \"connect: $!\\n\"; \
                  syswrite($s, \"GET / HTTP/1.0\\r\\n\\r\\n\"); my $line = <$s>; print \"answered: $line\"";
    let port = port.to_string();
    as_user(
        uid,
        &["timeout", "20", "perl", "-e", script, address, &port],
    )
}

/// A service with a bridge runtime `web` and an egress runtime `net`; dropped before the
/// egress network's cleanup.
struct Networked {
    service: TestService,
    _cleanup: EgressCleanup,
}

const SERVER_PORT: u16 = 8000;

impl Networked {
    fn start() -> Networked {
        let runtime = |name: &str, mode: &str| {
            format!(
                "[runtimes.{name}]\nimage = \"{}\"\nmem_limit = \"256m\"\nnetwork_mode = \"{mode}\"\n",
                common::python_image()
            )
        };
        let extra = format!(
            "{}{}egress = [\"allowed.test\"]\n",
            runtime("web", "bridge"),
            runtime("net", "egress")
        );
        let service = TestService::start(&base_config(4, &extra));
        let cleanup = EgressCleanup(service.instance_id.clone());
        Networked {
            service,
            _cleanup: cleanup,
        }
    }

    /// Opens a session of `runtime` serving its directory on [`SERVER_PORT`] at every address;
    /// returns its id and its address on its network once the server listens.
    async fn serving(&self, runtime: &str) -> (String, String) {
        let service = &self.service;
        let id = service.open(runtime).await;
        let started = service
            .post(&format!("/v1/sessions/{id}/processes"))
            .json(
                &json!({"command": format!("python3 -m http.server {SERVER_PORT}"), "cwd": "/tmp"}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(started.status(), 201, "{}", started.text().await.unwrap());
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let listed = service.get_json(&format!("/v1/sessions/{id}/ports")).await;
            let ports = listed["ports"].as_array().expect("a port list");
            if ports.iter().any(|p| p["port"] == SERVER_PORT) {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no server: {listed}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        (id.clone(), self.address(&id))
    }

    /// The session's address on the one network its container is attached to.
    fn address(&self, id: &str) -> String {
        let container = self
            .service
            .containers()
            .into_iter()
            .find(|c| c["Config"]["Labels"]["org.sandboxd.session"] == id)
            .unwrap_or_else(|| panic!("no container for session {id}"));
        let networks = container["NetworkSettings"]["Networks"]
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(networks.len(), 1, "{networks:?}");
        let (_, network) = networks.into_iter().next().unwrap();
        network["IPAddress"].as_str().unwrap().to_string()
    }
}

#[tokio::test]
async fn other_local_users_cannot_connect_to_bridge_or_egress_sandboxes() {
    if !common::docker_only(
        "local users against sandbox addresses",
        "the host firewall is the Docker backend's",
    ) {
        return;
    }
    let world = Networked::start();
    for runtime in ["web", "net"] {
        let (id, address) = world.serving(runtime).await;
        // Root (the service, the engine) reaches the server: it listens at that address.
        let (answered, output) = http_as(0, &address, SERVER_PORT);
        assert!(
            answered && output.starts_with("answered: HTTP/1.0 200"),
            "{runtime}: root at {address}: {output}"
        );
        for uid in [NOBODY, SANDBOX_UID] {
            let (answered, output) = http_as(uid, &address, SERVER_PORT);
            assert!(
                !answered && output.starts_with("connect: "),
                "{runtime}: uid {uid} connected to {address}:{SERVER_PORT}: {output}"
            );
        }
        // The port proxy, which holds the token, still serves the page.
        let page = world
            .service
            .get(&format!("/v1/sessions/{id}/ports/{SERVER_PORT}/"))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200, "{runtime}");
        assert!(page.text().await.unwrap().contains("Directory listing"));
        if runtime == "net" {
            // The sandbox's own connections to the service's egress proxy still get their
            // answers (the host's replies are not new connections).
            let fetch = python_open("'http://other.test/'", "", true);
            let result = world.service.sh(&id, &fetch).await;
            let stdout = result["stdout"].as_str().unwrap_or_default();
            assert!(stdout.starts_with("403 refused by policy"), "{result}");
        }
    }
}
