//! What idle containers cost the host, read from /proc and the containers' memory cgroups:
//! the processes in each container (PID 1 and the rest), the engine's per-container shim, the
//! engine's daemons, the kernel's objects (slab, kernel stacks, page tables, per-CPU data) and
//! the host's memory in use as a whole. User-space figures are PSS (proportional set size), so
//! the pages of one binary mapped by every container (the agent, the shim) count once in all.

use std::collections::HashMap;

/// The kernel's memory counters, from /proc/meminfo, in bytes.
#[derive(Clone, Copy, Default)]
pub(crate) struct HostMemory {
    /// MemTotal - MemAvailable: what the host could not give to a new program.
    pub(crate) used: u64,
    /// Slab + KernelStack + PageTables + Percpu: the kernel objects behind processes,
    /// sockets, mounts and cgroups.
    pub(crate) kernel: u64,
    pub(crate) available: u64,
}

impl HostMemory {
    pub(crate) fn read() -> HostMemory {
        let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let fields: HashMap<&str, u64> = text
            .lines()
            .filter_map(|line| {
                let (name, rest) = line.split_once(':')?;
                let kib = rest
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()?;
                Some((name, kib * 1024))
            })
            .collect();
        let field = |name: &str| fields.get(name).copied().unwrap_or(0);
        HostMemory {
            used: field("MemTotal").saturating_sub(field("MemAvailable")),
            kernel: ["Slab", "KernelStack", "PageTables", "Percpu"]
                .iter()
                .map(|name| field(name))
                .sum(),
            available: field("MemAvailable"),
        }
    }
}

/// The user-space memory of the processes behind a set of containers, summed, in bytes (PSS).
#[derive(Default)]
pub(crate) struct Processes {
    pub(crate) containers: usize,
    /// Each container's PID 1 (docker-init, or the agent's own init).
    pub(crate) init: u64,
    /// Every other process in the containers (the agent, or the raw side's `sleep`).
    pub(crate) rest: u64,
    pub(crate) rest_threads: u64,
    /// The engine's shims (one per container, or one per group sharing it).
    pub(crate) shim: u64,
    pub(crate) shims: usize,
    /// The engine's daemons (dockerd, containerd).
    pub(crate) daemons: u64,
    /// The containers' memory cgroups' own count (memory.usage_in_bytes): their processes'
    /// pages, page cache and kernel memory charged to them.
    pub(crate) cgroups: u64,
}

/// One process's parent, name and thread count.
struct Process {
    parent: u32,
    name: String,
    threads: u64,
}

/// Reads the processes of the containers with these ids (full ids) and the engine's daemons.
/// A container's processes are its cgroup's; its PID 1 is the one whose parent is outside,
/// the engine's shim, which sandboxes may share: each shim counts once.
pub(crate) fn processes(container_ids: &[String]) -> Processes {
    let table = process_table();
    let daemons = table
        .iter()
        .filter(|(_, p)| p.name == "dockerd" || p.name == "containerd")
        .map(|(pid, _)| pss(*pid))
        .sum();
    let mut sum = Processes {
        daemons,
        ..Processes::default()
    };
    let mut shims = std::collections::HashSet::new();
    for id in container_ids {
        let inside: Vec<u32> = cgroup_file(id, "pids", "cgroup.procs")
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        let parent = |pid: &u32| table.get(pid).map_or(0, |p| p.parent);
        let Some(&init) = inside.iter().find(|pid| !inside.contains(&parent(pid))) else {
            continue;
        };
        sum.containers += 1;
        sum.cgroups += cgroup_file(id, "memory", "memory.usage_in_bytes")
            .or_else(|| cgroup_file(id, "", "memory.current"))
            .and_then(|text| text.trim().parse::<u64>().ok())
            .unwrap_or(0);
        shims.insert(parent(&init));
        for pid in &inside {
            if *pid == init {
                sum.init += pss(init);
            } else {
                sum.rest += pss(*pid);
                sum.rest_threads += table.get(pid).map_or(0, |p| p.threads);
            }
        }
    }
    sum.shims = shims.len();
    sum.shim = shims.iter().map(|pid| pss(*pid)).sum();
    sum
}

/// A file of a container's cgroup: v1 (cgroupfs driver, under `controller`) or v2.
fn cgroup_file(id: &str, controller: &str, file: &str) -> Option<String> {
    [
        format!("/sys/fs/cgroup/{controller}/docker/{id}/{file}"),
        format!("/sys/fs/cgroup/docker/{id}/{file}"),
        format!("/sys/fs/cgroup/system.slice/docker-{id}.scope/{file}"),
    ]
    .iter()
    .find_map(|path| std::fs::read_to_string(path).ok())
}

