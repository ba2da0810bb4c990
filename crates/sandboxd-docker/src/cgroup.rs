//! Reads a container's memory and process count from the host's cgroup files: trustworthy
//! (the sandbox cannot forge them) and cheap enough to poll every second for every session.

use bollard::models::{SystemInfo, SystemInfoCgroupDriverEnum, SystemInfoCgroupVersionEnum};
use sandboxd_backend::Usage;
use std::path::PathBuf;

const CGROUP_ROOT: &str = "/sys/fs/cgroup";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupLayout {
    /// cgroup v1: one hierarchy per controller.
    V1 { systemd: bool },
    /// cgroup v2: one unified hierarchy.
    V2 { systemd: bool },
}

impl CgroupLayout {
    pub fn from_info(info: &SystemInfo) -> CgroupLayout {
        let systemd = info.cgroup_driver == Some(SystemInfoCgroupDriverEnum::SYSTEMD);
        match info.cgroup_version {
            Some(SystemInfoCgroupVersionEnum::_2) => CgroupLayout::V2 { systemd },
            _ => CgroupLayout::V1 { systemd },
        }
    }

    fn container_dir(&self, controller: &str, container_id: &str) -> PathBuf {
        let leaf = |systemd: bool| {
            if systemd {
                format!("system.slice/docker-{container_id}.scope")
            } else {
                format!("docker/{container_id}")
            }
        };
        match *self {
            CgroupLayout::V1 { systemd } => PathBuf::from(CGROUP_ROOT)
                .join(controller)
                .join(leaf(systemd)),
            CgroupLayout::V2 { systemd } => PathBuf::from(CGROUP_ROOT).join(leaf(systemd)),
        }
    }

    /// Memory in use (without reclaimable file cache, as `docker stats` counts it) and the
    /// number of processes. A container that is gone reads as zero.
    pub async fn usage(&self, container_id: &str) -> Usage {
        if !is_container_id(container_id) {
            return Usage::default();
        }
        let memory_dir = self.container_dir("memory", container_id);
        let pids_dir = self.container_dir("pids", container_id);
        let (usage_file, limit_file, inactive_key) = match self {
            CgroupLayout::V1 { .. } => (
                "memory.usage_in_bytes",
                "memory.limit_in_bytes",
                "total_inactive_file",
            ),
            CgroupLayout::V2 { .. } => ("memory.current", "memory.max", "inactive_file"),
        };
        let usage = read_small(memory_dir.join(usage_file));
        let limit = read_small(memory_dir.join(limit_file));
        let stat = read_small(memory_dir.join("memory.stat"));
        let pids = read_small(pids_dir.join("pids.current"));
        let usage: u64 = usage.trim().parse().unwrap_or(0);
        let inactive = stat_value(&stat, inactive_key).unwrap_or(0);
        Usage {
            memory_bytes: usage.saturating_sub(inactive),
            memory_limit_bytes: memory_limit(&limit),
            processes: pids.trim().parse().unwrap_or(0),
        }
    }
}

/// A cgroup's memory limit: none for v2's `max` or v1's page-rounded "no limit" (near 2^63).
fn memory_limit(text: &str) -> Option<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|&bytes| bytes > 0 && bytes < 1 << 62)
}

/// Container ids are hex; anything else must not be joined into a path.
fn is_container_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Kernel-made files of a few hundred bytes; an absent file (a gone container) reads as empty.
/// Read in place: the kernel makes them from memory, so reading never waits for a disk, and a
/// hop to the blocking pool would cost more than the read (exec reads one twice per command).
fn read_small(path: PathBuf) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn stat_value(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_per_layout() {
        let id = "abc123";
        assert_eq!(
            CgroupLayout::V1 { systemd: false }.container_dir("memory", id),
            PathBuf::from("/sys/fs/cgroup/memory/docker/abc123")
        );
        assert_eq!(
            CgroupLayout::V2 { systemd: true }.container_dir("pids", id),
            PathBuf::from("/sys/fs/cgroup/system.slice/docker-abc123.scope")
        );
    }

    #[test]
    fn reads_stat_keys() {
        let stat = "cache 10\ntotal_inactive_file 4096\ninactive_file 7\n";
        assert_eq!(stat_value(stat, "total_inactive_file"), Some(4096));
        assert_eq!(stat_value(stat, "inactive_file"), Some(7));
        assert_eq!(stat_value(stat, "missing"), None);
        let oom_control = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        assert_eq!(stat_value(oom_control, "oom_kill"), Some(3));
    }

    #[test]
    fn a_limit_is_a_number_below_no_limit() {
        assert_eq!(memory_limit("268435456\n"), Some(256 << 20));
        assert_eq!(memory_limit("max\n"), None);
        assert_eq!(memory_limit("9223372036854771712\n"), None);
        assert_eq!(memory_limit(""), None);
    }
}
