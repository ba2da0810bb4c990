//! Pause to disk on gVisor (the Docker backend): a paused gVisor sandbox's memory and
//! processes are written to the state directory and its RAM released (the engine shows its
//! container stopped); resuming, explicitly or by any operation, restores them where they
//! were, also after a kill -9 of the service; closing removes the image. A runc sandbox is
//! still frozen in RAM, and says so. A command is the first OOM victim where the kernel
//! chooses by score (runc), and started without the fork that takes where it does not
//! (gVisor). Its runtimes name their tier, so it runs in the test step; it needs the engine's
//! runsc registered through scripts/runsc-sandboxd (host-setup does).

mod common;

use common::skip_or_fail;
use common::{base_config, docker, TestService};
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A counter whose state is only in the shell's memory, appended to a file every 0.1 s.
const COUNTER: &str =
    "i=0; while true; do echo $i >> /workspace/count; i=$((i+1)); sleep 0.1; done";

/// The service for these tests, or `None` (reported) where they cannot run: on an engine
/// whose runsc is not the restoring wrapper.
fn service() -> Option<TestService> {
    service_with_policy("")
}

/// As [`service`], with `policy` lines added to the config's `[policy]`.
fn service_with_policy(policy: &str) -> Option<TestService> {
    let runtimes = docker(&["info", "--format", "{{json .Runtimes}}"]);
    if !runtimes.contains("runsc-sandboxd") {
        skip_or_fail("the engine's runsc is not scripts/runsc-sandboxd (run scripts/host-setup.sh with SANDBOXD_GVISOR=1)");
        return None;
    }
    let config = base_config(
        4,
        &format!(
            "{policy}\n[runtimes.sh-gvisor]\nimage = \"{busybox}\"\nisolation = \"gvisor\"\n\n\
             [runtimes.sh-runc]\nimage = \"{busybox}\"\nisolation = \"runc\"\n",
            busybox = common::busybox_image(),
        ),
    );
    // The engine the docker CLI of these tests reaches, when it is not the default one.
    Some(match std::env::var("DOCKER_HOST") {
        Ok(host) => {
            let socket = PathBuf::from(host.trim_start_matches("unix://"));
            TestService::start_with_engine_at(&config, &socket)
        }
        Err(_) => TestService::start(&config),
    })
}