fn process_table() -> HashMap<u32, Process> {
    let mut table = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return table;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        table.insert(
            pid,
            Process {
                parent: field("PPid:").parse().unwrap_or(0),
                name: field("Name:"),
                threads: field("Threads:").parse().unwrap_or(0),
            },
        );
    }
    table
}

/// A process's proportional set size in bytes (0 if it is gone).
pub(crate) fn pss(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// CPU time used so far (user + system), in clock ticks, by the process `pid`.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    ticks_of(&fields_after_name(&stat))
}

/// The fields of a /proc/PID/stat line after the command name, which is in parentheses and
/// may hold spaces: the line's field N is at N - 3.
fn fields_after_name(stat: &str) -> Vec<&str> {
    stat.rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default()
}

/// utime + stime (fields 14 and 15) of [`fields_after_name`].
fn ticks_of(fields: &[&str]) -> u64 {
    [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i)?.parse::<u64>().ok())
        .sum()
}

/// What every program on the host used of the CPUs over a window, by command name: what else
/// ran while the service was measured and slowed its answers without being its own (the
/// machine's own agent, the kernel's memory monitor, the engine's shims). Counted from
/// /proc/PID/stat, so it sees what `perf` may not (a VM's init hidden from it) and misses
/// only processes that began and ended inside the window. The measuring process (the
/// benchmark) is left out: its reading of every process is its own work, not the host's.
pub(crate) struct HostActivity {
    ticks: HashMap<u32, ProcessUsage>,
    busy: u64,
    since: std::time::Instant,
}

/// [`HostActivity`] over its window: each command name's share of one CPU.
pub(crate) struct CpuShares {
    /// The whole host's busy time, as a share of one CPU (at most the CPU count).
    pub(crate) host: f64,
    /// Command name, its processes, their share; the busiest first.
    pub(crate) programs: Vec<(String, usize, f64)>,
}

impl HostActivity {
    pub(crate) fn start() -> HostActivity {
        HostActivity {
            ticks: process_usage(),
            busy: host_busy_ticks(),
            since: std::time::Instant::now(),
        }
    }

    pub(crate) fn finish(self) -> CpuShares {
        // Read before the processes, whose reading (thousands of files) is the window's no more.
        let window = self.since.elapsed();
        let busy = host_busy_ticks().saturating_sub(self.busy);
        let mut by_name: HashMap<String, (usize, u64)> = HashMap::new();
        let measurer = std::process::id();
        for (pid, usage) in process_usage() {
            if pid == measurer {
                continue;
            }
            // The same process, not a later one given its pid: then all its time is the window's.
            let before = self
                .ticks
                .get(&pid)
                .filter(|was| was.started == usage.started);
            let used = usage
                .ticks
                .saturating_sub(before.map_or(0, |was| was.ticks));
            let entry = by_name.entry(usage.name).or_default();
            entry.0 += 1;
            entry.1 += used;
        }
        let mut programs: Vec<(String, usize, f64)> = by_name
            .into_iter()
            .map(|(name, (count, ticks))| (name, count, ticks_share(ticks, window)))
            .collect();
        programs.sort_by(|a, b| b.2.total_cmp(&a.2));
        CpuShares {
            host: ticks_share(busy, window),
            programs,
        }
    }
}

impl CpuShares {
    /// The share of the programs of this name, 0 where none ran.
    pub(crate) fn of(&self, name: &str) -> f64 {
        self.programs
            .iter()
            .find(|(n, _, _)| n == name)
            .map_or(0.0, |(_, _, share)| *share)
    }
}

/// The kernel's workers' share of one CPU under which [`kernel_settled`] calls them settled.
const SETTLED_SHARE: f64 = 0.1;

/// Waits, at most `limit`, until the kernel's workers (`kworker/*`) have used under
/// [`SETTLED_SHARE`] of a CPU for three seconds in a row, and returns how long it waited.
/// Removing containers costs the kernel's workers CPU after the removal (with thousands of
/// network namespaces alive, freeing one took up to 0.9 s of CPU in a teardown measured): the
/// cost of the removals (the raw side's, in the scale run), not of the sessions left open.
pub(crate) async fn kernel_settled(limit: std::time::Duration) -> std::time::Duration {
    let started = std::time::Instant::now();
    let second = std::time::Duration::from_secs(1);
    let mut calm = 0;
    let mut before = kernel_worker_ticks();
    while calm < 3 && started.elapsed() < limit {
        tokio::time::sleep(second).await;
        let after = kernel_worker_ticks();
        let used: u64 = after
            .iter()
            .map(|(pid, ticks)| ticks.saturating_sub(before.get(pid).copied().unwrap_or(*ticks)))
            .sum();
        calm = if ticks_share(used, second) < SETTLED_SHARE {
            calm + 1
        } else {
            0
        };
        // The end of one second is the start of the next: /proc is read once a second.
        before = after;
    }
    started.elapsed()
}

