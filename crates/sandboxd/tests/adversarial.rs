//! The adversarial suite: attacks from inside a sandbox and against the API, run against the
//! real engine through the real service. Each test is bounded in time, asserts the safe
//! outcome it expects, prints one line `attack: NAME -> OBSERVED OUTCOME`, and ends with a
//! check of the host: it still forks quickly, the sandboxes hold nothing on its disk (`df` is
//! compared too, strictly in CI: see [`strict_disk`]), the service closes every session and
//! no container of the test's service is left once it is gone.
//!
//! The C programs the attacks run (a fork bomb, an impostor agent) are in `tests/adversarial/`
//! and are compiled on the host with `gcc -static`, then uploaded into the sandbox. Nothing
//! here sends traffic beyond this machine: the network attempts are made from inside a
//! sandbox with network `none`, where they fail locally.

mod common;

use common::{
    agent_path, agent_program, base_config, docker, docker_only, on_kubernetes, TestService, TOKEN,
};
use serde_json::{json, Value};
use std::fmt::Display;
use std::future::Future;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MIB: u64 = 1 << 20;
/// The ceilings `base_config` gives the `sh` runtime.
const MEM_LIMIT: u64 = 128 * MIB;
const PIDS_LIMIT: u64 = 64;
const CPUS: f64 = 0.5;
const TMPFS_SIZE: u64 = 16 * MIB;
/// `policy.max_output_bytes` in `base_config`.
const OUTPUT_CAP: usize = 64 << 10;
/// How much the host's disk may grow during one test (the service itself writes its state
/// directory and a copy of the agent, about 12 MB).
const DISK_TOLERANCE: u64 = 50 * MIB;
/// What the instance's containers may hold on the host's disk, each: the mount points made in
/// the writable layer at creation and the engine's per-container files (hosts, resolv.conf).
const CONTAINER_DISK_ALLOWANCE: u64 = MIB;

// ---------------------------------------------------------------------------------------------
// The harness of the suite: bounds, reports, the host check.

/// Prints the line the suite's output lists for each attack.
fn report(attack: &str, outcome: impl Display) {
    println!("attack: {attack} -> {outcome}");
}

/// Runs an attack's test body, failing it when it takes longer than `secs`: a hang is a failure.
async fn bounded<T>(secs: u64, attack: &str, body: impl Future<Output = T>) -> T {
    match tokio::time::timeout(Duration::from_secs(secs), body).await {
        Ok(value) => value,
        Err(_) => panic!("attack {attack}: not over within {secs} s; something hangs"),
    }
}

/// The engine's data directory, e.g. `/var/lib/docker`.
fn docker_root() -> &'static str {
    static ROOT: OnceLock<String> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = docker(&["info", "--format", "{{.DockerRootDir}}"]);
        let root = root.trim();
        if root.is_empty() {
            "/var/lib/docker".to_string()
        } else {
            root.to_string()
        }
    })
}

/// Bytes used on the filesystem holding the engine's data (what `df` says).
fn disk_used() -> Option<u64> {
    let output = Command::new("df")
        .args(["-B1", "--output=used", docker_root()])
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

/// Disk space a directory tree takes (allocated blocks, like `du`), without following links.
fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let mut total = meta.blocks() * 512;
    if meta.is_dir() {
        if let Ok(entries) = std::fs::read_dir(path) {
            for entry in entries.flatten() {
                total += disk_usage(&entry.path());
            }
        }
    }
    total
}

/// What an instance's containers hold on the host's disk: everything the engine keeps for
/// them there. Their writable and work layers, the init layer the engine makes for each, the
/// engine's per-container directory (where a log driver other than `none` would write), and
/// any volume mounted into them.
fn containers_disk(containers: &[Value]) -> u64 {
    containers
        .iter()
        .map(|c| {
            let data = &c["GraphDriver"]["Data"];
            let mut places: Vec<PathBuf> = ["UpperDir", "WorkDir"]
                .iter()
                .filter_map(|key| data[key].as_str().map(PathBuf::from))
                .collect();
            // The first lower layer is the container's own init layer.
            if let Some(init) = data["LowerDir"]
                .as_str()
                .and_then(|l| l.split(':').next())
                .filter(|l| l.contains("-init"))
            {
                places.push(PathBuf::from(init));
            }
            if let Some(dir) = c["HostnamePath"]
                .as_str()
                .and_then(|p| Path::new(p).parent())
            {
                places.push(dir.to_path_buf());
            }
            for mount in c["Mounts"].as_array().into_iter().flatten() {
                if mount["Type"] == "volume" {
                    places.extend(mount["Source"].as_str().map(PathBuf::from));
                }
            }
            places.iter().map(|p| disk_usage(p)).sum::<u64>()
        })
        .sum()
}

/// Whether a growth of the host's disk beyond the tolerance fails the test: in CI (nothing
/// else runs) or when `SANDBOXD_TEST_STRICT_DISK=1`. On a shared development machine other
/// processes (builds) write gigabytes meanwhile, so `df` is only reported there; the exact
/// per-container figure is asserted everywhere.
fn strict_disk() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
        || std::env::var("SANDBOXD_TEST_STRICT_DISK").is_ok_and(|v| v == "1")
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

/// The host as it was before an attack.
struct Host {
    disk_used: Option<u64>,
}

impl Host {
    fn before() -> Host {
        Host {
            disk_used: disk_used(),
        }
    }

