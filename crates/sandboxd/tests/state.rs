//! The activity log, expiry, and state that survives a crash of the service.

mod common;

use common::{
    base_config, docker, docker_only, remove_sandbox_outside, start_unowned_sandbox, TestService,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

async fn activity(service: &TestService, id: &str) -> Vec<Value> {
    let log: Value = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    log["entries"].as_array().unwrap().clone()
}

async fn session(service: &TestService, id: &str) -> Value {
    service.get_json(&format!("/v1/sessions/{id}")).await
}

#[tokio::test]
async fn the_activity_log_records_operations_but_never_payloads() {
    let service = TestService::start(&base_config(2, ""));
    let secret = "S3CRET-PAYLOAD-7f3a";
    let id = service.open("sh").await;
    service
        .sh(&id, &format!("echo {secret} > /workspace/notes"))
        .await;
    let (_, piped) = service
        .exec(
            &id,
            json!({"argv": ["cat"], "stdin": format!("stdin {secret}")}),
        )
        .await;
    assert_eq!(piped["stdout"], format!("stdin {secret}"));
    service
        .exec(
            &id,
            json!({"command": "test -n \"$KEY\"", "env": {"KEY": secret}}),
        )
        .await;
    service
        .client
        .post(service.url(&format!("/v1/sessions/{id}/exec")))
        .bearer_auth(common::TOKEN)
        .header("x-sandboxd-client", "cli")
        .json(&json!({"command": "exit 4"}))
        .send()
        .await
        .unwrap();
    service
        .exec(&id, json!({"command": "sleep 5", "timeout_secs": 1}))
        .await;
    service
        .delete(&format!("/v1/sessions/{id}"))
        .send()
        .await
        .unwrap();

    let entries = activity(&service, &id).await;
    let summary: Vec<(String, String, String)> = entries
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["target"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The open entry names the tier when it is not the default.
    let opened = if common::on_gvisor() {
        "sh (gvisor)"
    } else {
        "sh"
    };
    let expected = [
        ("close", "sh", "ok"),
        ("exec", "sleep", "error"),
        ("exec", "exit", "ok"),
        ("exec", "test", "ok"),
        ("exec", "cat", "ok"),
        ("exec", "echo", "ok"),
        ("open", opened, "ok"),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, t, s)| (a.to_string(), t.to_string(), s.to_string()))
        .collect();
    assert_eq!(summary, expected, "newest first: {entries:#?}");
    let cli = &entries[2];
    assert_eq!(cli["interface"], "cli");
    assert_eq!(cli["exit_code"], 4);
    assert_eq!(entries[1]["error"], "timed out");
    assert_eq!(entries[6]["interface"], "api");
    assert_eq!(entries[6]["principal"], "admin");
    assert!(entries
        .iter()
        .all(|e| e["at"].as_str().unwrap().ends_with('Z')));
    assert!(entries.iter().all(|e| e["duration_ms"].is_u64()));

    let text = serde_json::to_string(&entries).unwrap();
    assert!(!text.contains(secret), "no payload in the log: {text}");
    // Nor anywhere in the database files, WAL included.
    for entry in std::fs::read_dir(service.state_dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("sandboxd.db")
        {
            let bytes = std::fs::read(&path).unwrap();
            let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "the secret is in {}", path.display());
        }
    }
}

#[tokio::test]
async fn the_log_keeps_the_most_recent_200_entries() {
    let service = TestService::start(&base_config(1, ""));
    let id = service.open("sh").await;
    for n in 0..205 {
        service
            .exec(&id, json!({"argv": [format!("/bin/true{}", n % 2)]}))
            .await;
    }
    let entries = activity(&service, &id).await;
    assert_eq!(entries.len(), 200);
    assert_eq!(entries[0]["action"], "exec");
    assert!(
        entries.iter().all(|e| e["action"] != "open"),
        "the oldest entry fell out"
    );
}

