//! Helpers to drive sandboxes and read their figures on the host.

use crate::common::{self, docker, on_kubernetes, TestService, TOKEN};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Compiles `tests/adversarial/NAME.c` statically on the host and returns the binary.
pub(crate) fn compile(name: &str) -> Vec<u8> {
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
pub(crate) fn encoded(path: &str) -> String {
    path.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'.' | b'-' | b'_' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

pub(crate) async fn upload(
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
pub(crate) async fn upload_refused(
    service: &TestService,
    id: &str,
    path: &str,
    bytes: &[u8],
) -> (u16, Value) {
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
pub(crate) async fn post_raw(service: &TestService, route: &str, body: Vec<u8>) -> (u16, String) {
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

pub(crate) async fn download(service: &TestService, id: &str, path: &str) -> (u16, Vec<u8>) {
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
pub(crate) async fn install_program(service: &TestService, id: &str, name: &str) {
    let (status, body) = upload(service, id, name, compile(name)).await;
    assert_eq!(status, 200, "upload {name}: {body}");
    service.sh(id, &format!("chmod +x {name}")).await;
}

/// A session's sandbox's cgroup, below each controller's root (cgroup v1) or the unified
/// root (v2), as the places it may be: its Docker container's (cgroupfs or systemd driver),
/// or its pod's sandbox container's in the kubelet's tree (cgroupfs driver, any QoS class).
pub(crate) fn sandbox_cgroup(session: &str) -> Vec<String> {
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
pub(crate) fn writable_layer(service: &TestService, session: &str) -> PathBuf {
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
pub(crate) fn platform_dir(service: &TestService, session: &str) -> PathBuf {
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
pub(crate) fn cgroup_file(controller: &str, cgroup: &[String], file: &str) -> Option<PathBuf> {
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

pub(crate) fn read_number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The number in `path` once it is at most `max`, or the last one read after `within`:
/// killed processes leave the count as they are reaped, and threads that drained their
/// output end a moment later.
pub(crate) async fn settled_at_most(path: &Path, max: u64, within: Duration) -> u64 {
    let give_up = Instant::now() + within;
    loop {
        let value = read_number(path)
            .unwrap_or_else(|| panic!("cannot read the count in {}", path.display()));
        if value <= max || Instant::now() >= give_up {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The processes a session's kernel counts (gVisor's, inside: the host's count keeps gVisor's
/// stubs for reuse), once at most `max`, or the last count after `within`.
pub(crate) async fn processes_inside_at_most(
    service: &TestService,
    id: &str,
    max: u64,
    within: Duration,
) -> u64 {
    let give_up = Instant::now() + within;
    loop {
        let counted = service.sh(id, "ls -d /proc/[0-9]* | wc -l").await;
        let count: u64 = stdout(&counted)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("a process count: {counted}"));
        if count <= max || Instant::now() >= give_up {
            return count;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The memory limit of a sandbox's cgroup on the host: the runtime's `mem_limit` on runc; on
/// gVisor above it, with room for full tmpfs places and gVisor itself (the limit inside is
/// each process's address space).
pub(crate) fn host_memory_limit(cgroup: &[String]) -> u64 {
    cgroup_file("memory", cgroup, "memory.limit_in_bytes")
        .or_else(|| cgroup_file("memory", cgroup, "memory.max"))
        .and_then(|p| read_number(&p))
        .expect("the sandbox's memory limit (memory.limit_in_bytes or memory.max)")
}

/// A `key value` line of a cgroup stat file.
pub(crate) fn stat_value(path: &Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok())?
    })
}

/// CPU time a sandbox has used, in nanoseconds, from the host's cgroup files.
pub(crate) fn cpu_used_ns(container: &[String]) -> u64 {
    if let Some(path) = cgroup_file("cpuacct", container, "cpuacct.usage") {
        return read_number(&path).unwrap();
    }
    let stat = cgroup_file("cpu", container, "cpu.stat").expect("the container's cpu cgroup");
    stat_value(&stat, "usage_usec").expect("usage_usec in cpu.stat") * 1000
}

/// Samples a figure in the background and keeps its maximum, until stopped.
pub(crate) struct Peak {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<u64>,
}

impl Peak {
    pub(crate) fn watch(read: impl Fn() -> Option<u64> + Send + 'static, every: Duration) -> Peak {
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

    pub(crate) async fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

/// The resident memory of a process, from `/proc/PID/status`.
pub(crate) fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs `echo alive` until the session answers it; returns how long that took.
pub(crate) async fn answers_within(
    service: &TestService,
    id: &str,
    within: Duration,
) -> Option<Duration> {
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

pub(crate) fn stdout(result: &Value) -> &str {
    result["stdout"].as_str().unwrap_or("")
}

/// Sends one request by hand, for what reqwest will not send as given (a `Host` header of
/// our choosing, a chunked body); returns the status, the lower-cased headers and the body.
pub(crate) async fn raw_http(
    service: &TestService,
    head: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
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

pub(crate) fn error_code(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_string))
        .unwrap_or_default()
}
