//! What happens inside a sandbox: commands, limits, attacks on the host, and the container's
//! real settings read back from the engine.

mod common;

use common::{base_config, TestService};
use serde_json::{json, Value};

#[tokio::test]
async fn a_command_whose_client_went_away_is_killed_and_logged() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let gave_up = service
        .post(&format!("/v1/sessions/{id}/exec"))
        .json(&json!({"command": "sleep 37", "timeout_secs": 60}))
        .timeout(std::time::Duration::from_millis(800))
        .send()
        .await;
    assert!(gave_up.unwrap_err().is_timeout());

    // The command dies with its connection to the agent, and the log says what happened.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let running = service
            .sh(&id, "ps -o args | grep -c '^sleep 37' || true")
            .await;
        if running["stdout"] == "0\n" {
            break;
        }
        assert!(
            std::time::Instant::now() < give_up,
            "still running: {running}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let log = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    let entries = log["entries"].as_array().unwrap();
    let abandoned = entries
        .iter()
        .find(|e| e["action"] == "exec" && e["target"] == "sleep")
        .unwrap_or_else(|| panic!("no entry for the abandoned command: {log}"));
    assert_eq!(abandoned["status"], "cancelled", "{abandoned}");
    assert_eq!(
        abandoned["error"],
        "cancelled: the client went away or cancelled the call"
    );
}

#[tokio::test]
async fn commands_run_with_exit_codes_streams_stdin_env_and_cwd() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;

    let hello = service.sh(&id, "echo hi; echo oops >&2; exit 3").await;
    assert_eq!(hello["exit_code"], 3);
    assert_eq!(hello["stdout"], "hi\n");
    assert_eq!(hello["stderr"], "oops\n");
    assert_eq!(hello["timed_out"], false);
    assert_eq!(hello["oom_killed"], false);
    assert!(hello["duration_ms"].as_u64().is_some());

    let (status, argv) = service
        .exec(&id, json!({"argv": ["echo", "a b", "$HOME"]}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        argv["stdout"], "a b $HOME\n",
        "argv is not run through a shell"
    );

    let (_, stdin) = service
        .exec(&id, json!({"argv": ["cat"], "stdin": "piped in"}))
        .await;
    assert_eq!(stdin["stdout"], "piped in");

    let (_, env) = service
        .exec(&id, json!({"command": "echo $GREETING; pwd; id -u", "env": {"GREETING": "hello"}, "cwd": "/tmp"}))
        .await;
    assert_eq!(env["stdout"], "hello\n/tmp\n61000\n");

    // Each command is its own process: a cd does not carry over.
    service.sh(&id, "cd /tmp").await;
    assert_eq!(service.sh(&id, "pwd").await["stdout"], "/workspace\n");

    // The working directory and /tmp are writable; the image's root is not.
    let writes = service
        .sh(
            &id,
            "echo data > /workspace/f && cat /workspace/f && touch /tmp/t && touch /etc/x",
        )
        .await;
    assert_eq!(writes["stdout"], "data\n");
    assert_ne!(writes["exit_code"], 0);
    assert!(
        writes["stderr"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{writes}"
    );

    let (status, missing) = service
        .exec(&id, json!({"argv": ["no-such-program"]}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(missing["error"]["code"], "spawn_failed");
    assert!(missing["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no-such-program"));

    for (body, code) in [
        (json!({}), "invalid_request"),
        (
            json!({"command": "true", "argv": ["true"]}),
            "invalid_request",
        ),
        (json!({"argv": []}), "invalid_request"),
        (json!({"command": "true", "image": "x"}), "invalid_request"),
        (
            json!({"command": "true", "timeout_secs": 61}),
            "timeout_too_large",
        ),
    ] {
        let (status, error) = service.exec(&id, body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(error["error"]["code"], code, "{body}: {error}");
    }
    let (_, too_long) = service
        .exec(&id, json!({"command": "true", "timeout_secs": 61}))
        .await;
    assert!(
        too_long["error"]["message"]
            .as_str()
            .unwrap()
            .contains("60"),
        "the message names the limit"
    );
}

#[tokio::test]
async fn python_runtime_runs_python() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("python").await;
    let result = service.sh(&id, "python3 -c 'print(1+1)'").await;
    assert_eq!(result["stdout"], "2\n");
    assert_eq!(result["exit_code"], 0);
}

#[tokio::test]
async fn python_runtime_has_pip_and_venv() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("python").await;
    let result = service
        .sh(
            &id,
            // The test runtime's /tmp is small: the venv borrows the system's pip.
            "python3 -m pip --version && python3 -m venv --system-site-packages --without-pip /tmp/env && /tmp/env/bin/python -m pip --version && /tmp/env/bin/python -c 'import sys; print(sys.prefix)'",
        )
        .await;
    assert_eq!(result["exit_code"], 0, "{result}");
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("pip "), "{stdout}");
    let pips = stdout
        .lines()
        .filter(|line| line.starts_with("pip "))
        .count();
    assert_eq!(pips, 2, "pip, and pip inside the venv: {stdout}");
    assert!(stdout.ends_with("/tmp/env\n"), "{stdout}");
}

#[tokio::test]
async fn a_sandbox_at_its_process_limit_says_so_and_kill_all_frees_it() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    // Sleepers that outlive their command fill the pids limit (64).
    let (status, _) = service
        .exec(
            &id,
            json!({"command": "i=0; while [ $i -lt 100 ]; do setsid sleep 1000 & i=$((i+1)); done 2>/dev/null; true", "timeout_secs": 10}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, refused) = service
        .exec(&id, json!({"command": "echo alive", "timeout_secs": 5}))
        .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], "spawn_failed");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("process limit of 64") && message.contains("kill-all"),
        "{message}"
    );
    service.kill_all_processes(&id, 50).await;
    let after = service.sh(&id, "echo alive").await;
    assert_eq!(after["stdout"], "alive\n");
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_its_children() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let started = std::time::Instant::now();
    let (status, result) = service
        .exec(
            &id,
            json!({"command": "sleep 1000 & sleep 1000; echo never", "timeout_secs": 2}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(result["timed_out"], true);
    assert_eq!(result["exit_code"], Value::Null);
    assert_eq!(result["signal"], 9);
    assert!(!result["stdout"].as_str().unwrap().contains("never"));
    assert!(started.elapsed().as_secs() < 10);
    let left = service
        .sh(&id, "ps -o comm | grep -c '^sleep' || true")
        .await;
    assert_eq!(
        left["stdout"], "0\n",
        "no sleep survives its command's timeout"
    );
}

#[tokio::test]
async fn output_over_the_cap_keeps_its_head_and_tail_and_is_flagged() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    // 200 KiB on stdout against a 64 KiB cap; stderr small.
    let result = service
        .sh(
            &id,
            "echo first; head -c 204800 /dev/zero | tr '\\0' x; echo; echo the-end; echo small >&2",
        )
        .await;
    assert_eq!(result["exit_code"], 0);
    let stdout = result["stdout"].as_str().unwrap();
    assert_eq!(stdout.len(), 64 << 10);
    assert!(stdout.starts_with("first\nxxx"), "{}", &stdout[..100]);
    assert!(
        stdout.ends_with("xxx\nthe-end\n"),
        "the real end: {}",
        &stdout[stdout.len() - 100..]
    );
    let marker = stdout.lines().find(|l| l.starts_with("[... ")).unwrap();
    let shown = (64 << 10) - marker.len() - 2;
    let written = 6 + 204800 + 1 + 8;
    assert!(
        marker.starts_with(&format!("[... {} bytes left out here", written - shown)),
        "{marker}"
    );
    assert_eq!(result["stdout_truncated"], true);
    assert_eq!(result["stderr"], "small\n");
    assert_eq!(result["stderr_truncated"], false);
}