async fn post(service: &TestService, path: &str) -> (u16, Value) {
    let response = service.post(path).json(&json!({})).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// Opens a session of `runtime` running [`COUNTER`] in the background, counted past 5.
async fn counting(service: &TestService, runtime: &str) -> String {
    let id = service.open(runtime).await;
    let (status, process) = post_json(
        service,
        &format!("/v1/sessions/{id}/processes"),
        json!({"command": COUNTER}),
    )
    .await;
    assert_eq!(status, 201, "{process}");
    count_past(service, &id, 5).await;
    id
}

async fn post_json(service: &TestService, path: &str, body: Value) -> (u16, Value) {
    let response = service.post(path).json(&body).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// The numbers the counter wrote, checked to be 0, 1, 2, ... without a gap or a restart.
fn contiguous_count(text: &str) -> usize {
    let numbers: Vec<usize> = text.lines().filter_map(|l| l.parse().ok()).collect();
    for (expected, got) in numbers.iter().enumerate() {
        assert_eq!(
            *got, expected,
            "the counter restarted or skipped: {numbers:?}"
        );
    }
    numbers.len()
}

/// Waits (up to 60 s, for a loaded machine) until the counter has written more than `seen`
/// numbers, all in a row; returns how many.
async fn count_past(service: &TestService, id: &str, seen: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let count = service.sh(id, "cat /workspace/count").await;
        let now = contiguous_count(count["stdout"].as_str().unwrap_or_default());
        if now > seen {
            return now;
        }
        assert!(Instant::now() < deadline, "the counter stayed at {now}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn checkpoint_dir(service: &TestService, id: &str) -> PathBuf {
    service.state_dir.path().join("checkpoints").join(id)
}

/// Pauses the session and checks it went to disk: the record says so, the image is private,
/// and the engine shows the container stopped (its memory released). Returns the image's bytes.
async fn pause_to_disk(service: &TestService, id: &str) -> u64 {
    let bytes = paused_to_disk(service, id).await;
    await_engine_stopped(service, id).await;
    bytes
}

/// As [`pause_to_disk`], the engine's wind-up of the stop (which the pause does not wait
/// for) left to come.
async fn paused_to_disk(service: &TestService, id: &str) -> u64 {
    let (status, info) = post(service, &format!("/v1/sessions/{id}/pause")).await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["state"], "paused", "{info}");
    assert_eq!(info["paused_memory"], "disk", "{info}");
    let dir = checkpoint_dir(service, id);
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(mode(&dir) & 0o777, 0o700, "{}", dir.display());
    let mut bytes = 0;
    for file in std::fs::read_dir(&dir).unwrap() {
        let file = file.unwrap().path();
        assert_eq!(mode(&file) & 0o777, 0o600, "{}", file.display());
        bytes += std::fs::metadata(&file).unwrap().len();
    }
    assert!(bytes > 0, "an empty checkpoint image");
    bytes
}

/// Waits until the engine shows the session's container stopped.
async fn await_engine_stopped(service: &TestService, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let container = service
            .containers()
            .into_iter()
            .find(|c| c["Config"]["Labels"]["org.sandboxd.session"] == id)
            .expect("the session's container");
        if container["State"]["Running"] == false {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the engine still shows the paused container running: {}",
            container["State"]
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn activity(service: &TestService, id: &str) -> Vec<Value> {
    service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await["entries"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn a_counting_process_keeps_counting_after_a_pause_to_disk() {
    let Some(service) = service() else { return };
    // Another gVisor sandbox first: the counting one shares its shim, whose directory is the
    // first one's bundle (the restore must read the right container's annotation).
    service.open("sh-gvisor").await;
    let id = counting(&service, "sh-gvisor").await;
    let bytes = pause_to_disk(&service, &id).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let paused = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(paused["paused_memory"], "disk", "{paused}");

    let (status, info) = post(&service, &format!("/v1/sessions/{id}/resume")).await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["state"], "running", "{info}");
    assert!(info.get("paused_memory").is_none(), "{info}");
    assert!(
        !checkpoint_dir(&service, &id).exists(),
        "the image outlived the resume"
    );
    // The counter goes on from where it was: contiguous, past what it had written.
    let before = contiguous_count(
        service.sh(&id, "cat /workspace/count").await["stdout"]
            .as_str()
            .unwrap(),
    );
    count_past(&service, &id, before).await;

    let entries = activity(&service, &id).await;
    let entry = |action: &str| {
        entries
            .iter()
            .rev()
            .find(|e| e["action"] == action)
            .unwrap_or_else(|| panic!("no {action} entry: {entries:?}"))
            .clone()
    };
    assert_eq!(entry("pause")["bytes"], bytes, "{entries:?}");
    assert_eq!(entry("resume")["bytes"], bytes, "{entries:?}");
    assert_eq!(entry("resume")["status"], "ok", "{entries:?}");
}

#[tokio::test]
async fn a_session_paused_to_disk_resumes_after_a_kill_of_the_service() {
    let Some(mut service) = service() else { return };
    let id = counting(&service, "sh-gvisor").await;
    // Killed at once: the restarted service may find the container still running while the
    // engine winds up the checkpoint's stop, and must take it as paused all the same.
    paused_to_disk(&service, &id).await;
    service.crash_and_restart();

    let info = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "paused", "{info}");
    assert_eq!(info["paused_memory"], "disk", "{info}");
    await_engine_stopped(&service, &id).await;
    // Any operation resumes it; the counter goes on from where it was.
    let count = service.sh(&id, "cat /workspace/count").await;
    let before = contiguous_count(count["stdout"].as_str().unwrap());
    assert!(before > 5, "{count}");
    count_past(&service, &id, before).await;
    assert!(!checkpoint_dir(&service, &id).exists());
}

#[tokio::test]
async fn closing_a_session_paused_to_disk_removes_its_image() {
    let Some(service) = service() else { return };
    let id = counting(&service, "sh-gvisor").await;
    pause_to_disk(&service, &id).await;
    let closed = service
        .delete(&format!("/v1/sessions/{id}"))
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    assert!(
        !checkpoint_dir(&service, &id).exists(),
        "the image outlived the session"
    );
    assert!(
        service.containers().is_empty(),
        "the container outlived the session"
    );
}

#[tokio::test]
async fn a_runc_session_is_still_frozen_in_memory() {
    let Some(service) = service() else { return };
    let id = counting(&service, "sh-runc").await;
    let (status, info) = post(&service, &format!("/v1/sessions/{id}/pause")).await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["paused_memory"], "ram", "{info}");
    let container = &service.containers()[0];
    assert_eq!(container["State"]["Paused"], true, "{}", container["State"]);
    assert!(!checkpoint_dir(&service, &id).exists());
    let before = contiguous_count(
        service.sh(&id, "cat /workspace/count").await["stdout"]
            .as_str()
            .unwrap(),
    );
    count_past(&service, &id, before).await;
}

/// runc's kernel kills by score when memory runs out, so a command is raised to the first
/// victim from its start (a fork of the agent); gVisor's kills nothing by score, so the
/// agent is told so (`--no-oom-killer`) and starts commands there with posix_spawn, at the
/// agent's score.
#[tokio::test]
async fn commands_are_raised_to_first_oom_victims_only_where_the_kernel_chooses_by_score() {
    let Some(service) = service() else { return };
    let scores = "cat /proc/self/oom_score_adj /proc/$PPID/oom_score_adj";
    let runc = service.open("sh-runc").await;
    let ran = service.sh(&runc, scores).await;
    assert_eq!(ran["stdout"], "1000\n0\n", "{ran}");
    let gvisor = service.open("sh-gvisor").await;
    let ran = service.sh(&gvisor, scores).await;
    assert_eq!(ran["stdout"], "0\n0\n", "{ran}");
}

#[tokio::test]
async fn an_idle_gvisor_session_is_paused_to_disk_by_the_policy() {
    let policy = "idle_timeout_secs = 2\nidle_action = \"pause\"";
    let Some(service) = service_with_policy(policy) else {
        return;
    };
    let id = counting(&service, "sh-gvisor").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let info = loop {
        let info = service.get_json(&format!("/v1/sessions/{id}")).await;
        if info["state"] == "paused" {
            break info;
        }
        assert!(Instant::now() < deadline, "not paused when idle: {info}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(info["paused_memory"], "disk", "{info}");
    assert!(checkpoint_dir(&service, &id).exists());
    let before = contiguous_count(
        service.sh(&id, "cat /workspace/count").await["stdout"]
            .as_str()
            .unwrap(),
    );
    count_past(&service, &id, before).await;
}

/// A small tmpfs mounted over the service's checkpoint directory, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(service: &TestService) -> SmallDisk {
        let dir = service.state_dir.path().join("checkpoints");
        std::fs::create_dir_all(&dir).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(
            mounted.success(),
            "cannot mount a tmpfs at {}",
            dir.display()
        );
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[tokio::test]
async fn a_pause_to_a_full_disk_is_refused_and_the_sandbox_runs_on() {
    let Some(service) = service() else { return };
    let id = counting(&service, "sh-gvisor").await;
    let _disk = SmallDisk::mount(&service);
    let (status, refused) = post(&service, &format!("/v1/sessions/{id}/pause")).await;
    assert_eq!(status, 507, "{refused}");
    assert_eq!(refused["error"]["code"], "no_space", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("keeps running"), "{message}");
    let info = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "running", "{info}");
    let container = &service.containers()[0];
    assert_eq!(
        container["State"]["Running"], true,
        "{}",
        container["State"]
    );
    let before = contiguous_count(
        service.sh(&id, "cat /workspace/count").await["stdout"]
            .as_str()
            .unwrap(),
    );
    count_past(&service, &id, before).await;
}

#[tokio::test]
async fn a_pause_past_the_tenants_pause_quota_is_restored_at_once_and_counts_on() {
    let Some(service) = service_with_policy("pause_quota_bytes = \"9728k\"") else {
        return;
    };
    // The first holds 7 MiB more in its memory-backed /tmp (its image about 8.5 MiB, a bare
    // one's about 1.5): the two pass the quota of 9.5 MiB together, and either fits alone.
    let first = counting(&service, "sh-gvisor").await;
    let filled = service
        .sh(
            &first,
            "head -c 7340032 /dev/urandom > /tmp/held && echo held",
        )
        .await;
    assert_eq!(filled["stdout"], "held\n", "{filled}");
    let second = counting(&service, "sh-gvisor").await;
    let first_bytes = pause_to_disk(&service, &first).await;
    assert!(
        (7 << 20..9728 << 10).contains(&first_bytes),
        "the test needs the first image between 7 MiB and the quota: {first_bytes}"
    );
    let (status, refused) = post(&service, &format!("/v1/sessions/{second}/pause")).await;
    assert_eq!(status, 429, "first {first_bytes}: {refused}");
    assert_eq!(refused["error"]["code"], "pause_quota", "{refused}");
    let info = service.get_json(&format!("/v1/sessions/{second}")).await;
    assert_eq!(info["state"], "running", "{info}");
    assert!(
        !checkpoint_dir(&service, &second)
            .join("checkpoint.img")
            .exists(),
        "the refused image was removed"
    );
    // Restored from its image, the counter goes on from where it was, without a gap.
    let before = contiguous_count(
        service.sh(&second, "cat /workspace/count").await["stdout"]
            .as_str()
            .unwrap(),
    );
    count_past(&service, &second, before).await;
    // Once the first is resumed, its image no longer counts.
    let (status, _) = post(&service, &format!("/v1/sessions/{first}/resume")).await;
    assert_eq!(status, 200);
    pause_to_disk(&service, &second).await;
}

#[tokio::test]
async fn a_fork_of_a_gvisor_session_carries_its_running_processes() {
    let Some(mut service) = service() else { return };
    let id = counting(&service, "sh-gvisor").await;
    let started = Instant::now();
    let (status, forked) = post_json(
        &service,
        &format!("/v1/sessions/{id}/fork"),
        json!({"count": 2}),
    )
    .await;
    assert_eq!(status, 201, "{forked}");
    println!(
        "a fork of 2 with memory answered in {} ms",
        started.elapsed().as_millis()
    );
    assert_eq!(forked["memory"], true, "{forked}");
    let forks: Vec<String> = forked["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(forks.len(), 2, "{forked}");
    // Each copy's counter goes on from the count it was copied at (a counter started afresh
    // would write 0 again, a files-only copy would not count at all); so does the source's.
    for fork in &forks {
        let copied = contiguous_count(
            service.sh(fork, "cat /workspace/count").await["stdout"]
                .as_str()
                .unwrap(),
        );
        assert!(copied > 5, "the copy of {fork} holds {copied} numbers");
        count_past(&service, fork, copied).await;
    }
    // What each reads from the kernel's random source is its own (gVisor's kernel reads the
    // host's for each read); a seed a program drew before the copy is the same in all.
    let mut drawn = Vec::new();
    for session in forks.iter().chain([&id]) {
        let bytes = service.sh(session, "od -An -tx1 -N16 /dev/urandom").await;
        drawn.push(bytes["stdout"].as_str().unwrap().to_string());
    }
    drawn.dedup();
    assert_eq!(drawn.len(), 3, "{drawn:?}");
    let source = service.sh(&id, "wc -l < /workspace/count").await;
    let at = source["stdout"].as_str().unwrap().trim().parse().unwrap();
    count_past(&service, &id, at).await;
    // Independent of each other: a file made in one is in no other.
    service.sh(&forks[0], "touch /workspace/only-here").await;
    for other in [&forks[1], &id] {
        let seen = service.sh(other, "ls /workspace").await;
        assert!(
            !seen["stdout"].as_str().unwrap().contains("only-here"),
            "{seen}"
        );
    }
    // The copies' links are gone once they started; the fork is in the source's log.
    let left: Vec<_> = std::fs::read_dir(service.state_dir.path().join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "checkpoint files left: {left:?}");
    let entries = activity(&service, &id).await;
    let fork_entry = entries
        .iter()
        .rev()
        .find(|e| e["action"] == "fork")
        .unwrap();
    assert_eq!(
        fork_entry["target"], "2 sessions with memory",
        "{entries:?}"
    );
    assert!(fork_entry["bytes"].as_u64().unwrap() > 0, "{entries:?}");

    // A copy's agent is called back after a kill -9 of the service, and keeps counting.
    service.crash_and_restart();
    let now = contiguous_count(
        service.sh(&forks[1], "cat /workspace/count").await["stdout"]
            .as_str()
            .unwrap(),
    );
    count_past(&service, &forks[1], now).await;

    // A runc session forks its files only; asking for its processes is refused in words.
    for fork in &forks {
        let closed = service.delete(&format!("/v1/sessions/{fork}")).send().await;
        assert_eq!(closed.unwrap().status(), 200);
    }
    let runc = service.open("sh-runc").await;
    let path = format!("/v1/sessions/{runc}/fork");
    let (status, files_only) = post_json(&service, &path, json!({"count": 1})).await;
    assert_eq!(
        (status, &files_only["memory"]),
        (201, &json!(false)),
        "{files_only}"
    );
    let (status, refused) = post_json(&service, &path, json!({"count": 1, "memory": true})).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], "memory_not_copied", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("runc"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_snapshot_of_a_gvisor_session_keeps_its_running_processes() {
    let Some(mut service) = service() else { return };
    let id = counting(&service, "sh-gvisor").await;
    let (status, snapshot) = post_json(
        &service,
        &format!("/v1/sessions/{id}/snapshots"),
        json!({"name": "counting"}),
    )
    .await;
    assert_eq!(status, 201, "{snapshot}");
    assert_eq!(snapshot["memory"], true, "{snapshot}");
    assert_eq!(
        snapshot["paths"],
        json!([]),
        "the image holds the files: {snapshot}"
    );
    let snapshot_id = snapshot["id"].as_str().unwrap().to_string();
    let image = checkpoint_dir(&service, &format!("snap-{snapshot_id}"));
    assert!(
        image.join("checkpoint.img").is_file(),
        "{}",
        image.display()
    );
    let mode = std::fs::metadata(&image).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    assert!(snapshot["bytes"].as_u64().unwrap() > 0, "{snapshot}");
    service
        .delete(&format!("/v1/sessions/{id}"))
        .send()
        .await
        .unwrap();

    // Kept across a kill -9 of the service; each session opened from it counts on from the
    // snapshot's number, on its own.
    service.crash_and_restart();
    let mut opened = Vec::new();
    for _ in 0..2 {
        let (status, info) =
            post_json(&service, "/v1/sessions", json!({"snapshot": snapshot_id})).await;
        assert_eq!(status, 201, "{info}");
        opened.push(info["id"].as_str().unwrap().to_string());
    }
    for session in &opened {
        let at = contiguous_count(
            service.sh(session, "cat /workspace/count").await["stdout"]
                .as_str()
                .unwrap(),
        );
        assert!(at > 5, "{session} starts at {at}");
        count_past(&service, session, at).await;
    }
    let entries = activity(&service, &id).await;
    let taken = entries.iter().find(|e| e["action"] == "snapshot").unwrap();
    assert_eq!(
        taken["target"],
        format!("{snapshot_id} with memory"),
        "{entries:?}"
    );

    // A snapshot of the files only, when asked; deleting the one with memory removes its image.
    let (status, files) = post_json(
        &service,
        &format!("/v1/sessions/{}/snapshots", opened[0]),
        json!({"name": "files", "memory": false}),
    )
    .await;
    assert_eq!((status, &files["memory"]), (201, &json!(false)), "{files}");
    assert!(!files["paths"].as_array().unwrap().is_empty(), "{files}");
    let deleted = service
        .delete(&format!("/v1/snapshots/{snapshot_id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert!(!image.exists(), "the image outlived its snapshot");
}
