//! Runtimes with `isolation = "gvisor"`: each sandbox on a kernel of its own (gVisor's runsc,
//! registered with the engine by scripts/host-setup.sh), beside runc runtimes of the same
//! service. The shared suites also run with every runtime on gVisor (scripts/test.sh's gvisor
//! step); these check what differs: the kernel, the engine's runtime, the process limit that
//! gVisor enforces inside, and the service's operations on such a sandbox.

mod common;

use common::{base_config, docker, TestService};
use serde_json::{json, Value};

fn config() -> String {
    base_config(
        4,
        &format!(
            "[runtimes.sh-gvisor]\nimage = \"{busybox}\"\nisolation = \"gvisor\"\n\n\
             [runtimes.python-gvisor]\nimage = \"{python}\"\nmem_limit = \"256m\"\ninterpreter = [\"python3\"]\nisolation = \"gvisor\"\n\n\
             [runtimes.catalogue-gvisor]\nruntime = \"python-gvisor\"\n",
            busybox = common::busybox_image(),
            python = common::python_image(),
        ),
    )
}

async fn stdout(service: &TestService, id: &str, command: &str) -> String {
    let result = service.sh(id, command).await;
    assert_eq!(result["exit_code"], 0, "{command}: {result}");
    result["stdout"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn each_tier_runs_on_its_own_kernel_and_says_which() {
    let service = TestService::start(&config());
    let runtimes = service.get_json("/v1/runtimes").await;
    let tier = |name: &str| {
        runtimes["runtimes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["isolation"].clone())
            .unwrap_or_else(|| panic!("no {name} in {runtimes}"))
    };
    assert_eq!(
        (tier("sh"), tier("sh-gvisor")),
        (json!("runc"), json!("gvisor"))
    );
    // The catalogue's gVisor recipe gives its tier to the runtimes built from it.
    assert_eq!(tier("catalogue-gvisor"), json!("gvisor"));

    let runc = service.open("sh").await;
    let gvisor = service.open("sh-gvisor").await;
    let host_kernel = std::fs::read_to_string("/proc/version").unwrap();
    assert_eq!(
        stdout(&service, &runc, "cat /proc/version").await,
        host_kernel
    );
    let own = stdout(&service, &gvisor, "cat /proc/version").await;
    assert!(own.contains("gvisor"), "a gVisor sandbox's kernel: {own}");
    assert_ne!(own, host_kernel);
    let engine_runtime = docker(&[
        "inspect",
        "--format",
        "{{.HostConfig.Runtime}}",
        &format!("sandboxd-{gvisor}"),
    ]);
    assert_eq!(engine_runtime.trim(), "runsc");
    // Memory is counted against the host's limit of each: runc's is the runtime's (128m),
    // gVisor's holds its kernel and memory-backed places too, as the engine was told.
    let service = &service;
    let limit = |id: &str| {
        let path = format!("/v1/sessions/{id}");
        async move { service.get_json(&path).await["memory_limit_bytes"].as_u64() }
    };
    assert_eq!(limit(&runc).await, Some(128 << 20));
    let engine_memory = docker(&[
        "inspect",
        "--format",
        "{{.HostConfig.Memory}}",
        &format!("sandboxd-{gvisor}"),
    ]);
    let gvisor_limit = limit(&gvisor).await.unwrap();
    assert_eq!(gvisor_limit.to_string(), engine_memory.trim());
    assert!(gvisor_limit > 128 << 20, "{gvisor_limit}");
    let log = service
        .get_json(&format!("/v1/sessions/{gvisor}/activity"))
        .await;
    let opened = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["action"] == "open")
        .cloned();
    assert_eq!(
        opened.map(|entry| entry["target"].clone()),
        Some(json!("sh-gvisor (gvisor)"))
    );

    let config = service.state_dir.path().join("config.toml");
    let checked = std::process::Command::new(common::sandboxd_bin())
        .args(["serve", "--check", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&checked.stdout);
    assert!(
        printed.contains("on gVisor")
            && printed.contains("catalogue-gvisor, python-gvisor, sh-gvisor"),
        "{printed}"
    );
}

#[tokio::test]
async fn a_gvisor_sandbox_serves_commands_files_pause_and_forks() {
    let service = TestService::start(&config());
    let id = service.open("python-gvisor").await;
    assert_eq!(
        stdout(&service, &id, "python3 -c 'print(6 * 7)'").await,
        "42\n"
    );
    let written = service
        .put(&format!("/v1/sessions/{id}/files/content?path=notes/a.txt"))
        .body("kept across a pause\n")
        .send()
        .await
        .unwrap();
    assert!(written.status().is_success(), "{}", written.status());
    for action in ["pause", "resume"] {
        let answer = service
            .post(&format!("/v1/sessions/{id}/{action}"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert!(
            answer.status().is_success(),
            "{action}: {}",
            answer.status()
        );
    }
    let read = service
        .get(&format!("/v1/sessions/{id}/files/content?path=notes/a.txt"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(read, "kept across a pause\n");

    let forked: Value = service
        .post(&format!("/v1/sessions/{id}/fork"))
        .json(&json!({"count": 1}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let copy = forked["sessions"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a fork: {forked}"))
        .to_string();
    assert_eq!(
        stdout(&service, &copy, "cat /workspace/notes/a.txt").await,
        "kept across a pause\n"
    );
    assert!(stdout(&service, &copy, "cat /proc/version")
        .await
        .contains("gvisor"));
}

#[tokio::test]
async fn the_process_limit_holds_inside_gvisor_and_kill_all_frees_it() {
    let service = TestService::start(&config());
    let id = service.open("sh-gvisor").await;
    // 64 is the config's pids_limit; gVisor enforces it for the sandbox's user (on the host
    // the sandbox has room for gVisor's stubs beside it).
    let bomb = service
        .exec(
            &id,
            json!({"command": "n=0; while [ $n -lt 200 ]; do sleep 60 & n=$((n+1)); done", "timeout_secs": 10}),
        )
        .await
        .1;
    assert!(
        bomb["stderr"]
            .as_str()
            .unwrap_or_default()
            .contains("can't fork"),
        "the limit stopped the loop: {bomb}"
    );
    let full = service.exec(&id, json!({"command": "true"})).await.1;
    assert_eq!(full["error"]["code"], "spawn_failed", "{full}");
    assert!(
        full["error"]["message"]
            .as_str()
            .unwrap()
            .contains("process limit"),
        "{full}"
    );
    let killed = service
        .delete(&format!("/v1/sessions/{id}/processes"))
        .send()
        .await
        .unwrap();
    assert!(killed.status().is_success(), "{}", killed.status());
    let count: u64 = stdout(&service, &id, "ps | wc -l")
        .await
        .trim()
        .parse()
        .unwrap();
    assert!(count < 8, "the sleeps are gone: {count} lines of ps");
}