    /// After an attack: the host forks quickly, its disk did not grow, and the service closes
    /// every session and removes every container it made (checked again once it is gone).
    async fn check_after(self, attack: &str, mut service: TestService) {
        assert!(
            service.is_running(),
            "after {attack}: the service process is gone"
        );
        // The disk, while the containers still exist (removing them removes their layers).
        let containers = service.containers();
        let held = containers_disk(&containers);
        for container in &containers {
            assert_eq!(
                container["LogPath"].as_str().unwrap_or(""),
                "",
                "after {attack}: a container has a log file on the host"
            );
        }
        assert!(
            held <= CONTAINER_DISK_ALLOWANCE * containers.len().max(1) as u64,
            "after {attack}: the sandboxes hold {} on the host's disk",
            mib(held)
        );
        let disk_note = self.check_disk(attack, held);

        // Every session closed through the API takes its sandbox with it.
        let sessions = service.get_json("/v1/sessions").await;
        for session in sessions["sessions"].as_array().cloned().unwrap_or_default() {
            let id = session["id"].as_str().unwrap();
            let status = service
                .delete(&format!("/v1/sessions/{id}"))
                .send()
                .await
                .unwrap()
                .status();
            assert_eq!(status, 200, "after {attack}: closing session {id}");
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while service.sandbox_count() > 0 {
            assert!(
                Instant::now() < deadline,
                "after {attack}: sandboxes are left 20 s after closing every session"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let instance = service.instance_id.clone();
        drop(service);
        let left = docker(&[
            "ps",
            "-aq",
            "--filter",
            &format!("label=org.sandboxd.instance={instance}"),
        ]);
        assert!(
            left.trim().is_empty(),
            "after {attack}: containers left: {left}"
        );

        // The host can still start processes quickly.
        let started = Instant::now();
        for _ in 0..50 {
            let status = Command::new("/bin/true")
                .status()
                .expect("the host can fork");
            assert!(status.success());
        }
        let forks = started.elapsed();
        assert!(
            forks < Duration::from_secs(2),
            "after {attack}: 50 forks on the host took {forks:?}"
        );
        println!(
            "host after {attack}: 50 forks in {} ms; sandboxes held {} on disk{disk_note}; no sandbox left",
            forks.as_millis(),
            mib(held),
        );
    }

    /// Compares `df` with its figure before the attack (see [`strict_disk`]).
    fn check_disk(&self, attack: &str, held: u64) -> String {
        let (Some(before), Some(after)) = (self.disk_used, disk_used()) else {
            return "; df unavailable".into();
        };
        let change = (after as f64 - before as f64) / MIB as f64;
        let grew = after.saturating_sub(before);
        if grew <= DISK_TOLERANCE {
            return format!("; df {change:+.1} MiB");
        }
        assert!(
            !strict_disk(),
            "after {attack}: the host's disk grew by {} (tolerance {}); the sandboxes hold {} of it",
            mib(grew),
            mib(DISK_TOLERANCE),
            mib(held)
        );
        format!(
            "; df {change:+.1} MiB, over the tolerance but not enforced on a shared machine (other writers; the sandboxes' own share is {})",
            mib(held)
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers to drive sandboxes and read their figures on the host.

/// Compiles `tests/adversarial/NAME.c` statically on the host and returns the binary.
fn compile(name: &str) -> Vec<u8> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/adversarial")
        .join(format!("{name}.c"));
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join(name);
    let output = Command::new("gcc")
        .args(["-static", "-O2", "-o"])
        .arg(&binary)
        .arg(&source)
        .output()
        .expect("gcc runs (apt-get install gcc libc6-dev)");
    assert!(
        output.status.success(),
        "gcc {}: {}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read(&binary).unwrap()
}

/// Percent-encodes a path for the `path=` query parameter.
fn encoded(path: &str) -> String {
    path.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'.' | b'-' | b'_' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

async fn upload(
    service: &TestService,
    id: &str,
    path: &str,
    bytes: impl Into<reqwest::Body>,
) -> (u16, Value) {
    let response = service
        .put(&format!(
            "/v1/sessions/{id}/files/content?path={}",
            encoded(path)
        ))
        .body(bytes)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Uploads a body the service may refuse before reading it all (over a cap, a full disk).
async fn upload_refused(service: &TestService, id: &str, path: &str, bytes: &[u8]) -> (u16, Value) {
    let head = format!(
        "PUT /v1/sessions/{id}/files/content?path={} HTTP/1.1\r\nHost: {{address}}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        encoded(path),
        bytes.len()
    );
    let (status, _, body) = raw_http(service, &head, bytes).await;
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// POSTs a JSON body the service may refuse before reading it; returns the status and the
/// answer's content type.
async fn post_raw(service: &TestService, route: &str, body: Vec<u8>) -> (u16, String) {
    let head = format!(
        "POST {route} HTTP/1.1\r\nHost: {{address}}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let (status, headers, _) = raw_http(service, &head, &body).await;
    let content_type = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-type: "))
        .unwrap_or("")
        .to_string();
    (status, content_type)
}

async fn download(service: &TestService, id: &str, path: &str) -> (u16, Vec<u8>) {
    let response = service
        .get(&format!(
            "/v1/sessions/{id}/files/content?path={}",
            encoded(path)
        ))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.bytes().await.unwrap_or_default().to_vec())
}

/// Uploads a static binary compiled from `tests/adversarial/NAME.c` to `/workspace/NAME`.
async fn install_program(service: &TestService, id: &str, name: &str) {
    let (status, body) = upload(service, id, name, compile(name)).await;
    assert_eq!(status, 200, "upload {name}: {body}");
    service.sh(id, &format!("chmod +x {name}")).await;
}

/// A session's sandbox's cgroup, below each controller's root (cgroup v1) or the unified
/// root (v2), as the places it may be: its Docker container's (cgroupfs or systemd driver),
/// or its pod's sandbox container's in the kubelet's tree (cgroupfs driver, any QoS class).
fn sandbox_cgroup(session: &str) -> Vec<String> {
    if let Some(cluster) = common::kubernetes() {
        let pod = cluster.pod_json(session);
        let uid = pod["metadata"]["uid"].as_str().expect("the pod's uid");
        let container = pod["status"]["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["name"] == "sandbox")
            .and_then(|c| c["containerID"].as_str()?.split_once("://"))
            .map(|(_, id)| id.to_string())
            .unwrap_or_else(|| panic!("no sandbox container in the pod of {session}: {pod}"));
        return ["kubepods", "kubepods/burstable", "kubepods/besteffort"]
            .iter()
            .map(|class| format!("{class}/pod{uid}/{container}"))
            .collect();
    }
    let id = container_id(session);
    vec![
        format!("docker/{id}"),
        format!("system.slice/docker-{id}.scope"),
    ]
}

/// The full id of a session's container.
fn container_id(session: &str) -> String {
    let id = docker(&[
        "ps",
        "-aq",
        "--no-trunc",
        "--filter",
        &format!("label=org.sandboxd.session={session}"),
    ]);
    let id = id.trim().to_string();
    assert!(!id.is_empty(), "no container for session {session}");
    id
}

/// The host directory of a session's container's writable layer: Docker's UpperDir, or the
/// overlay upper directory of the pod's container as its root mount names it.
fn writable_layer(service: &TestService, session: &str) -> PathBuf {
    if !on_kubernetes() {
        let upper = service.containers()[0]["GraphDriver"]["Data"]["UpperDir"].clone();
        return PathBuf::from(upper.as_str().expect("the container's writable layer"));
    }
    let procs = cgroup_file("memory", &sandbox_cgroup(session), "cgroup.procs")
        .expect("the sandbox's memory cgroup");
    let procs = std::fs::read_to_string(procs).unwrap();
    let pid = procs.lines().next().expect("a process in the sandbox");
    let mountinfo = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
    mountinfo
        .lines()
        .find(|line| line.split(' ').nth(4) == Some("/"))
        .and_then(|root| root.split(',').find_map(|o| o.strip_prefix("upperdir=")))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no overlay upper directory for the pod's root: {mountinfo}"))
}

/// Where the platform keeps a sandbox's own files and logs on the host: Docker's container
/// directory, or the kubelet's log directory of the pod.
fn platform_dir(service: &TestService, session: &str) -> PathBuf {
    if let Some(cluster) = common::kubernetes() {
        let pod = cluster.pod_json(session);
        let meta = &pod["metadata"];
        let name = format!(
            "{}_{}_{}",
            meta["namespace"].as_str().unwrap(),
            meta["name"].as_str().unwrap(),
            meta["uid"].as_str().unwrap()
        );
        return Path::new("/var/log/pods").join(name);
    }
    let container = &service.containers()[0];
    PathBuf::from(container["HostnamePath"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A file of a sandbox's cgroup ([`sandbox_cgroup`]) on the host, for cgroup v1 or v2.
fn cgroup_file(controller: &str, cgroup: &[String], file: &str) -> Option<PathBuf> {
    cgroup
        .iter()
        .flat_map(|dir| {
            [
                format!("/sys/fs/cgroup/{controller}/{dir}/{file}"),
                format!("/sys/fs/cgroup/{dir}/{file}"),
            ]
        })
        .map(PathBuf::from)
        .find(|path| path.exists())
}

fn read_number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The number in `path` once it is at most `max`, or the last one read after `within`:
/// killed processes leave the count as they are reaped, and threads that drained their
/// output end a moment later.
async fn settled_at_most(path: &Path, max: u64, within: Duration) -> u64 {
    let give_up = Instant::now() + within;
    loop {
        let value = read_number(path).unwrap_or(0);
        if value <= max || Instant::now() >= give_up {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `key value` line of a cgroup stat file.
fn stat_value(path: &Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok())?
    })
}

/// CPU time a sandbox has used, in nanoseconds, from the host's cgroup files.
fn cpu_used_ns(container: &[String]) -> u64 {
    if let Some(path) = cgroup_file("cpuacct", container, "cpuacct.usage") {
        return read_number(&path).unwrap();
    }
    let stat = cgroup_file("cpu", container, "cpu.stat").expect("the container's cpu cgroup");
    stat_value(&stat, "usage_usec").expect("usage_usec in cpu.stat") * 1000
}

/// Samples a figure in the background and keeps its maximum, until stopped.
struct Peak {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<u64>,
}

impl Peak {
    fn watch(read: impl Fn() -> Option<u64> + Send + 'static, every: Duration) -> Peak {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let mut peak = 0;
            while !stopped.load(Ordering::Relaxed) {
                peak = peak.max(read().unwrap_or(0));
                tokio::time::sleep(every).await;
            }
            peak.max(read().unwrap_or(0))
        });
        Peak { stop, task }
    }

    async fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

/// The resident memory of a process, from `/proc/PID/status`.
fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs `echo alive` until the session answers it; returns how long that took.
async fn answers_within(service: &TestService, id: &str, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < within {
        let (status, body) = service
            .exec(id, json!({"command": "echo alive", "timeout_secs": 5}))
            .await;
        if status == 200 && body["stdout"] == "alive\n" {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

fn stdout(result: &Value) -> &str {
    result["stdout"].as_str().unwrap_or("")
}

/// Sends one request by hand, for what reqwest will not send as given (a `Host` header of
/// our choosing, a chunked body); returns the status, the lower-cased headers and the body.
async fn raw_http(service: &TestService, head: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let address = service.url.strip_prefix("http://").unwrap();
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let mut request = head.replace("{address}", address).into_bytes();
    request.extend_from_slice(body);
    // Written while the answer is read: the service may answer (and stop reading) first.
    let sending = tokio::spawn(async move {
        let _ = writer.write_all(&request).await;
        writer
    });
    let mut response = Vec::new();
    let mut buffer = [0u8; 16 << 10];
    let reading = async {
        // A reset after the answer (the body was not read to its end) ends the read too.
        while let Ok(n) = reader.read(&mut buffer).await {
            if n == 0 {
                break;
            }
            response.extend_from_slice(&buffer[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(30), reading)
        .await
        .expect("an answer within 30 s");
    drop(sending.await);
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete answer");
    let headers = String::from_utf8_lossy(&response[..split]).to_lowercase();
    let mut body = response[split + 4..].to_vec();
    if headers.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    let status = headers[9..12].parse().unwrap();
    (status, headers, body)
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&data[..end]);
        let size =
            usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap_or(0);
        if size == 0 || data.len() < end + 2 + size {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[(end + 4 + size).min(data.len())..];
    }
    out
}

fn error_code(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_string))
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Resource exhaustion.

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
            peak <= PIDS_LIMIT + cpus,
            "the container had {peak} processes, over its pids limit {PIDS_LIMIT}"
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
        let left = settled_at_most(&pids, 16, Duration::from_secs(10)).await;
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
        let escaped_processes = read_number(&pids).unwrap_or(0);
        assert!(escaped_processes <= PIDS_LIMIT + cpus);
        let neighbour = service.sh(&other, "echo alive").await;
        assert_eq!(neighbour["stdout"], "alive\n", "another session is unaffected");
        let kill_started = Instant::now();
        let killed = service.kill_all_processes(&id, 1).await;
        answers_within(&service, &id, Duration::from_secs(5))
            .await
            .expect("the session answers once every process was killed");
        let freed_after = kill_started.elapsed();
        let after_kill = settled_at_most(&pids, 16, Duration::from_secs(10)).await;
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
            "pids peaked at {peak}/{PIDS_LIMIT}; {forks} forks succeeded, {failures} refused (cgroup pids.events max={refused_by_cgroup}); a 60 s bomb was killed at its 3 s timeout; session answered again after {} ms with {left} processes; a bomb escaping its process group (setsid) survived its 2 s timeout with {escaped_processes} processes while another session answered; DELETE .../processes killed {killed} processes (none remaining) and the session answered again {} ms later with {after_kill} processes",
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
            assert_eq!(result["oom_killed"], true, "{command}: {result}");
            assert_eq!(result["timed_out"], false, "{command}: {result}");
            outcomes.push(format!(
                "`{command}` oom_killed after {} ms",
                result["duration_ms"]
            ));
        }
        let max_usage = cgroup_file("memory", &container, "memory.max_usage_in_bytes")
            .or_else(|| cgroup_file("memory", &container, "memory.peak"))
            .and_then(|p| read_number(&p))
            .unwrap_or(0);
        assert!(
            max_usage <= MEM_LIMIT,
            "the container used {max_usage} bytes, over its limit"
        );
        let agent_after = service.sh(&id, &format!("pidof {}", agent_program())).await;
        assert_eq!(
            agent_before["stdout"], agent_after["stdout"],
            "the OOM killer chose the bomb, not the agent"
        );
        let info = service.get_json(&format!("/v1/sessions/{id}")).await;
        assert_eq!(info["state"], "running");
        format!(
            "{}; peak memory {} of {} limit; the agent (pid {}) survived and the session answers",
            outcomes.join(", "),
            mib(max_usage),
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
                .unwrap_or(0)
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
            assert!(
                kind == "tmpfs" || kind == "mqueue",
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
        // next page the agent needs may get it killed too (SECURITY.md).
        let agent_killed = on_kubernetes()
            && status == 502
            && result["error"]["code"] == "agent_unavailable";
        assert!(status == 200 || agent_killed, "{status}: {result}");
        let ended = if agent_killed {
            "the agent was OOM-killed after the creator".to_string()
        } else if result["oom_killed"] == true {
            "the creator was OOM-killed".to_string()
        } else if result["timed_out"] == true {
            "the creator timed out".to_string()
        } else {
            stdout(&result).trim().to_string()
        };
        let max_usage = cgroup_file("memory", &container, "memory.max_usage_in_bytes")
            .or_else(|| cgroup_file("memory", &container, "memory.peak"))
            .and_then(|p| read_number(&p))
            .unwrap_or(0);
        assert!(
            max_usage <= 256 * MIB,
            "the sandbox used {}, over its 256 MiB limit",
            mib(max_usage)
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
            "{ended}; {used_inodes} inodes in /tmp; the sandbox's memory peaked at {} (limit 256 MiB: tmpfs inodes are charged to its cgroup); the host is untouched, the session is stuck near its ceiling until closed",
            mib(max_usage)
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

// ---------------------------------------------------------------------------------------------
// Escapes through files, devices and the kernel's interfaces.

#[tokio::test]
async fn paths_never_resolve_on_the_host() {
    let attack = "path escapes through the files API (.., absolute, symlinks to /, NUL)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        // A file only the host has, and the service's own config (it holds the token).
        let secret = format!("host-only-{}-{:?}", std::process::id(), Instant::now());
        let marker = tempfile::Builder::new()
            .prefix("sandboxd-adversarial-marker")
            .tempfile_in("/tmp")
            .unwrap();
        std::fs::write(marker.path(), &secret).unwrap();
        let marker_path = marker.path().to_str().unwrap().to_string();
        let config_path = service
            .state_dir
            .path()
            .join("config.toml")
            .to_str()
            .unwrap()
            .to_string();
        service
            .sh(
                &id,
                "ln -s / /workspace/root && ln -s /proc/1/root /workspace/initroot && ln -s .. /workspace/up",
            )
            .await;
        let relative_up = format!("../../../../../../..{marker_path}");
        let mut tries = vec![
            marker_path.clone(),
            relative_up.clone(),
            format!("/workspace/../../../..{marker_path}"),
            format!("root{marker_path}"),
            format!("root/../../..{marker_path}"),
            format!("initroot{marker_path}"),
            format!("up/up/up{marker_path}"),
            format!("/proc/self/root{marker_path}"),
            format!("/proc/1/cwd/../../..{marker_path}"),
            format!("/.sandboxd/../../../..{marker_path}"),
            config_path.clone(),
            format!("root{config_path}"),
            "/var/lib/sandboxd/token".to_string(),
        ];
        tries.dedup();
        let mut statuses = Vec::new();
        for path in &tries {
            let (status, body) = download(&service, &id, path).await;
            assert!(
                !String::from_utf8_lossy(&body).contains(&secret)
                    && !String::from_utf8_lossy(&body).contains(TOKEN),
                "{path} read a host file"
            );
            assert_ne!(status, 200, "{path} was readable: {}", String::from_utf8_lossy(&body));
            statuses.push(status);
        }
        // Writes through the same paths land inside the sandbox, never on the host.
        let escape_name = format!(
            "/tmp/sandboxd-adversarial-escape-{}",
            std::process::id()
        );
        let mut writes = Vec::new();
        for path in [
            escape_name.clone(),
            format!("../../../..{escape_name}"),
            format!("root{escape_name}"),
            format!("up/up{escape_name}"),
        ] {
            let (status, _) = upload(&service, &id, &path, "escaped?").await;
            writes.push(status);
        }
        assert!(
            !Path::new(&escape_name).exists(),
            "a write reached the host's {escape_name}"
        );
        let inside = service.sh(&id, &format!("cat {escape_name}")).await;
        assert_eq!(stdout(&inside), "escaped?", "the writes landed in the sandbox's /tmp");
        // NUL and other malformed paths are refused before the agent sees them.
        let nul = service
            .get(&format!("/v1/sessions/{id}/files/content?path=a%00{}", encoded(&marker_path)))
            .send()
            .await
            .unwrap();
        let nul_status = nul.status().as_u16();
        assert_eq!(nul_status, 400);
        assert_eq!(error_code(&nul.bytes().await.unwrap()), "invalid_path");
        // Listing / shows the sandbox's root, not the host's.
        let root = service.get_json(&format!("/v1/sessions/{id}/files?path=/")).await;
        let names: Vec<&str> = root["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        let agent_entry = agent_path()[1..].split('/').next().unwrap();
        assert!(names.contains(&"workspace") && names.contains(&agent_entry), "{names:?}");
        assert!(!names.contains(&"work"), "the host's root was listed: {names:?}");
        format!(
            "{} read attempts (marker, service config, token) -> {:?}, never the host's bytes; 4 writes -> {:?}, all inside the sandbox's /tmp; NUL -> {nul_status} invalid_path; / lists the sandbox's root",
            tries.len(),
            statuses,
            writes
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn uploads_carry_no_privilege_and_devices_cannot_be_made() {
    let attack = "setuid and device files (uploads, chmod u+s, mknod, setuid-root binaries)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("python").await;
        let (status, body) = upload(&service, &id, "up.bin", vec![0x7fu8; 4096]).await;
        assert_eq!(status, 200, "{body}");
        let stat = service.sh(&id, "stat -c '%a %u %g %F' up.bin").await;
        assert_eq!(stdout(&stat), "644 61000 61000 regular file\n");
        // The sandbox may set the bits on its own file; replacing it by upload clears them.
        let chmod = service.sh(&id, "chmod 6755 up.bin && stat -c %a up.bin").await;
        let (status, _) = upload(&service, &id, "up.bin", vec![1u8; 16]).await;
        assert_eq!(status, 200);
        let restat = service.sh(&id, "stat -c '%a %u' up.bin").await;
        assert_eq!(stdout(&restat), "644 61000\n", "an upload resets the mode");
        let chown = service.sh(&id, "chown 0:0 up.bin").await;
        assert_ne!(chown["exit_code"], 0, "the sandbox cannot give a file to root");

        let mknod = service
            .sh(
                &id,
                "mknod /tmp/mem c 1 1; echo tmp=$?; mknod /workspace/sda b 8 0; echo ws=$?; mknod /dev/shm/null c 1 3; echo shm=$?",
            )
            .await;
        assert_eq!(stdout(&mknod), "tmp=1\nws=1\nshm=1\n", "{mknod}");
        // Reading a device through the files API never streams it endlessly.
        let (zero_status, zero) = download(&service, &id, "/dev/zero").await;
        assert!(
            zero_status != 200 || zero.len() <= OUTPUT_CAP,
            "/dev/zero streamed {} bytes",
            zero.len()
        );

        // The image's setuid-root programs run without privilege (no-new-privileges).
        let setuid = service
            .sh(
                &id,
                "ls -l /usr/bin/mount | cut -c1-10; mkdir -p /tmp/m; /usr/bin/mount -t tmpfs none /tmp/m; echo mount=$?; cp /usr/bin/su /tmp/su && stat -c '%a %u' /tmp/su; grep NoNewPrivs /proc/self/status",
            )
            .await;
        let out = stdout(&setuid);
        assert!(out.starts_with("-rwsr-xr-x"), "the image has a setuid-root mount: {setuid}");
        assert!(out.contains("mount=32") || out.contains("mount=1"), "{setuid}");
        assert!(
            setuid["stderr"].as_str().unwrap().contains("must be superuser"),
            "mount ran without root's uid: {setuid}"
        );
        assert!(out.contains("755 61000"), "a copy is the sandbox's, without setuid: {setuid}");
        assert!(out.contains("NoNewPrivs:\t1"), "{setuid}");
        format!(
            "upload -> 0644 uid 61000 (after chmod {}: upload again -> 0644); chown to root refused; mknod refused in /tmp, /workspace, /dev/shm; GET /dev/zero -> {zero_status} ({} bytes); setuid-root mount runs as uid 61000 ('must be superuser'), copied su is 0755 uid 61000",
            stdout(&chmod).trim(),
            zero.len()
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn host_proc_sys_and_kernel_files_are_out_of_reach() {
    let attack = "host /proc, /sys and kernel files";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        let probe = service
            .sh(
                &id,
                r#"
for f in /proc/kcore /proc/sysrq-trigger /proc/keys /proc/timer_list /proc/sched_debug; do
  if [ -e $f ]; then echo "$f exists, reads $(head -c 64 $f 2>/dev/null | wc -c) bytes"; else echo "$f absent"; fi
done
echo b > /proc/sysrq-trigger 2>/dev/null && echo "sysrq WRITTEN" || echo "sysrq write refused"
echo 1 > /sys/kernel/profiling 2>/dev/null && echo "sys WRITTEN" || echo "sys write refused"
echo x > /proc/sys/kernel/hostname 2>/dev/null && echo "proc sys WRITTEN" || echo "proc sys write refused"
echo 1 > /sys/fs/cgroup/pids/pids.max 2>/dev/null && echo "cgroup WRITTEN" || echo "cgroup write refused"
dmesg >/dev/null 2>&1 && echo "dmesg READ" || echo "dmesg refused"
echo "init: $(tr '\0' ' ' < /proc/1/cmdline)"
echo "pids: $(ls /proc | grep -c '^[0-9]*$')"
echo "comms: $(cat /proc/[0-9]*/comm 2>/dev/null | sort -u | tr '\n' ' ')"
cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline > /tmp/environs 2>/dev/null
echo "host-paths: $(grep -c /var/lib/docker /proc/self/mountinfo) mountinfo lines name /var/lib/docker"
"#,
            )
            .await;
        let out = stdout(&probe).to_string();
        // No process in the sandbox carries the service's token in its environment or
        // arguments (read back through the files API, so the search itself is not in them).
        let (status, environs) = download(&service, &id, "/tmp/environs").await;
        assert_eq!(status, 200);
        let environs = String::from_utf8_lossy(&environs);
        assert!(
            !environs.contains(TOKEN) && !environs.contains("SANDBOXD_"),
            "a sandbox process knows the token or the service's variables"
        );
        for refused in [
            "sysrq write refused",
            "sys write refused",
            "proc sys write refused",
            "cgroup write refused",
            "dmesg refused",
        ] {
            assert!(out.contains(refused), "expected `{refused}`: {out}");
        }
        for line in out.lines().filter(|l| l.contains(" exists, reads ")) {
            assert!(
                line.ends_with("reads 0 bytes"),
                "a masked kernel file gives content: {line}"
            );
        }
        // PID 1 is the agent itself (its own init), no engine init beside it.
        let init = if on_kubernetes() {
            format!("init: {}", agent_path())
        } else {
            "init: /.sandboxd-agent --connect".to_string()
        };
        assert!(out.contains(&init), "{out}");
        let pids: usize = out
            .lines()
            .find_map(|l| l.strip_prefix("pids: "))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(pids < 12, "the sandbox sees {pids} processes");
        let comms = out.lines().find_map(|l| l.strip_prefix("comms: ")).unwrap();
        for host_process in ["dockerd", "containerd", "sandboxd ", "cargo", "rustc", "systemd"] {
            assert!(
                !comms.split(' ').any(|c| c == host_process.trim()),
                "the sandbox sees the host's {host_process}: {comms}"
            );
        }
        let host_processes = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_str().unwrap().parse::<u32>().is_ok())
            .count();
        let summary: Vec<&str> = out
            .lines()
            .filter(|l| !l.starts_with("comms") && !l.starts_with("init"))
            .collect();
        format!(
            "{}; no process holds the token; sees {pids} processes (its own: {}) against {host_processes} on the host",
            summary.join("; "),
            comms.trim()
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn no_network_egress_with_network_none() {
    let attack = "network egress with network none";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(60, attack, async {
        let id = service.open("sh").await;
        let port = service.url.rsplit(':').next().unwrap().to_string();
        // Only attempts that fail inside the sandbox's own network namespace: its loopback,
        // and addresses it has no route to.
        let probe = service
            .sh(
                &id,
                &format!(
                    r#"
echo "links: $(ip -o link | awk -F': ' '{{print $2}}' | tr '\n' ' ')"
echo "routes: $(ip route | wc -l)"
echo "default routes: $(ip route | grep -c ^default)"
for target in "127.0.0.1 {port}" "10.0.0.1 80" "172.17.0.1 2375" "169.254.169.254 80"; do
  set -- $target
  r=$(nc -w 2 $1 $2 </dev/null 2>&1); echo "$1:$2 rc=$? $r"
done
ls /var/run/docker.sock /run/docker.sock 2>&1 | grep -c 'No such file'
"#
                ),
            )
            .await;
        let out = stdout(&probe).to_string();
        if docker_only(
            "only a loopback link and no route",
            "a pod's network namespace has the eth0 its CNI plugin made (on the test cluster a macvlan over a bridge with no port, and only its own subnet's route)",
        ) {
            assert!(out.contains("links: lo \n"), "only loopback: {out}");
            assert!(out.contains("routes: 0"), "{out}");
        }
        assert!(out.contains("default routes: 0"), "{out}");
        for line in out.lines().filter(|l| l.contains(" rc=")) {
            assert!(!line.contains(" rc=0"), "a connection worked: {line}");
            assert!(
                line.contains("Network is unreachable") || line.contains("Connection refused"),
                "failed locally: {line}"
            );
        }
        assert!(
            out.trim_end().ends_with('2'),
            "no engine socket inside: {out}"
        );
        let attempts: Vec<String> = out
            .lines()
            .filter(|l| l.contains(" rc="))
            .map(|l| {
                let (target, rest) = l.split_once(' ').unwrap();
                let why = if rest.contains("unreachable") {
                    "unreachable"
                } else {
                    "refused"
                };
                format!("{target} {why}")
            })
            .collect();
        let links = if on_kubernetes() {
            "no default route"
        } else {
            "interfaces: lo only, no route"
        };
        format!(
            "{links}; {}; no Docker socket inside",
            attempts.join(", ")
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn privilege_escalation_attempts_fail() {
    let attack = "privilege escalation (su, unshare, mount, nsenter, dangerous syscalls, ptrace)";
    let host = Host::before();
    let service = TestService::start(&base_config(3, ""));
    let outcome = bounded(60, attack, async {
        let sh = service.open("sh").await;
        let tools = service
            .sh(
                &sh,
                r#"
su -c id root </dev/null >/dev/null 2>&1; echo "su=$?"
unshare -U true 2>/dev/null; echo "unshare-U=$?"
unshare -m true 2>/dev/null; echo "unshare-m=$?"
unshare -r true 2>/dev/null; echo "unshare-r=$?"
unshare -n true 2>/dev/null; echo "unshare-n=$?"
mkdir -p /tmp/m; mount -t tmpfs none /tmp/m 2>/dev/null; echo "mount=$?"
nsenter -t 1 -m true 2>/dev/null; echo "nsenter=$?"
chroot / true 2>/dev/null; echo "chroot=$?"
grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\t' ' '
"#,
            )
            .await;
        let out = stdout(&tools).to_string();
        for tool in [
            "su", "unshare-U", "unshare-m", "unshare-r", "unshare-n", "mount", "nsenter", "chroot",
        ] {
            assert!(
                !out.contains(&format!("{tool}=0")),
                "{tool} worked: {out}"
            );
        }
        for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert!(
                out.contains(&format!("{cap}: 0000000000000000")),
                "{cap}: {out}"
            );
        }
        assert!(out.contains("NoNewPrivs: 1") && out.contains("Seccomp: 2"), "{out}");

        // Syscalls that have led out of containers before, through python's ctypes.
        let python = service.open("python").await;
        let probe = &r#"
import ctypes, glob, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(256)
a = ctypes.addressof(buf)
calls = {
    "bpf": (321, 0, a, 128), "perf_event_open": (298, a, 0, -1, -1, 0),
    "keyctl": (250, 0, 0, 0, 0, 0), "add_key": (248, 0, 0, 0, 0, 0),
    "userfaultfd": (323, 0), "unshare(CLONE_NEWUSER)": (272, 0x10000000),
    "unshare(CLONE_NEWNS)": (272, 0x20000), "mount": (165, 0, 0, 0, 0, 0),
    "pivot_root": (155, 0, 0), "open_by_handle_at": (304, 0, a, 0),
    "kexec_load": (246, 0, 0, 0, 0), "init_module": (175, 0, 0, 0),
    "setns": (308, 0, 0), "iopl": (172, 3), "syslog": (103, 3, a, 10),
    "io_uring_setup": (425, 1, a),
}
for name, args in calls.items():
    ctypes.set_errno(0)
    r = libc.syscall(*[ctypes.c_long(x) for x in args])
    print(f"{name}={'ok' if r >= 0 else os.strerror(ctypes.get_errno())}")
# ptrace of the agent: same uid, but the agent is non-dumpable, so the kernel refuses.
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
agent = next(int(p[6:]) for p in glob.glob('/proc/[0-9]*')
             if open(p + '/cmdline', 'rb').read().startswith(b'AGENT_PATH'))
ctypes.set_errno(0)
r = libc.ptrace(16, agent, None, None)
print(f"ptrace-agent={'attached' if r == 0 else os.strerror(ctypes.get_errno())}")
if r == 0:
    os.waitpid(agent, 0x40000000)
    libc.ptrace(17, agent, None, None)
status = open(f'/proc/{agent}/status').read()
print("agent-uid=" + next(l.split()[1] for l in status.splitlines() if l.startswith('Uid:')))
print("agent-capeff=" + next(l.split()[1] for l in status.splitlines() if l.startswith('CapEff:')))
"#
        .replace("AGENT_PATH", agent_path());
        let (status, result) = service
            .exec(&python, json!({"argv": ["python3", "-c", probe], "timeout_secs": 30}))
            .await;
        assert_eq!(status, 200, "{result}");
        let syscalls = stdout(&result).to_string();
        let mut allowed = Vec::new();
        for line in syscalls.lines() {
            let (name, verdict) = line.split_once('=').unwrap();
            match name {
                // Observed, not a boundary: see the report.
                // The agent's own seccomp filter: ENOSYS, as on a kernel without io_uring.
                "io_uring_setup" => assert_eq!(verdict, "Function not implemented", "{line}"),
                // The agent makes itself non-dumpable, so same-uid processes cannot trace it.
                "ptrace-agent" => assert_eq!(verdict, "Operation not permitted", "{line}"),
                "agent-uid" | "agent-capeff" => {
                    allowed.push(format!("{name}: {verdict}"))
                }
                _ => assert_eq!(verdict, "Operation not permitted", "{line}"),
            }
        }
        assert!(syscalls.contains("agent-uid=61000"), "{syscalls}");
        assert!(syscalls.contains("agent-capeff=0000000000000000"), "{syscalls}");
        // Whatever ptrace did, it touched only this session: it and the other one answer.
        assert!(answers_within(&service, &python, Duration::from_secs(10)).await.is_some());
        assert!(answers_within(&service, &sh, Duration::from_secs(10)).await.is_some());
        let refused = syscalls
            .lines()
            .filter(|l| l.ends_with("Operation not permitted"))
            .count();
        format!(
            "su, unshare -U/-m/-r/-n, mount, nsenter, chroot all fail; no capabilities, NoNewPrivs 1, seccomp filter on; {refused} dangerous syscalls EPERM (bpf, perf_event_open, keyctl, userfaultfd, unshare, mount, pivot_root, open_by_handle_at, kexec_load, init_module, setns, iopl, syslog); io_uring_setup ENOSYS (the agent's filter); ptrace of the agent EPERM (it is non-dumpable); observed: {} (the agent has uid 61000 and no capabilities: nothing to gain)",
            allowed.join(", ")
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

// ---------------------------------------------------------------------------------------------
// The API: what a request may name, who may call it, and from where.

#[tokio::test]
async fn forbidden_container_settings_are_refused_and_nothing_is_created() {
    let attack = "create requests naming container settings";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(30, attack, async {
        let fields = [
            ("image", json!("alpine")),
            ("mounts", json!([{"source": "/", "target": "/host"}])),
            ("privileged", json!(true)),
            ("cap_add", json!(["SYS_ADMIN"])),
            ("network_mode", json!("host")),
            ("user", json!("0:0")),
            ("devices", json!(["/dev/sda"])),
            ("binds", json!(["/:/host"])),
            ("security_opt", json!(["seccomp=unconfined"])),
            ("pids_limit", json!(-1)),
            ("Image", json!("alpine")),
            ("HostConfig", json!({"Privileged": true})),
            ("mem_limit", json!("100g")),
        ];
        for (field, value) in &fields {
            let mut body = serde_json::Map::new();
            body.insert("runtime".into(), json!("sh"));
            body.insert((*field).into(), value.clone());
            let response = service
                .post("/v1/sessions")
                .json(&Value::Object(body))
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap();
            assert_eq!(status, 400, "{field}: {body}");
            assert_eq!(body["error"]["code"], "forbidden_field", "{field}: {body}");
            assert!(
                body["error"]["message"].as_str().unwrap().contains(field),
                "the message names {field}: {body}"
            );
        }
        // Smuggled in the runtime alias: just an unknown alias.
        let response = service
            .post("/v1/sessions")
            .json(&json!({"runtime": "sh --privileged"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        let sessions = service.get_json("/v1/sessions").await;
        assert_eq!(sessions["sessions"], json!([]));
        assert!(service.containers().is_empty(), "nothing was created");
        format!(
            "{} fields ({}) -> 400 forbidden_field naming the field; 0 containers created",
            fields.len(),
            fields
                .iter()
                .map(|(f, _)| *f)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn wrong_and_missing_tokens_get_identical_401s() {
    let attack = "wrong and missing tokens";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(30, attack, async {
        let client = reqwest::Client::new();
        let truncated = &TOKEN[..TOKEN.len() - 1];
        let wrong_same_length = "x".repeat(TOKEN.len());
        let basic = {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(format!("sandboxd:{TOKEN}"))
        };
        let credentials: Vec<(&str, Option<Vec<u8>>)> = vec![
            ("none", None),
            ("empty bearer", Some(b"Bearer ".to_vec())),
            ("wrong", Some(format!("Bearer {wrong_same_length}").into_bytes())),
            ("token + 1 char", Some(format!("Bearer {TOKEN}x").into_bytes())),
            ("token - 1 char", Some(format!("Bearer {truncated}").into_bytes())),
            ("no scheme", Some(TOKEN.as_bytes().to_vec())),
            ("basic", Some(format!("Basic {basic}").into_bytes())),
            ("double space", Some(format!("Bearer  {TOKEN}").into_bytes())),
            ("latin-1 bytes", Some(b"Bearer \xe9\xe9\xe9".to_vec())),
        ];
        // The service makes an address wait after 20 failures a minute: 18 here, then the rest.
        let routes = [
            ("POST", "/v1/sessions".to_string()),
            (
                "GET",
                format!("/v1/sessions?token={TOKEN}&access_token={TOKEN}"),
            ),
        ];
        let mut first: Option<(u16, Vec<u8>, Option<Vec<u8>>)> = None;
        let mut answers = 0;
        for (method, route) in &routes {
            for (name, credential) in &credentials {
                let mut request = client
                    .request(method.parse().unwrap(), service.url(route))
                    .body("{}");
                if let Some(value) = credential {
                    request = request.header(
                        "authorization",
                        reqwest::header::HeaderValue::from_bytes(value).unwrap(),
                    );
                }
                let response = request.send().await.unwrap();
                let status = response.status().as_u16();
                let www = response
                    .headers()
                    .get("www-authenticate")
                    .map(|v| v.as_bytes().to_vec());
                let body = response.bytes().await.unwrap().to_vec();
                assert_eq!(status, 401, "{method} {route} with {name}");
                let answer = (status, body, www);
                match &first {
                    None => first = Some(answer),
                    Some(expected) => assert_eq!(
                        &answer, expected,
                        "{method} {route} with {name} is answered differently"
                    ),
                }
                answers += 1;
            }
        }
        // The scheme in lower case is refused too (fail-closed; RFC 7235 would allow it).
        let lower = client
            .get(service.url("/v1/config"))
            .header("authorization", format!("bearer {TOKEN}"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        assert!(lower == 401 || lower == 429, "{lower}");
        // Past the failure budget: what wrong and right tokens get from this address now.
        let mut later_wrong = Vec::new();
        for _ in 0..3 {
            let status = client
                .get(service.url("/mcp"))
                .bearer_auth(&wrong_same_length)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            assert!(status == 401 || status == 429, "{status}");
            later_wrong.push(status);
        }
        let right_after = service
            .get("/v1/sessions")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        assert!(service.containers().is_empty(), "nothing was created");
        let (_, body, www) = first.unwrap();
        format!(
            "{answers} requests ({} credentials x {} routes, incl. the token in the query string) -> 401 with byte-identical bodies {} and WWW-Authenticate {:?}; `bearer` in lower case -> {lower}; past 20 failures: wrong tokens -> {later_wrong:?}, the right token from the same address -> {right_after}",
            credentials.len(),
            routes.len(),
            String::from_utf8_lossy(&body),
            www.map(|w| String::from_utf8_lossy(&w).into_owned())
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn cross_origin_and_dns_rebinding_requests_are_refused() {
    let attack = "cross-origin and DNS-rebinding requests (API and /mcp)";
    let host = Host::before();
    let service = TestService::start(&base_config(2, ""));
    let outcome = bounded(30, attack, async {
        let auth = format!("Authorization: Bearer {TOKEN}\r\n");
        let json_body = b"{}";
        let mcp_body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"evil","version":"1"}}}"#;
        let cases: Vec<(&str, String, &[u8], &str)> = vec![
            ("GET /v1/sessions, Origin evil", format!("GET /v1/sessions HTTP/1.1\r\nHost: {{address}}\r\nOrigin: http://evil.example\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_origin"),
            ("POST /v1/sessions, Origin evil", format!("POST /v1/sessions HTTP/1.1\r\nHost: {{address}}\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n{auth}Connection: close\r\n\r\n"), json_body, "forbidden_origin"),
            ("POST /v1/sessions, Host evil", format!("POST /v1/sessions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n{auth}Connection: close\r\n\r\n"), json_body, "forbidden_host"),
            ("GET /v1/config, Host evil:port", format!("GET /v1/config HTTP/1.1\r\nHost: evil.example:7717\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_host"),
            ("GET /v1/config, Host localhost.evil", format!("GET /v1/config HTTP/1.1\r\nHost: localhost.evil.example\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_host"),
            ("GET /v1/config, Origin null", format!("GET /v1/config HTTP/1.1\r\nHost: {{address}}\r\nOrigin: null\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_origin"),
            ("GET /v1/config, Origin other port", format!("GET /v1/config HTTP/1.1\r\nHost: {{address}}\r\nOrigin: http://127.0.0.1:1\r\n{auth}Connection: close\r\n\r\n"), b"", "forbidden_origin"),
            ("OPTIONS preflight, Origin evil", "OPTIONS /v1/sessions HTTP/1.1\r\nHost: {address}\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n".to_string(), b"", "forbidden_origin"),
            ("POST /mcp, Origin evil", format!("POST /mcp HTTP/1.1\r\nHost: {{address}}\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n{auth}Connection: close\r\n\r\n", mcp_body.len()), mcp_body, "forbidden_origin"),
            ("POST /mcp, Host evil", format!("POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n{auth}Connection: close\r\n\r\n", mcp_body.len()), mcp_body, "forbidden_host"),
        ];
        let mut refused = 0;
        for (name, head, body, code) in &cases {
            let (status, headers, answer) = raw_http(&service, head, body).await;
            assert_eq!(status, 403, "{name}: {}", String::from_utf8_lossy(&answer));
            assert_eq!(error_code(&answer), *code, "{name}");
            assert!(
                !headers.contains("access-control-allow-origin"),
                "{name} allows the origin: {headers}"
            );
            refused += 1;
        }
        // The same request from the service's own origin goes through.
        let own = format!("GET /v1/config HTTP/1.1\r\nHost: {{address}}\r\nOrigin: {}\r\n{auth}Connection: close\r\n\r\n", service.url);
        let (own_status, _, _) = raw_http(&service, &own, b"").await;
        assert_eq!(own_status, 200, "the service's own origin is accepted");
        assert!(service.containers().is_empty(), "nothing was created");
        format!(
            "{refused} requests (Origin evil.example / null / another port, Host evil.example / evil.example:port / localhost.evil.example, on /v1 and /mcp, with a valid token) -> 403 forbidden_origin / forbidden_host, no CORS allowance; own origin -> {own_status}; 0 containers created"
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

// ---------------------------------------------------------------------------------------------
// A session against its own agent.

#[tokio::test]
async fn a_session_killing_or_freezing_its_agent_harms_only_itself() {
    let attack = "a session kills (SIGKILL) or freezes (SIGSTOP) its own agent";
    let host = Host::before();
    let service = TestService::start(&base_config(3, ""));
    let outcome = bounded(90, attack, async {
        let killer = service.open("sh").await;
        let freezer = service.open("sh").await;
        let bystander = service.open("sh").await;

        let kill = async {
            let started = Instant::now();
            let (status, body) = service
                .exec(
                    &killer,
                    json!({"command": format!("kill -9 $(pidof {})", agent_program()), "timeout_secs": 5}),
                )
                .await;
            let first = (status, body["error"]["code"].as_str().unwrap_or("").to_string(), started.elapsed());
            let mut later = Vec::new();
            for _ in 0..3 {
                let started = Instant::now();
                let (status, body) = service
                    .exec(&killer, json!({"command": "echo alive", "timeout_secs": 2}))
                    .await;
                let elapsed = started.elapsed();
                assert!(elapsed < Duration::from_secs(10), "a request took {elapsed:?}");
                assert!(
                    status == 502 || status == 409 || status == 410,
                    "after the kill: {status} {body}"
                );
                later.push(format!("{status} {}", body["error"]["code"].as_str().unwrap_or("")));
            }
            let ended = service.wait_for_end(&killer, Duration::from_secs(20)).await;
            (first, later, ended)
        };
        let freeze = async {
            let (status, body) = service
                .exec(&freezer, json!({"command": format!("kill -STOP $(pidof {})", agent_program()), "timeout_secs": 1}))
                .await;
            let mut answers = vec![format!("{status} {}", body["error"]["code"].as_str().unwrap_or("ok"))];
            let started = Instant::now();
            let (status, body) = service
                .exec(&freezer, json!({"command": "echo alive", "timeout_secs": 1}))
                .await;
            let elapsed = started.elapsed();
            assert!(
                elapsed < Duration::from_secs(1 + 10 + 5),
                "a request to a frozen agent took {elapsed:?}"
            );
            // A request that waits out the frozen agent may outlast the pings that end its
            // session: then the answer is that the session ended, which says why.
            let ended_by_pings = status == 409
                && body["error"]["code"] == "session_ended"
                && body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("agent stopped answering"));
            assert!(
                status >= 500 || ended_by_pings || (status == 200 && body["stdout"] == "alive\n"),
                "{status} {body}"
            );
            answers.push(format!(
                "{status} {} after {:.1} s",
                body["error"]["code"].as_str().unwrap_or("ok"),
                elapsed.as_secs_f64()
            ));
            answers
        };
        let healthy = async {
            let mut worst = Duration::ZERO;
            for _ in 0..10 {
                let started = Instant::now();
                let result = service.sh(&bystander, "echo alive").await;
                assert_eq!(result["stdout"], "alive\n");
                worst = worst.max(started.elapsed());
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            worst
        };
        let ((first, later, ended), frozen, worst) = tokio::join!(kill, freeze, healthy);
        assert!(
            first.0 >= 500 && first.2 < Duration::from_secs(10),
            "the killing command's own request: {first:?}"
        );
        assert_eq!(ended["state"], "ended", "{ended}");
        let health = service.client.get(service.url("/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200);
        format!(
            "kill -9: its own request -> {} {} in {} ms, then {}; session ended within seconds ({}); SIGSTOP: {}; another session answered throughout (slowest {} ms); /healthz 200",
            first.0,
            first.1,
            first.2.as_millis(),
            later.join(", "),
            ended["end_reason"].as_str().unwrap_or("?"),
            frozen.join(", then "),
            worst.as_millis()
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn an_impostor_agent_gets_bounded_errors_and_others_stay_healthy() {
    let attack = "impostor agent on the agent socket (garbage, oversized, bad JSON, silent, flood, bad hello)";
    let host = Host::before();
    let modes = [
        "garbage",
        "oversized",
        "badjson",
        "silent",
        "flood",
        "badhello",
    ];
    let service = TestService::start(&base_config(modes.len() as u32 + 1, ""));
    let outcome = bounded(110, attack, async {
        let fake = compile("fake_agent");
        let bystander = service.open("sh").await;
        let mut victims = Vec::new();
        for mode in modes {
            let id = service.open("sh").await;
            let (status, body) = upload(&service, &id, "fake_agent", fake.clone()).await;
            assert_eq!(status, 200, "{body}");
            // It detaches and outlives this command; it lives longer than any bound below.
            let started = service
                .sh(
                    &id,
                    &format!("chmod +x fake_agent && ./fake_agent {mode} 60 16"),
                )
                .await;
            assert_eq!(started["exit_code"], 0, "{started}");
            victims.push((mode, id));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let pid = service.pid();
        let rss_before = rss_bytes(pid).unwrap();
        let rss_peak = Peak::watch(move || rss_bytes(pid), Duration::from_millis(100));

        // Six requests at once to each victim; each must end in time, served or refused.
        let attacked = futures_util::future::join_all(victims.iter().map(|(mode, id)| {
            let service = &service;
            async move {
                let requests = (0..6).map(|_| async {
                    let started = Instant::now();
                    let (status, body) = service
                        .exec(id, json!({"command": "echo served", "timeout_secs": 1}))
                        .await;
                    (status, body, started.elapsed())
                });
                let answers = futures_util::future::join_all(requests).await;
                let mut served = 0;
                let mut refused = std::collections::BTreeMap::<String, usize>::new();
                let mut slowest = Duration::ZERO;
                for (status, body, elapsed) in answers {
                    slowest = slowest.max(elapsed);
                    assert!(
                        elapsed < Duration::from_secs(1 + 10 + 5),
                        "{mode}: a request took {elapsed:?}"
                    );
                    if status == 200 {
                        assert_eq!(body["stdout"], "served\n", "{mode}: {body}");
                        served += 1;
                    } else {
                        assert_eq!(status, 502, "{mode}: {body}");
                        let code = body["error"]["code"].as_str().unwrap().to_string();
                        // Never agent_error: the impostor has no secret, so the hub never
                        // parks its connections and no request reaches it. A loaded machine
                        // may still leave the real agent without a spare in time.
                        assert_eq!(code, "agent_unavailable", "{mode}: {body}");
                        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
                        *refused.entry(code).or_default() += 1;
                    }
                }
                format!(
                    "{mode}: {served} served by the real agent, {} refused ({}), slowest {:.1} s",
                    refused.values().sum::<usize>(),
                    refused
                        .iter()
                        .map(|(code, n)| format!("{n} {code}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    slowest.as_secs_f64()
                )
            }
        }));
        let bystanding = async {
            let mut worst = Duration::ZERO;
            for _ in 0..10 {
                let started = Instant::now();
                let result = service.sh(&bystander, "echo alive").await;
                assert_eq!(result["stdout"], "alive\n");
                worst = worst.max(started.elapsed());
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            worst
        };
        let (per_mode, worst) = tokio::join!(attacked, bystanding);
        let rss_peak = rss_peak.stop().await;
        let grew = rss_peak.saturating_sub(rss_before);
        assert!(grew < 96 * MIB, "the service grew by {}", mib(grew));
        let health = service
            .client
            .get(service.url("/healthz"))
            .send()
            .await
            .unwrap();
        assert_eq!(health.status(), 200);
        format!(
            "{}; another session answered throughout (slowest {} ms); service RSS {} -> peak {}",
            per_mode.join("; "),
            worst.as_millis(),
            mib(rss_before),
            mib(rss_peak)
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}