#[tokio::test]
async fn a_commands_children_are_the_memory_victims_from_their_start_and_the_agent_is_not() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    // The inner shell forks at once; raised after the spawn, it kept the agent's score in
    // most runs. Its parent's parent is the agent.
    for _ in 0..5 {
        let result = service
            .sh(
                &id,
                "sh -c 'cat /proc/self/oom_score_adj; cat /proc/$PPID/oom_score_adj'; cat /proc/$PPID/oom_score_adj",
            )
            .await;
        assert_eq!(result["stdout"], "1000\n1000\n0\n", "{result}");
    }
}

#[tokio::test]
async fn a_memory_bomb_is_reported_as_oom() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    // dd allocates its whole 512 MiB block at once, far over the 128 MiB ceiling.
    let result = service
        .sh(&id, "dd if=/dev/zero of=/dev/null bs=512M count=1")
        .await;
    assert_eq!(result["oom_killed"], true, "{result}");
    assert_ne!(result["exit_code"], 0);
    let after = service.sh(&id, "echo alive").await;
    assert_eq!(
        after["stdout"], "alive\n",
        "the session survives the OOM kill"
    );
}

#[tokio::test]
async fn a_fork_bomb_leaves_the_session_usable_and_the_host_healthy() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let result = service
        .exec(
            &id,
            json!({"command": "bomb() { bomb | bomb & }; bomb", "timeout_secs": 5}),
        )
        .await
        .1;
    assert!(result.get("error").is_none(), "{result}");
    // The bomb's pieces are in the command's process group; whatever is left is killed by the
    // pids ceiling and reaped by init. The session must answer again within a few tries.
    let mut answered = None;
    for _ in 0..20 {
        let (status, body) = service
            .exec(&id, json!({"command": "echo alive", "timeout_secs": 5}))
            .await;
        if status == 200 && body["stdout"] == "alive\n" {
            answered = Some(body);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert!(
        answered.is_some(),
        "the session is usable after a fork bomb"
    );
    let host = std::process::Command::new("true")
        .status()
        .expect("the host can still fork");
    assert!(host.success());
    let info: Value = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert!(
        info["process_count"].as_u64().unwrap() <= 64,
        "the pids ceiling holds: {info}"
    );
}

#[tokio::test]
async fn the_agent_is_pid_1_reaps_orphans_and_stops_on_sigterm() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    // The subshell exits at once, so its `sleep` is handed to PID 1, which must reap it when it
    // ends; unreaped, such zombies would fill the process limit.
    let probe = service
        .sh(
            &id,
            "(sleep 0.2 >/dev/null 2>&1 &); sleep 1; \
             echo \"init: $(tr '\\0' ' ' < /proc/1/cmdline)\"; \
             echo \"zombies: $(grep -h '^State:' /proc/[0-9]*/status | grep -c Z)\"",
        )
        .await;
    let out = probe["stdout"].as_str().unwrap();
    assert!(out.contains("init: /.sandboxd-agent --connect"), "{probe}");
    assert!(
        out.contains("zombies: 0"),
        "an orphan was left unreaped: {probe}"
    );

    // `docker stop` signals PID 1, which passes SIGTERM on to the agent: the sandbox ends with
    // the agent's SIGTERM status (143), not the SIGKILL (137) the engine sends after the grace.
    // (Waited for by `docker wait`, started first: the service removes a stopped sandbox.)
    let container = service.containers()[0]["Id"].as_str().unwrap().to_string();
    let wait = std::process::Command::new("docker")
        .args(["wait", &container])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    common::docker(&["stop", "-t", "30", &container]);
    let status = wait.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout).trim(), "143");
}

