//! The harness of the suite: bounds, reports, the host check.

use crate::common::{docker, TestService};
use serde_json::Value;
use std::fmt::Display;
use std::future::Future;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub(crate) const MIB: u64 = 1 << 20;
/// `policy.max_output_bytes` in `base_config`.
pub(crate) const OUTPUT_CAP: usize = 64 << 10;
/// How much the host's disk may grow during one test (the service itself writes its state
/// directory and a copy of the agent, about 12 MB).
const DISK_TOLERANCE: u64 = 50 * MIB;
/// What the instance's containers may hold on the host's disk, each: the mount points made in
/// the writable layer at creation and the engine's per-container files (hosts, resolv.conf).
const CONTAINER_DISK_ALLOWANCE: u64 = MIB;

/// Prints the line the suite's output lists for each attack.
pub(crate) fn report(attack: &str, outcome: impl Display) {
    println!("attack: {attack} -> {outcome}");
}

/// Runs an attack's test body, failing it when it takes longer than `secs`: a hang is a failure.
pub(crate) async fn bounded<T>(secs: u64, attack: &str, body: impl Future<Output = T>) -> T {
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

/// The disk space taken where what a sandbox writes could stay on the host: the engine's data
/// directory and log, and the test cluster's containers (containerd's), pods (the kubelet's)
/// and pod logs. Their trees, not `df`: a build or another program writing elsewhere on the
/// machine meanwhile does not count, nor does the cluster's etcd, which takes 64 MB at once
/// whenever it starts a new segment of its log (two attacks were failed by one).
fn disk_used() -> Option<u64> {
    let cluster =
        std::env::var("SANDBOXD_K8S_STATE").unwrap_or_else(|_| "/var/lib/sandboxd-k8s".into());
    let (containers, pods) = (
        format!("{cluster}/containerd"),
        format!("{cluster}/kubelet"),
    );
    let places = [
        docker_root(),
        "/var/log/sandboxd-dockerd.log",
        &containers,
        &pods,
        "/var/log/pods",
    ];
    let root = std::fs::metadata(docker_root()).ok()?;
    Some(
        places
            .iter()
            .map(|place| tree_usage(Path::new(place), root.dev()))
            .sum(),
    )
}

/// Disk space a tree takes on the filesystem `dev`, not following links nor entering other
/// filesystems (a running container's merged root, its tmpfs mounts).
fn tree_usage(path: &Path, dev: u64) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.dev() != dev {
        return 0;
    }
    let mut total = meta.blocks() * 512;
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            total += tree_usage(&entry.path(), dev);
        }
    }
    total
}

/// Disk space a directory tree takes (allocated blocks, like `du -x`), without following
/// links.
pub(crate) fn disk_usage(path: &Path) -> u64 {
    std::fs::symlink_metadata(path).map_or(0, |meta| tree_usage(path, meta.dev()))
}

/// Whether `path` is on a tmpfs (memory, not the host's disk).
pub(crate) fn on_tmpfs(path: &Path) -> bool {
    std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(path)
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "tmpfs")
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
            // A volume on the host's disk; the working directory's tmpfs volume is memory.
            for mount in c["Mounts"].as_array().into_iter().flatten() {
                if mount["Type"] == "volume" {
                    places.extend(
                        mount["Source"]
                            .as_str()
                            .map(PathBuf::from)
                            .filter(|source| !on_tmpfs(source)),
                    );
                }
            }
            places.iter().map(|p| disk_usage(p)).sum::<u64>()
        })
        .sum()
}

/// Whether a growth of the sandboxes' places on the host's disk (see [`disk_used`]) beyond the
/// tolerance fails the test: in CI or when `SANDBOXD_TEST_STRICT_DISK=1`. On a development
/// machine other engine users (a benchmark, image builds) write there meanwhile, so it is only
/// reported; the exact per-container figure is asserted everywhere.
fn strict_disk() -> bool {
    crate::common::in_ci() || std::env::var("SANDBOXD_TEST_STRICT_DISK").is_ok_and(|v| v == "1")
}

pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

/// The host as it was before an attack.
pub(crate) struct Host {
    disk_used: Option<u64>,
}

impl Host {
    pub(crate) fn before() -> Host {
        Host {
            disk_used: disk_used(),
        }
    }

    /// After an attack: the host forks quickly, its disk did not grow, and the service closes
    /// every session and removes every container it made (checked again once it is gone).
    pub(crate) async fn check_after(self, attack: &str, mut service: TestService) {
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

    /// Compares the sandboxes' places on the host's disk (see [`disk_used`]) with their figure
    /// before the attack (see [`strict_disk`]).
    fn check_disk(&self, attack: &str, held: u64) -> String {
        let (Some(before), Some(after)) = (self.disk_used, disk_used()) else {
            return "; the engine's data directory unreadable".into();
        };
        let change = (after as f64 - before as f64) / MIB as f64;
        let grew = after.saturating_sub(before);
        if grew <= DISK_TOLERANCE {
            return format!("; their places on disk {change:+.1} MiB");
        }
        assert!(
            !strict_disk(),
            "after {attack}: the places where sandboxes could leave data on the host's disk (the engine's directory and log, the cluster's containers, pods and pod logs) grew by {} (tolerance {}); the sandboxes hold {} of it",
            mib(grew),
            mib(DISK_TOLERANCE),
            mib(held)
        );
        format!(
            "; their places on disk {change:+.1} MiB, over the tolerance but not enforced outside CI (other engine users; the sandboxes' own share is {})",
            mib(held)
        )
    }
}
