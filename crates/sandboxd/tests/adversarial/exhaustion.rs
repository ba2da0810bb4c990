//! Resource exhaustion.

use crate::common::{
    agent_program, base_config, docker_only, on_gvisor, on_kubernetes, TestService, TOKEN,
};
use crate::harness::{bounded, disk_usage, mib, on_tmpfs, report, Host, MIB, OUTPUT_CAP};
use crate::sandbox_helpers::{
    answers_within, cgroup_file, cpu_used_ns, host_memory_limit, install_program, platform_dir,
    post_raw, processes_inside_at_most, raw_http, read_number, rss_bytes, sandbox_cgroup,
    settled_at_most, stat_value, stdout, upload, upload_refused, writable_layer, Peak,
};
use serde_json::json;
use std::process::Command;
use std::time::{Duration, Instant};

/// The ceilings `base_config` gives the `sh` runtime.
const MEM_LIMIT: u64 = 128 * MIB;
const PIDS_LIMIT: u64 = 64;
const CPUS: f64 = 0.5;
const TMPFS_SIZE: u64 = 16 * MIB;

#[tokio::test]
async fn fork_bomb_in_c_stops_at_the_pids_ceiling() {
    if !docker_only(
        "fork bomb against the runtime's pids_limit",
        "a pod's processes are capped by its node's podPidsLimit, not by the runtime's pids_limit (see README, Running on Kubernetes)",
    ) {
        return;
    }
    let attack = "fork bomb (static C, every process forks in a loop)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(90, attack, async {
        let id = service.open("sh").await;
        install_program(&service, &id, "bomb").await;
        let container = sandbox_cgroup(&id);
        let pids = cgroup_file("pids", &container, "pids.current").expect("pids cgroup");
        let events = cgroup_file("pids", &container, "pids.events");
        // On gVisor the limit is inside (its kernel refuses the sandbox user's forks past
        // it) and the host counts gVisor's own threads and a stub per process beside them,
        // which it keeps for reuse after the processes end: the host's ceiling is its
        // cgroup's, and what is left is counted inside.
        let (ceiling, idle) = if on_gvisor() {
            let host_max = cgroup_file("pids", &container, "pids.max")
                .and_then(|p| read_number(&p))
                .expect("the sandbox's pids.max");
            (host_max, read_number(&pids).expect("pids.current"))
        } else {
            (PIDS_LIMIT, 0)
        };
        let settled = |max: u64| {
            let (service, id, pids) = (&service, id.clone(), pids.clone());
            async move {
                let within = Duration::from_secs(10);
                if on_gvisor() {
                    processes_inside_at_most(service, &id, max, within).await
                } else {
                    settled_at_most(&pids, max, within).await
                }
            }
        };

        // The bomb ends itself after 3 s and says how many forks worked.
        let watched = pids.clone();
        let peak = Peak::watch(move || read_number(&watched), Duration::from_millis(20));
        let (status, result) = service
            .exec(&id, json!({"command": "./bomb 3", "timeout_secs": 20}))
            .await;
        let peak = peak.stop().await;
        assert_eq!(status, 200, "{result}");
        let counts = stdout(&result).trim().to_string();
        let number = |key: &str| -> u64 {
            counts
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
                .unwrap_or_else(|| panic!("the bomb's report: {result}"))
        };
        let (forks, failures) = (number("forks"), number("failures"));
        // The kernel adds a fork's charge to pids.current before it compares it with the
        // limit, and takes it back when over: a reader may see one extra per CPU forking.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        assert!(
            peak <= ceiling + cpus,
            "the container had {peak} processes, over its pids limit {ceiling}"
        );
        // Forks succeed again as processes end at the deadline, so the total may pass the
        // ceiling; the processes alive at once may not.
        assert!(failures > 0, "the ceiling refused forks: {counts}");
        assert!(forks < 4096, "the bomb's own safety net was reached: {counts}");
        let refused_by_cgroup = events
            .as_deref()
            .and_then(|p| stat_value(p, "max"))
            .unwrap_or(0);

        // A bomb that outlives its command's timeout dies with its process group.
        let (status, killed) = service
            .exec(&id, json!({"command": "./bomb 60", "timeout_secs": 3}))
            .await;
        assert_eq!(status, 200, "{killed}");
        assert_eq!(killed["timed_out"], true, "{killed}");
        let recovered = answers_within(&service, &id, Duration::from_secs(20))
            .await
            .expect("the session answers again after the bomb");
        let left = settled(16).await;
        assert!(left <= 16, "{left} processes (threads included) left after the bomb was killed");

        // A bomb whose children leave the process group (setsid) outlives the timeout: the
        // pids ceiling holds, and killing every process in the sandbox frees the session
        // (this bomb would otherwise run for a minute).
        let other = service.open("sh").await;
        let (status, escaped) = service
            .exec(&id, json!({"command": "./bomb 60 escape", "timeout_secs": 2}))
            .await;
        assert_eq!(status, 200, "{escaped}");
        assert_eq!(escaped["timed_out"], true, "{escaped}");
        let escaped_processes = read_number(&pids).expect("the sandbox's pids.current");
        assert!(
            escaped_processes <= ceiling + cpus,
            "{escaped_processes} processes"
        );
        // The escaped bomb outlived its command's timeout: the sandbox is full of it.
        assert!(
            escaped_processes > idle + PIDS_LIMIT / 2,
            "the escaped bomb is running: {escaped_processes} processes"
        );
        let neighbour = service.sh(&other, "echo alive").await;
        assert_eq!(neighbour["stdout"], "alive\n", "another session is unaffected");
        let kill_started = Instant::now();
        let killed = service.kill_all_processes(&id, 1).await;
        answers_within(&service, &id, Duration::from_secs(5))
            .await
            .expect("the session answers once every process was killed");
        let freed_after = kill_started.elapsed();
        let after_kill = settled(16).await;
        assert!(after_kill <= 16, "{after_kill} processes left after killing all");
        let log = service.get_json(&format!("/v1/sessions/{id}/activity")).await;
        assert!(
            log["entries"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["action"] == "process_kill_all" && e["status"] == "ok"),
            "{log}"
        );
        format!(
            "pids peaked at {peak}/{ceiling} on the host (runtime limit {PIDS_LIMIT}); {forks} forks succeeded, {failures} refused (cgroup pids.events max={refused_by_cgroup}); a 60 s bomb was killed at its 3 s timeout; session answered again after {} ms with {left} processes; a bomb escaping its process group (setsid) survived its 2 s timeout with {escaped_processes} processes while another session answered; DELETE .../processes killed {killed} processes (none remaining) and the session answered again {} ms later with {after_kill} processes",
            recovered.as_millis(),
            freed_after.as_millis()
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn memory_bomb_is_oom_killed_and_the_session_survives() {
    let attack = "memory bomb (tail /dev/zero, dd bs=512M)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        let container = sandbox_cgroup(&id);
        let agent_before = service.sh(&id, &format!("pidof {}", agent_program())).await;
        let mut outcomes = Vec::new();
        for command in [
            "tail /dev/zero",
            "dd if=/dev/zero of=/dev/null bs=512M count=1",
        ] {
            let (status, result) = service
                .exec(&id, json!({"command": command, "timeout_secs": 30}))
                .await;
            assert_eq!(status, 200, "{result}");
            assert_eq!(result["timed_out"], false, "{command}: {result}");
            if on_gvisor() {
                // gVisor's kernel has no OOM killer and a host OOM kill ends the whole
                // sandbox: a process's address space is capped at mem_limit, so the bomb's
                // allocation is refused and it ends itself.
                assert_eq!(result["oom_killed"], false, "{command}: {result}");
                assert_eq!(result["exit_code"], 1, "{command}: {result}");
                let stderr = result["stderr"].as_str().unwrap_or("");
                assert!(stderr.contains("out of memory"), "{command}: {result}");
                outcomes.push(format!(
                    "`{command}` refused its memory ({}) after {} ms",
                    stderr.trim(),
                    result["duration_ms"]
                ));
            } else {
                assert_eq!(result["oom_killed"], true, "{command}: {result}");
                outcomes.push(format!(
                    "`{command}` oom_killed after {} ms",
                    result["duration_ms"]
                ));
            }
        }
        let max_usage = cgroup_file("memory", &container, "memory.max_usage_in_bytes")
            .or_else(|| cgroup_file("memory", &container, "memory.peak"))
            .and_then(|p| read_number(&p))
            .expect("the sandbox's peak memory (memory.max_usage_in_bytes or memory.peak)");
        let limit = host_memory_limit(&container);
        assert!(
            max_usage <= limit,
            "the container used {max_usage} bytes, over its limit {limit}"
        );
        if on_gvisor() {
            // Never reached: the host killed nothing.
            assert!(max_usage < limit, "the sandbox reached its host limit");
            let oom_kills = cgroup_file("memory", &container, "memory.oom_control")
                .or_else(|| cgroup_file("memory", &container, "memory.events"))
                .and_then(|p| stat_value(&p, "oom_kill"));
            assert_eq!(oom_kills, Some(0), "the host OOM-killed a process of gVisor");
        }
        let agent_after = service.sh(&id, &format!("pidof {}", agent_program())).await;
        assert_eq!(
            agent_before["stdout"], agent_after["stdout"],
            "the OOM killer chose the bomb, not the agent"
        );
        let info = service.get_json(&format!("/v1/sessions/{id}")).await;
        assert_eq!(info["state"], "running");
        format!(
            "{}; peak memory {} of {} limit on the host (runtime mem_limit {}); the agent (pid {}) survived and the session answers",
            outcomes.join(", "),
            mib(max_usage),
            mib(limit),
            mib(MEM_LIMIT),
            stdout(&agent_after).trim()
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn cpu_spin_is_held_to_the_quota() {
    let attack = "CPU spin (two busy loops for 2 s, cpus = 0.5)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        let container = sandbox_cgroup(&id);
        let throttled = || {
            cgroup_file("cpu", &container, "cpu.stat")
                .and_then(|p| stat_value(&p, "nr_throttled"))
                .expect("the sandbox's cpu.stat has nr_throttled")
        };
        let (used_before, throttled_before) = (cpu_used_ns(&container), throttled());
        let (status, result) = service
            .exec(
                &id,
                json!({"command": "while :; do :; done & while :; do :; done", "timeout_secs": 2}),
            )
            .await;
        assert_eq!(status, 200, "{result}");
        assert_eq!(result["timed_out"], true, "{result}");
        // Both loops are gone with the command's process group.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let used = (cpu_used_ns(&container) - used_before) as f64 / 1e9;
        let throttled = throttled() - throttled_before;
        let wall = result["duration_ms"].as_f64().unwrap() / 1000.0;
        let allowed = CPUS * (wall + 0.3) + 0.2;
        assert!(
            used <= allowed,
            "two spinning loops used {used:.2} s of CPU in {wall:.2} s; the quota allows {allowed:.2} s"
        );
        // The loops did spin, and the quota is what held them: periods were throttled.
        assert!(
            used >= CPUS * wall / 4.0,
            "two spinning loops used only {used:.2} s of CPU in {wall:.2} s"
        );
        assert!(throttled > 0, "the quota never throttled the loops");
        let check = answers_within(&service, &id, Duration::from_secs(10)).await;
        assert!(check.is_some(), "the session answers after the spin");
        format!(
            "{used:.2} s of CPU in {wall:.2} s of wall time (quota {CPUS} CPU, unthrottled would be ~{:.1} s); throttled {throttled} periods",
            2.0 * wall
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn disk_fill_stops_at_the_tmpfs_caps_and_never_reaches_the_host() {
    let attack = "disk fill (every writable place, shell and files API)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(90, attack, async {
        let id = service.open("sh").await;
        let upper = writable_layer(&service, &id);
        let upper_before = disk_usage(&upper);

        // Every mount point the sandbox user can create a file in is memory-backed.
        let writable = service
            .sh(
                &id,
                r#"while read dev mnt type opts rest; do [ -d "$mnt" ] && touch "$mnt/.probe" 2>/dev/null && rm -f "$mnt/.probe" && echo "$mnt $type"; done < /proc/mounts"#,
            )
            .await;
        let writable: Vec<(String, String)> = stdout(&writable)
            .lines()
            .filter_map(|l| {
                let (m, t) = l.split_once(' ')?;
                Some((m.to_string(), t.to_string()))
            })
            .collect();
        for (mount, kind) in &writable {
            // On gVisor the working directory's volume (/workspace and the home) is the
            // host's tmpfs served to its kernel by the gofer, which it shows as 9p: its host
            // side must be memory.
            let served_tmpfs = on_gvisor() && kind == "9p" && {
                let container = &service.containers()[0];
                container["Mounts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|m| m["Destination"] == mount.as_str())
                    .and_then(|m| m["Source"].as_str())
                    .is_some_and(|source| on_tmpfs(std::path::Path::new(source)))
            };
            assert!(
                kind == "tmpfs" || kind == "mqueue" || served_tmpfs,
                "{mount} is writable and is {kind}, not memory-backed"
            );
        }

        // Fill each place with 100 MiB of zeros, well over every cap.
        let places = [
            "/workspace",
            "/tmp",
            "/dev/shm",
            "/",
            "/home",
            "/var/tmp",
            "/etc",
            "/root",
            "/.sandboxd",
            "/usr/local",
            "/dev",
        ];
        let script = places
            .iter()
            .map(|p| {
                let file = format!("{}/fill", p.trim_end_matches('/'));
                format!(
                    r#"e=$(dd if=/dev/zero of={file} bs=1M count=100 2>&1 | grep -o 'No space left on device\|Read-only file system\|Permission denied\|No such file or directory' | head -1); s=$(stat -c %s {file} 2>/dev/null || echo 0); echo "{p}|$s|$e"; rm -f {file}"#
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let (status, filled) = service
            .exec(&id, json!({"command": script, "timeout_secs": 60}))
            .await;
        assert_eq!(status, 200, "{filled}");
        let mut observed = Vec::new();
        for line in stdout(&filled).lines() {
            let mut parts = line.splitn(3, '|');
            let (place, size, error) = (
                parts.next().unwrap(),
                parts.next().unwrap().parse::<u64>().unwrap_or(0),
                parts.next().unwrap_or(""),
            );
            let cap = match place {
                "/workspace" | "/tmp" => Some(TMPFS_SIZE),
                "/dev/shm" => Some(64 * MIB),
                _ => None,
            };
            match cap {
                Some(cap) => {
                    assert_eq!(error, "No space left on device", "{line}");
                    assert!(size <= cap, "{place} took {size} bytes, over its {cap} cap");
                    observed.push(format!("{place} full at {}", mib(size)));
                }
                None => {
                    assert!(
                        matches!(
                            error,
                            "Read-only file system"
                                | "Permission denied"
                                | "No such file or directory"
                        ),
                        "{line}"
                    );
                    assert_eq!(size, 0, "{line}");
                    observed.push(format!("{place}: {error}"));
                }
            }
        }
        assert_eq!(observed.len(), places.len(), "{filled}");

        // Through the files API: over the cap is `no_space`, the read-only root `read_only`.
        let twenty_mib = vec![7u8; 20 << 20];
        let (status, body) = upload_refused(&service, &id, "big", &twenty_mib).await;
        assert_eq!(status, 507, "{body}");
        assert_eq!(body["error"]["code"], "no_space", "{body}");
        let (status, body) = upload_refused(&service, &id, "/tmp/big", &twenty_mib).await;
        assert_eq!(status, 507, "{body}");
        let (status, body) = upload(&service, &id, "/etc/passwd", "x").await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "read_only", "{body}");
        let left = service
            .sh(&id, "du -sk /workspace /tmp | awk '{s+=$1} END {print s}'")
            .await;
        let left_kib: u64 = stdout(&left).trim().parse().unwrap_or(u64::MAX);
        assert!(left_kib < 64, "a refused upload left {left_kib} KiB behind");

        let upper_growth = disk_usage(&upper).saturating_sub(upper_before);
        assert!(
            upper_growth < MIB,
            "the writable layer grew by {upper_growth} bytes"
        );
        format!(
            "writable mounts: {}; {}; files API: 20 MiB upload -> 507 no_space (nothing left), /etc/passwd -> 403 read_only; container layer grew {} bytes",
            writable
                .iter()
                .map(|(m, t)| format!("{m} ({t})"))
                .collect::<Vec<_>>()
                .join(", "),
            observed.join(", "),
            upper_growth
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn inode_flood_is_charged_to_the_sandbox_memory() {
    let attack = "inode flood (empty files in /tmp until something gives)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(90, attack, async {
        let id = service.open("python").await;
        let container = sandbox_cgroup(&id);
        let program = r#"
import os, sys
n = 0
try:
    while n < 3_000_000:
        open(f"/tmp/f{n}", "w").close()
        n += 1
    print("created", n)
except OSError as e:
    print("stopped", n, e.strerror)
"#;
        let (status, result) = service
            .exec(
                &id,
                json!({"argv": ["python3", "-c", program], "timeout_secs": 45}),
            )
            .await;
        // Kubernetes caps a memory-backed emptyDir's size, not its inodes: the flood fills the
        // pod's memory, and once the kernel has killed the creator, which frees nothing, the
        // next page the agent needs may get it killed too. gVisor drops a tmpfs mount's
        // `nr_inodes`: the flood fills the sandbox's memory until the host ends the whole
        // sandbox (SECURITY.md). On both, the host is what this test holds to its limits.
        let agent_killed = (on_kubernetes() || on_gvisor())
            && status == 502
            && result["error"]["code"] == "agent_unavailable";
        assert!(status == 200 || agent_killed, "{status}: {result}");
        let ended = if agent_killed {
            "the agent was killed after the creator".to_string()
        } else if result["oom_killed"] == true {
            "the creator was OOM-killed".to_string()
        } else if result["timed_out"] == true {
            "the creator timed out".to_string()
        } else {
            stdout(&result).trim().to_string()
        };
        if agent_killed && on_gvisor() {
            // The sandbox, its cgroup with it, is gone: the host's check below is what holds.
            return format!("{ended}: gVisor's sandbox ended at its host memory limit");
        }
        let max_usage = cgroup_file("memory", &container, "memory.max_usage_in_bytes")
            .or_else(|| cgroup_file("memory", &container, "memory.peak"))
            .and_then(|p| read_number(&p))
            .expect("the sandbox's peak memory (memory.max_usage_in_bytes or memory.peak)");
        let limit = host_memory_limit(&container);
        assert!(
            max_usage <= limit,
            "the sandbox used {}, over its {} limit",
            mib(max_usage),
            mib(limit)
        );
        // The sandbox is at its ceiling now: even `df` may fail to start.
        let (_, inodes) = service
            .exec(&id, json!({"command": "df -i /tmp | tail -1", "timeout_secs": 10}))
            .await;
        let used_inodes = stdout(&inodes)
            .split_whitespace()
            .nth(2)
            .unwrap_or("?")
            .to_string();
        format!(
            "{ended}; {used_inodes} inodes in /tmp; the sandbox's memory peaked at {} (limit {} on the host: tmpfs inodes are charged to its cgroup); the host is untouched, the session is stuck near its ceiling until closed",
            mib(max_usage),
            mib(limit)
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn output_flood_is_capped_and_the_service_stays_small() {
    let attack = "output flood (yes on stdout and stderr for 3 s)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        let engine_dir = platform_dir(&service, &id);
        let engine_dir_before = disk_usage(&engine_dir);
        let pid = service.pid();
        let rss_before = rss_bytes(pid).unwrap();
        let peak = Peak::watch(move || rss_bytes(pid), Duration::from_millis(50));
        let (status, result) = service
            .exec(
                &id,
                json!({"command": "yes >&2 & yes", "timeout_secs": 3}),
            )
            .await;
        let rss_peak = peak.stop().await;
        assert_eq!(status, 200, "{result}");
        assert_eq!(result["timed_out"], true, "{result}");
        assert_eq!(result["stdout_truncated"], true);
        assert_eq!(result["stderr_truncated"], true);
        assert_eq!(result["stdout"].as_str().unwrap().len(), OUTPUT_CAP);
        assert_eq!(result["stderr"].as_str().unwrap().len(), OUTPUT_CAP);
        let grew = rss_peak.saturating_sub(rss_before);
        assert!(
            grew < 64 * MIB,
            "the service grew by {} during the flood",
            mib(grew)
        );
        if docker_only(
            "the container's log driver is none",
            "the kubelet always keeps container logs; the pod's log directory is measured instead",
        ) {
            assert_eq!(
                service.containers()[0]["HostConfig"]["LogConfig"]["Type"],
                "none"
            );
        }
        let engine_dir_growth = disk_usage(&engine_dir).saturating_sub(engine_dir_before);
        assert!(
            engine_dir_growth < 64 << 10,
            "the container's directory on the host grew by {engine_dir_growth} bytes"
        );
        assert!(answers_within(&service, &id, Duration::from_secs(10))
            .await
            .is_some());
        format!(
            "each stream cut at {} KiB and flagged truncated; service RSS {} -> peak {} (+{}); the platform's directory of the sandbox on the host grew {engine_dir_growth} bytes",
            OUTPUT_CAP >> 10,
            mib(rss_before),
            mib(rss_peak),
            mib(grew)
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn uploads_over_the_cap_are_refused() {
    let attack = "uploads over the cap (declared, chunked, exec stdin, create body)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, "max_upload_bytes = \"1m\""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        let two_mib = vec![b'x'; 2 << 20];

        let (declared, body) = upload_refused(&service, &id, "declared", &two_mib).await;
        assert_eq!(declared, 413, "{body}");
        assert_eq!(body["error"]["code"], "payload_too_large");

        // Chunked: no length announced, so the service must count.
        let mut chunked = Vec::new();
        for chunk in two_mib.chunks(64 << 10) {
            chunked.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
            chunked.extend_from_slice(chunk);
            chunked.extend(b"\r\n");
        }
        chunked.extend(b"0\r\n\r\n");
        let head = format!(
            "PUT /v1/sessions/{id}/files/content?path=chunked HTTP/1.1\r\nHost: {{address}}\r\nAuthorization: Bearer {TOKEN}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        );
        let (streamed, _, body) = raw_http(&service, &head, &chunked).await;
        assert_eq!(streamed, 413, "{}", String::from_utf8_lossy(&body));

        let listing = service.sh(&id, "ls -A /workspace").await;
        assert_eq!(stdout(&listing), "", "a refused upload left a file behind");

        // Bodies over a route's limit, sent by hand: the service answers before reading them.
        let stdin = json!({"argv": ["wc", "-c"], "stdin": "x".repeat(3 << 20)});
        let (stdin_status, stdin_type) = post_raw(
            &service,
            &format!("/v1/sessions/{id}/exec"),
            serde_json::to_vec(&stdin).unwrap(),
        )
        .await;
        assert_eq!(stdin_status, 413);
        let create = json!({"runtime": "sh", "tenant": "t".repeat(100 << 10)});
        let (create_status, create_type) = post_raw(
            &service,
            "/v1/sessions",
            serde_json::to_vec(&create).unwrap(),
        )
        .await;
        assert_eq!(create_status, 413);
        assert_eq!(service.sandbox_count(), 1, "nothing more was created");
        format!(
            "2 MiB with Content-Length -> {declared} payload_too_large, chunked -> {streamed} (nothing written), 3 MiB exec stdin -> {stdin_status} ({stdin_type}), 100 KiB create body -> {create_status} ({create_type})"
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn a_compressed_bomb_is_bounded_by_the_tmpfs_caps() {
    let attack = "compressed bomb (256 MiB of zeros gzipped, gunzip in the sandbox)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, "max_upload_bytes = \"1m\""));
    let outcome = bounded(90, attack, async {
        let id = service.open("sh").await;
        let upper = writable_layer(&service, &id);
        let upper_before = disk_usage(&upper);
        let bomb = Command::new("sh")
            .args(["-c", "head -c 268435456 /dev/zero | gzip -9"])
            .output()
            .expect("gzip on the host")
            .stdout;
        assert!(bomb.len() < 1 << 20, "the bomb fits under the upload cap");
        let (status, body) = upload(&service, &id, "bomb.gz", bomb.clone()).await;
        assert_eq!(status, 200, "{body}");

        let mut observed = Vec::new();
        for target in ["/workspace/out", "/tmp/out"] {
            let result = service
                .sh(
                    &id,
                    &format!("gunzip -c bomb.gz > {target}; echo rc=$?; stat -c %s {target}; rm -f {target}"),
                )
                .await;
            let out = stdout(&result);
            let size: u64 = out.lines().nth(1).unwrap_or("0").trim().parse().unwrap();
            assert!(!out.starts_with("rc=0"), "gunzip to {target} succeeded: {result}");
            assert!(
                result["stderr"]
                    .as_str()
                    .unwrap()
                    .contains("No space left on device"),
                "{result}"
            );
            assert!(size <= TMPFS_SIZE, "{target} reached {size} bytes");
            observed.push(format!("{target} stopped at {} (ENOSPC)", mib(size)));
        }
        // Expanded to a pipe, it is only CPU time, bounded by the command's timeout.
        let counted = service
            .exec(
                &id,
                json!({"command": "gunzip -c bomb.gz | wc -c", "timeout_secs": 30}),
            )
            .await
            .1;
        let upper_growth = disk_usage(&upper).saturating_sub(upper_before);
        assert!(upper_growth < MIB, "the writable layer grew by {upper_growth}");
        format!(
            "{} KiB upload; {}; to a pipe: {} bytes counted (timed_out {}); container layer grew {upper_growth} bytes",
            bomb.len() >> 10,
            observed.join(", "),
            stdout(&counted).trim(),
            counted["timed_out"]
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}