#[tokio::test]
async fn the_container_is_created_with_the_hardened_profile() {
    let service = TestService::start(&base_config(2, ""));
    service.open("sh").await;
    let containers = service.containers();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    let host = &c["HostConfig"];
    assert_eq!(host["CapDrop"], json!(["ALL"]));
    assert_eq!(host["CapAdd"], Value::Null);
    assert_eq!(host["Privileged"], false);
    assert_eq!(host["ReadonlyRootfs"], true);
    assert_eq!(host["SecurityOpt"], json!(["no-new-privileges"]));
    assert_eq!(host["PidsLimit"], 64);
    assert_eq!(host["Memory"], 128 << 20);
    assert_eq!(
        host["MemorySwap"],
        128 << 20,
        "no swap beyond the memory ceiling"
    );
    assert_eq!(host["NanoCpus"], 500_000_000);
    assert_eq!(host["Init"], false, "the agent is its own init");
    assert_eq!(host["NetworkMode"], "none");
    assert_eq!(host["LogConfig"]["Type"], "none");
    let tmpfs = host["Tmpfs"].as_object().unwrap();
    assert!(tmpfs["/tmp"].as_str().unwrap().contains("size=16777216"));
    assert!(
        tmpfs["/tmp"].as_str().unwrap().contains("nr_inodes=4096"),
        "{tmpfs:?}"
    );
    assert_eq!(
        host["ShmSize"],
        16 << 20,
        "/dev/shm is capped like the other tmpfs"
    );
    // The working directory is a tmpfs volume of its own, mounted at /workspace and again at
    // /home/user, capped like the other tmpfs places and owned by the sandbox's uid.
    let volumes: Vec<(&str, &str)> = c["Mounts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["Type"] == "volume")
        .map(|m| {
            (
                m["Destination"].as_str().unwrap(),
                m["Name"].as_str().unwrap(),
            )
        })
        .collect();
    let at = |place| {
        volumes
            .iter()
            .find(|(to, _)| *to == place)
            .map(|(_, name)| *name)
    };
    let work = at("/workspace").expect("a volume at /workspace");
    assert_eq!(at("/home/user"), Some(work), "the same volume: {volumes:?}");
    let volume: Value =
        serde_json::from_str(&common::docker(&["volume", "inspect", work])).unwrap();
    let options = &volume[0]["Options"];
    assert_eq!(options["type"], "tmpfs", "{options}");
    let mount_options = options["o"].as_str().unwrap();
    assert!(
        mount_options.contains("size=16777216") && mount_options.contains("uid=61000"),
        "{mount_options}"
    );
    let binds: Vec<&str> = host["Binds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    assert!(
        binds.iter().all(|b| b.ends_with(":ro")),
        "every bind mount is read-only: {binds:?}"
    );
    assert_eq!(c["Config"]["User"], "61000:61000");
    assert_eq!(c["Config"]["Labels"]["org.sandboxd.managed"], "true");
    assert_eq!(c["Config"]["Labels"]["org.sandboxd.runtime"], "sh");
    assert_eq!(c["State"]["Running"], true);
}

#[tokio::test]
async fn a_sandbox_has_no_network_and_no_capabilities() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let net = service.sh(&id, "ip -o link | grep -v ' lo:' | wc -l").await;
    assert_eq!(
        net["stdout"].as_str().unwrap().trim(),
        "0",
        "only loopback exists: {net}"
    );
    let caps = service
        .sh(&id, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status")
        .await;
    for line in caps["stdout"].as_str().unwrap().lines() {
        assert!(
            line.ends_with("0000000000000000"),
            "no capabilities: {line}"
        );
    }
    let nnp = service.sh(&id, "grep NoNewPrivs /proc/self/status").await;
    assert!(nnp["stdout"].as_str().unwrap().contains('1'));
}