fn kernel_worker_ticks() -> HashMap<u32, u64> {
    process_usage()
        .into_iter()
        .filter(|(_, usage)| usage.name == "kworker")
        .map(|(pid, usage)| (pid, usage.ticks))
        .collect()
}

/// One process's command name, CPU time so far and start (in clock ticks after boot).
struct ProcessUsage {
    name: String,
    ticks: u64,
    started: u64,
}

/// Every process's [`ProcessUsage`]. The kernel's workers count as one program: their names
/// change with the work they last did.
fn process_usage() -> HashMap<u32, ProcessUsage> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let name = stat.split_once(" (")?.1.rsplit_once(')')?.0;
            let name = if name.starts_with("kworker/") {
                "kworker"
            } else {
                name
            };
            let fields = fields_after_name(&stat);
            Some((
                pid,
                ProcessUsage {
                    name: name.to_string(),
                    ticks: ticks_of(&fields),
                    // starttime, field 22.
                    started: fields.get(19)?.parse().ok()?,
                },
            ))
        })
        .collect()
}

/// Clock ticks over `window` as a share of one CPU. /proc counts in USER_HZ, 100 per second on
/// Linux whatever the kernel's own tick.
fn ticks_share(ticks: u64, window: std::time::Duration) -> f64 {
    ticks as f64 / 100.0 / window.as_secs_f64()
}

/// The CPU used over a window while nothing is asked of the service, each as a share of one
/// CPU.
pub(crate) struct IdleCpu {
    pub(crate) service: f64,
    /// dockerd and containerd.
    pub(crate) daemons: f64,
    /// The whole host: also the shims, the sandboxes and whatever else runs here.
    pub(crate) host: f64,
}

pub(crate) async fn idle_cpu(service: u32, window: std::time::Duration) -> IdleCpu {
    let daemons = || -> u64 {
        process_table()
            .iter()
            .filter(|(_, p)| p.name == "dockerd" || p.name == "containerd")
            .map(|(pid, _)| cpu_ticks(*pid))
            .sum()
    };
    let before = (cpu_ticks(service), daemons(), host_busy_ticks());
    tokio::time::sleep(window).await;
    let share = |ticks: u64| ticks_share(ticks, window);
    IdleCpu {
        service: share(cpu_ticks(service).saturating_sub(before.0)),
        daemons: share(daemons().saturating_sub(before.1)),
        host: share(host_busy_ticks().saturating_sub(before.2)),
    }
}

/// The host's busy time from `/proc/stat`: every CPU's time but idle and waiting for I/O.
fn host_busy_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(all) = stat.lines().next().and_then(|l| l.strip_prefix("cpu ")) else {
        return 0;
    };
    all.split_whitespace()
        .filter_map(|n| n.parse::<u64>().ok())
        .enumerate()
        // user nice system idle iowait irq softirq steal (guest time is inside user).
        .filter(|(i, _)| !matches!(i, 3 | 4) && *i < 8)
        .map(|(_, n)| n)
        .sum()
}

/// The disk space a directory tree takes (allocated blocks, like `du`), links not followed.
pub(crate) fn tree_bytes(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let inside: u64 = if meta.is_dir() {
        std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| tree_bytes(&entry.path()))
            .sum()
    } else {
        0
    };
    meta.blocks() * 512 + inside
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_process_is_counted_and_the_measurer_is_not() {
        let mut busy = std::process::Command::new("/bin/sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let activity = HostActivity::start();
        let until = std::time::Instant::now() + std::time::Duration::from_millis(500);
        // The measurer busy too: its own time must not be counted.
        while std::time::Instant::now() < until {
            std::hint::black_box(0u64);
        }
        let shares = activity.finish();
        busy.kill().unwrap();
        busy.wait().unwrap();
        assert!(
            shares.of("sh") > 0.1,
            "the shell's share: {}",
            shares.of("sh")
        );
        let measurer = std::fs::read_to_string("/proc/self/comm").unwrap();
        assert_eq!(shares.of(measurer.trim()), 0.0);
        assert!(shares.host >= shares.of("sh") * 0.9);
    }
}