#[tokio::test]
async fn idle_sessions_expire_with_the_reason_kept() {
    let service = TestService::start(&base_config(2, "idle_timeout_secs = 2"));
    let idle = service.open("sh").await;
    let busy = service.open("sh").await;
    for _ in 0..8 {
        service.sh(&busy, "true").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let ended = session(&service, &idle).await;
    assert_eq!(ended["state"], "ended", "{ended}");
    assert!(
        ended["end_reason"]
            .as_str()
            .unwrap()
            .contains("idle for more than 2 s"),
        "{ended}"
    );
    assert_eq!(
        session(&service, &busy).await["state"],
        "running",
        "activity keeps a session open"
    );
    let log = activity(&service, &idle).await;
    assert_eq!(log[0]["action"], "expire");
    assert_eq!(log[0]["interface"], "service");
    let (status, body) = service.exec(&idle, json!({"command": "true"})).await;
    assert_eq!(status, 409);
    assert!(body["error"]["message"].as_str().unwrap().contains("idle"));
    assert_eq!(service.sandbox_count(), 1, "the expired sandbox is removed");
}

#[tokio::test]
async fn sessions_expire_at_the_maximum_lifetime_even_when_busy() {
    let service = TestService::start(&base_config(1, "max_lifetime_secs = 3"));
    let id = service.open("sh").await;
    let mut ended = Value::Null;
    for _ in 0..20 {
        let (status, _) = service.exec(&id, json!({"command": "true"})).await;
        if status == 409 {
            ended = session(&service, &id).await;
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(
        ended["state"], "ended",
        "the session must end within a few seconds"
    );
    assert!(
        ended["end_reason"]
            .as_str()
            .unwrap()
            .contains("maximum lifetime of 3 s"),
        "{ended}"
    );
}

#[tokio::test]
async fn a_crash_and_restart_keeps_sessions_and_their_files() {
    let mut service = TestService::start(&base_config(3, ""));
    let first = service.open("sh").await;
    let second = service.open("python").await;
    let closed = service.open("sh").await;
    service.sh(&first, "echo kept > /workspace/work.txt").await;
    service
        .delete(&format!("/v1/sessions/{closed}"))
        .send()
        .await
        .unwrap();

    // Killed right after an operation: its entry is still in the writer's batch, and the
    // journal keeps it.
    service.sh(&first, "true").await;
    let crashed = Instant::now();
    service.crash_and_restart();

    let listed: Value = service.get_json("/v1/sessions").await;
    let ids: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [first.as_str(), second.as_str()]);
    assert_eq!(
        service.sh(&first, "cat /workspace/work.txt").await["stdout"],
        "kept\n"
    );
    assert_eq!(
        service.sh(&second, "python3 -c 'print(6*7)'").await["stdout"],
        "42\n"
    );
    // Their agents dialed at the new service's word: without it, the earliest they dial
    // again is 6 s after the crash.
    assert!(
        crashed.elapsed() < Duration::from_secs(5),
        "the agents came back {:?} after the crash",
        crashed.elapsed()
    );
    assert_eq!(
        session(&service, &closed).await["end_reason"],
        "closed by the client"
    );
    assert_eq!(
        activity(&service, &first).await.len(),
        4,
        "open and two execs before the crash, an exec after"
    );

    // Created after the restart, the service still counts all three slots honestly.
    service.open("sh").await;
    let full = service.post("/v1/sessions").send().await.unwrap();
    assert_eq!(full.status(), 429);
}

#[tokio::test]
async fn at_start_orphans_are_removed_and_vanished_sandboxes_are_reported() {
    let mut service = TestService::start(&base_config(3, ""));
    let kept = service.open("sh").await;
    let vanished = service.open("sh").await;

    // While the service is down, one sandbox disappears.
    service.crash_and_restart_with(|| remove_sandbox_outside(&vanished));
    // Judged against the engine beside serving, so within moments of the restart.
    let info = service
        .wait_for_end(&vanished, Duration::from_secs(15))
        .await;
    assert_eq!(info["state"], "ended", "{info}");
    assert!(
        info["end_reason"]
            .as_str()
            .unwrap()
            .contains("was gone when the service restarted"),
        "{info}"
    );
    assert_eq!(service.sh(&kept, "echo ok").await["stdout"], "ok\n");

    // A sandbox removed behind a running service's back is noticed and reported.
    remove_sandbox_outside(&kept);
    let info = service.wait_for_end(&kept, Duration::from_secs(15)).await;
    assert_eq!(info["state"], "ended", "{info}");
    assert!(
        info["end_reason"]
            .as_str()
            .unwrap()
            .contains("removed outside sandboxd"),
        "{info}"
    );
}

#[tokio::test]
async fn an_unowned_sandbox_of_this_instance_is_removed_at_start() {
    let mut service = TestService::start(&base_config(2, ""));
    let kept = service.open("sh").await;
    let instance = service.instance_id.clone();
    service.crash_and_restart_with(|| start_unowned_sandbox(&instance));
    // Removed beside serving, so within moments of the restart; the owned one serves at once.
    assert_eq!(service.sh(&kept, "echo ok").await["stdout"], "ok\n");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while service.sandbox_session_ids().len() > 1 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(
        service.sandbox_session_ids(),
        [kept],
        "the orphan was removed, the owned sandbox kept"
    );
}

/// Whether the engine has a volume of that name.
fn has_volume(name: &str) -> bool {
    docker(&["volume", "ls", "-q", "--filter", &format!("name=^{name}$")]).trim() == name
}

/// A volume made as the Docker backend makes a sandbox's work volume, labelled as `instance`'s.
fn create_work_volume(name: &str, instance: &str) {
    let label = format!("org.sandboxd.instance={instance}");
    docker(&[
        "volume",
        "create",
        "--label",
        &label,
        "--label",
        "org.sandboxd.managed=true",
        name,
    ]);
    assert!(has_volume(name), "volume {name} was not created");
}

#[tokio::test]
async fn at_start_work_volumes_no_container_holds_are_removed_and_only_this_instances() {
    if !docker_only(
        "work volumes",
        "a pod's working directory is no engine volume",
    ) {
        return;
    }
    let mut service = TestService::start(&base_config(2, ""));
    let kept = service.open("sh").await;
    let instance = service.instance_id.clone();
    // As a crash between the volume's create and its container's leaves one.
    let orphan = format!("sandboxd-{instance}-orphan-work");
    let foreign_instance = format!("{instance}-other");
    let foreign = format!("sandboxd-{foreign_instance}-orphan-work");
    service.crash_and_restart_with(|| {
        create_work_volume(&orphan, &instance);
        create_work_volume(&foreign, &foreign_instance);
    });
    // Removed at the engine's first answer, beside serving; the owned one serves at once.
    assert_eq!(service.sh(&kept, "echo ok").await["stdout"], "ok\n");
    let deadline = Instant::now() + Duration::from_secs(15);
    while has_volume(&orphan) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (orphan_gone, foreign_stayed) = (!has_volume(&orphan), has_volume(&foreign));
    docker(&["volume", "rm", "-f", &foreign, &orphan]);
    assert!(orphan_gone, "this instance's orphaned work volume is gone");
    assert!(foreign_stayed, "another instance's volume stays");
    let held = format!("sandboxd-{kept}-work");
    assert!(has_volume(&held), "the volume a sandbox holds stays");
}

/// What the gate in front of the engine does with a connection.
#[derive(Clone, Copy, PartialEq)]
enum Gate {
    Open,
    /// Keeps it waiting (none is refused) until the gate opens or refuses.
    Hold,
    /// Closes it unanswered.
    Refuse,
}

/// A way to the Docker engine that can stop answering.
struct EngineGate {
    dir: tempfile::TempDir,
    state: tokio::sync::watch::Sender<Gate>,
}

impl EngineGate {
    fn start() -> EngineGate {
        let dir = tempfile::Builder::new()
            .prefix("sbdgate")
            .tempdir_in("/tmp")
            .unwrap();
        let listener = tokio::net::UnixListener::bind(dir.path().join("docker.sock")).unwrap();
        let (state, watched) = tokio::sync::watch::channel(Gate::Open);
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mut watched = watched.clone();
                tokio::spawn(async move {
                    let Ok(gate) = watched
                        .wait_for(|gate| *gate != Gate::Hold)
                        .await
                        .map(|gate| *gate)
                    else {
                        return;
                    };
                    if gate == Gate::Refuse {
                        return;
                    }
                    let mut engine = tokio::net::UnixStream::connect("/var/run/docker.sock")
                        .await
                        .unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut engine).await;
                });
            }
        });
        EngineGate { dir, state }
    }

    fn socket(&self) -> std::path::PathBuf {
        self.dir.path().join("docker.sock")
    }

    fn set(&self, gate: Gate) {
        self.state.send_replace(gate);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_crash_the_sessions_are_served_before_the_engine_answers() {
    if !common::docker_only(
        "serving before the engine answers",
        "the Docker engine's socket is what is held",
    ) {
        return;
    }
    let gate = EngineGate::start();
    let mut service = TestService::start_with_engine_at(&base_config(2, ""), &gate.socket());
    let id = service.open("sh").await;
    service.sh(&id, "echo kept > /workspace/work.txt").await;

    gate.set(Gate::Hold);
    service.crash_and_restart();
    assert_eq!(
        service.sh(&id, "cat /workspace/work.txt").await["stdout"],
        "kept\n",
        "served through its agent while the engine answers nothing"
    );
    let report = service.get("/v1/engine").send().await.unwrap();
    assert_eq!(report.status(), 404, "the engine has not answered yet");
    // An engine that refuses is asked again for its report.
    gate.set(Gate::Refuse);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let report = service.get("/v1/engine").send().await.unwrap();
    assert_eq!(report.status(), 404, "the engine refused");

    gate.set(Gate::Open);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let report = service.get("/v1/engine").send().await.unwrap();
        if report.status() == 200 {
            let report: Value = report.json().await.unwrap();
            assert!(report["engine_version"].is_string(), "{report}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no engine report after the engine answered"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // What needs the engine works again: a new session, and closing one.
    let fresh = service.open("sh").await;
    assert_eq!(service.sh(&fresh, "echo new").await["stdout"], "new\n");
    let closed = service
        .delete(&format!("/v1/sessions/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 200);
}
