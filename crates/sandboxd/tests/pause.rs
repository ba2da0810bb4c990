//! Pausing and resuming sessions against a real service and Docker: processes, their output
//! and files survive repeated cycles; a paused sandbox uses no CPU (the host's cgroup figures);
//! any operation resumes it; idle sessions are paused then closed as the policy says; the
//! liveness pinger leaves a paused session alone; a restart keeps it paused.

mod common;

use common::{base_config, TestService};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A background counter: its state is in the shell's memory, its output goes to stdout and
/// to a file, one number a line, every 0.1 s.
const COUNTER: &str =
    "i=0; while true; do echo $i; echo $i >> /workspace/count; i=$((i+1)); sleep 0.1; done";

async fn post(service: &TestService, path: &str, body: Value) -> (u16, Value) {
    let response = service.post(path).json(&body).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn pause(service: &TestService, id: &str) -> Value {
    let (status, info) = post(service, &format!("/v1/sessions/{id}/pause"), json!({})).await;
    assert_eq!(status, 200, "pause failed: {info}");
    assert_eq!(info["state"], "paused", "{info}");
    assert!(info["paused_at"].is_string(), "{info}");
    info
}

async fn resume(service: &TestService, id: &str) -> Value {
    let (status, info) = post(service, &format!("/v1/sessions/{id}/resume"), json!({})).await;
    assert_eq!(status, 200, "resume failed: {info}");
    assert_eq!(info["state"], "running", "{info}");
    info
}

async fn start_counter(service: &TestService, id: &str) -> String {
    let (status, process) = post(
        service,
        &format!("/v1/sessions/{id}/processes"),
        json!({"command": COUNTER}),
    )
    .await;
    assert_eq!(status, 201, "{process}");
    process["id"].as_str().unwrap().to_string()
}

/// The sandbox's container as the engine shows it.
fn container(service: &TestService) -> Value {
    let containers = service.containers();
    assert_eq!(containers.len(), 1, "one sandbox expected");
    containers[0].clone()
}

/// Nanoseconds of CPU the container's cgroup has used, read on the host (v1 `cpuacct.usage`,
/// v2 `cpu.stat`'s `usage_usec`), whichever layout the engine uses.
fn cpu_nanos(container_id: &str) -> u64 {
    let v1 = [
        format!("/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage"),
        format!("/sys/fs/cgroup/cpu,cpuacct/docker/{container_id}/cpuacct.usage"),
    ];
    for path in v1 {
        if let Ok(text) = std::fs::read_to_string(&path) {
            return text.trim().parse().unwrap();
        }
    }
    for dir in [
        format!("/sys/fs/cgroup/docker/{container_id}"),
        format!("/sys/fs/cgroup/system.slice/docker-{container_id}.scope"),
    ] {
        if let Ok(stat) = std::fs::read_to_string(format!("{dir}/cpu.stat")) {
            let usec = stat
                .lines()
                .find_map(|l| l.strip_prefix("usage_usec "))
                .unwrap();
            return usec.trim().parse::<u64>().unwrap() * 1000;
        }
    }
    panic!("no CPU figures for container {container_id} under /sys/fs/cgroup");
}

/// The numbers a counter wrote, checked to be 0, 1, 2, ... without a gap or a restart.
fn contiguous_count(text: &str) -> usize {
    let numbers: Vec<usize> = text.lines().map(|l| l.parse().unwrap()).collect();
    for (expected, got) in numbers.iter().enumerate() {
        assert_eq!(
            *got, expected,
            "the counter skipped or restarted: {numbers:?}"
        );
    }
    numbers.len()
}

/// Everything a process wrote to stdout, read from its stream once it has exited.
async fn stdout_of(service: &TestService, id: &str, process: &str) -> String {
    let body = service
        .get(&format!("/v1/sessions/{id}/processes/{process}/stream"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut stdout = String::new();
    let mut event = "";
    for line in body.lines() {
        if let Some(name) = line.strip_prefix("event: ") {
            event = name;
        } else if let Some(data) = line.strip_prefix("data: ") {
            if event == "stdout" {
                let chunk: Value = serde_json::from_str(data).unwrap();
                stdout.push_str(chunk["text"].as_str().unwrap());
            }
        }
    }
    stdout
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
async fn a_background_process_its_output_and_files_survive_repeated_pause_and_resume() {
    let service = TestService::start(&base_config(1, ""));
    let id = service.open("sh").await;
    service
        .sh(
            &id,
            "head -c 1000000 /dev/urandom > /tmp/data && md5sum /tmp/data > /workspace/sum",
        )
        .await;
    let process = start_counter(&service, &id).await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut seen = 0;
    for cycle in 0..5 {
        pause(&service, &id).await;
        assert_eq!(container(&service)["State"]["Paused"], true);
        tokio::time::sleep(Duration::from_millis(700)).await;
        resume(&service, &id).await;
        assert_eq!(container(&service)["State"]["Paused"], false);
        let info = service
            .get_json(&format!("/v1/sessions/{id}/processes/{process}"))
            .await;
        assert_eq!(info["state"], "running", "cycle {cycle}: {info}");
        // The counter goes on: waited for, within a deadline a loaded machine meets.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let now = loop {
            let count = service.sh(&id, "cat /workspace/count").await;
            let now = contiguous_count(count["stdout"].as_str().unwrap());
            if now > seen || std::time::Instant::now() > deadline {
                break now;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(
            now > seen,
            "cycle {cycle}: the counter did not go on ({now} after {seen})"
        );
        seen = now;
        let sum = service.sh(&id, "md5sum -c /workspace/sum").await;
        assert_eq!(sum["exit_code"], 0, "cycle {cycle}: /tmp changed: {sum}");
    }

    let (status, _) = post(
        &service,
        &format!("/v1/sessions/{id}/processes/{process}/signal"),
        json!({"signal": "KILL"}),
    )
    .await;
    assert_eq!(status, 200);
    let stdout = stdout_of(&service, &id, &process).await;
    let printed = contiguous_count(&stdout);
    assert!(printed >= seen, "stdout lost lines: {printed} < {seen}");
    let actions: Vec<String> = activity(&service, &id)
        .await
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(actions.iter().filter(|a| *a == "pause").count(), 5);
    assert_eq!(actions.iter().filter(|a| *a == "resume").count(), 5);
    println!("{printed} lines kept across 5 pause/resume cycles");
}

#[tokio::test]
async fn a_paused_session_uses_no_cpu_and_keeps_its_memory() {
    let service = TestService::start(&base_config(1, ""));
    let id = service.open("sh").await;
    let (status, busy) = post(
        &service,
        &format!("/v1/sessions/{id}/processes"),
        json!({"command": "while :; do :; done"}),
    )
    .await;
    assert_eq!(status, 201, "{busy}");
    let container_id = container(&service)["Id"].as_str().unwrap().to_string();

    // The figure is the sandbox's: it grows with the busy loop (waited for, as a loaded
    // machine may give the loop little time).
    let before = cpu_nanos(&container_id);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut running_use = 0;
    while running_use <= 100_000_000 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        running_use = cpu_nanos(&container_id) - before;
    }
    assert!(
        running_use > 100_000_000,
        "the busy loop used only {running_use} ns in 30 s: the figure is not the sandbox's"
    );

    let paused = pause(&service, &id).await;
    let frozen_at = cpu_nanos(&container_id);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let paused_use = cpu_nanos(&container_id) - frozen_at;
    assert_eq!(
        paused_use, 0,
        "a paused sandbox used {paused_use} ns of CPU"
    );
    let info = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "paused");
    assert!(info["memory_bytes"].as_u64().unwrap() > 0, "{info}");
    assert!(info["process_count"].as_u64().unwrap() >= 2, "{info}");
    assert_eq!(info["paused_at"], paused["paused_at"]);

    resume(&service, &id).await;
    let thawed_at = cpu_nanos(&container_id);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        cpu_nanos(&container_id) - thawed_at > 100_000_000,
        "the loop did not resume"
    );
    println!("CPU in 1 s running: {running_use} ns; in 3 s paused: {paused_use} ns");
}

#[tokio::test]
async fn an_exec_on_a_paused_session_resumes_it_and_says_so() {
    let service = TestService::start(&base_config(1, ""));
    let id = service.open("sh").await;
    pause(&service, &id).await;
    let again = pause(&service, &id).await;
    assert_eq!(again["state"], "paused", "pausing twice is no error");

    let result = service.sh(&id, "echo thawed").await;
    assert_eq!(result["stdout"], "thawed\n");
    assert_eq!(
        service.get_json(&format!("/v1/sessions/{id}")).await["state"],
        "running"
    );
    assert_eq!(container(&service)["State"]["Paused"], false);
    let log = activity(&service, &id).await;
    // Newest first: the exec, and just before it the service's resume on its way.
    assert_eq!(log[0]["action"], "exec", "{log:#?}");
    assert_eq!(log[1]["action"], "resume", "{log:#?}");
    assert_eq!(log[1]["interface"], "service");
    assert_eq!(log[1]["status"], "ok");
    assert!(
        log[1]["target"].as_str().unwrap().starts_with("automatic"),
        "{log:#?}"
    );

    // A file listing resumes it too.
    pause(&service, &id).await;
    let files = service
        .get(&format!("/v1/sessions/{id}/files"))
        .send()
        .await
        .unwrap();
    assert_eq!(files.status(), 200);
    assert_eq!(
        service.get_json(&format!("/v1/sessions/{id}")).await["state"],
        "running"
    );
    let resumed = resume(&service, &id).await;
    assert_eq!(
        resumed["state"], "running",
        "resuming a running session is no error"
    );
}

#[tokio::test]
async fn an_idle_session_is_paused_then_closed_as_the_policy_says() {
    let policy = "idle_timeout_secs = 2\nidle_action = \"pause\"\npaused_timeout_secs = 5";
    let service = TestService::start(&base_config(1, policy));
    let id = service.open("sh").await;
    let opened = Instant::now();

    let paused = async {
        loop {
            let info = service.get_json(&format!("/v1/sessions/{id}")).await;
            if info["state"] != "running" {
                return info;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let info = tokio::time::timeout(Duration::from_secs(10), paused)
        .await
        .expect("not paused when idle");
    assert_eq!(info["state"], "paused", "{info}");
    assert_eq!(container(&service)["State"]["Paused"], true);
    let log = activity(&service, &id).await;
    assert_eq!(log[0]["action"], "pause");
    assert_eq!(log[0]["interface"], "service");
    assert!(
        log[0]["target"].as_str().unwrap().contains("idle"),
        "{log:#?}"
    );
    let paused_after = opened.elapsed();

    let ended = service.wait_for_end(&id, Duration::from_secs(15)).await;
    assert_eq!(ended["state"], "ended", "{ended}");
    let reason = ended["end_reason"].as_str().unwrap();
    assert!(
        reason.contains("paused for more than 5 s (policy.paused_timeout_secs)"),
        "{reason}"
    );
    // The record says so first; the sandbox is removed right after.
    let removed = async {
        while !service.containers().is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), removed)
        .await
        .expect("the paused sandbox was not removed");
    println!(
        "paused after {:.1} s idle, ended after {:.1} s: {reason}",
        paused_after.as_secs_f64(),
        opened.elapsed().as_secs_f64()
    );
}

#[tokio::test]
async fn a_paused_session_outlives_the_pinger_and_a_crash_of_the_service() {
    let mut service = TestService::start(&base_config(1, ""));
    let id = service.open("sh").await;
    let process = start_counter(&service, &id).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    pause(&service, &id).await;

    // Three failed pings about 4 s apart end a session whose agent does not answer.
    tokio::time::sleep(Duration::from_secs(14)).await;
    let info = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(
        info["state"], "paused",
        "the pinger ended a paused session: {info}"
    );

    let started = Instant::now();
    service.crash_and_restart();
    let restart = started.elapsed();
    assert!(
        restart < Duration::from_secs(15),
        "the restart waited {restart:?} on the frozen agent"
    );
    let info = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "paused", "{info}");
    assert_eq!(container(&service)["State"]["Paused"], true);

    // The agent dials the new service once thawed; the counter goes on where it was.
    let count = service.sh(&id, "cat /workspace/count").await;
    let counted = contiguous_count(count["stdout"].as_str().unwrap());
    assert!(counted > 0);
    let info = service
        .get_json(&format!("/v1/sessions/{id}/processes/{process}"))
        .await;
    assert_eq!(info["state"], "running", "{info}");
    println!(
        "restarted in {:.1} s with the session paused; {counted} lines counted",
        restart.as_secs_f64()
    );
}
