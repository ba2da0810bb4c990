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
    /// The engine's per-container shim.
    pub(crate) shim: u64,
    /// The engine's daemons (dockerd, containerd).
    pub(crate) daemons: u64,
    /// The containers' memory cgroups' own count (memory.usage_in_bytes): their processes'
    /// pages, page cache and kernel memory charged to them.
    pub(crate) cgroups: u64,
}

/// One process's parent, name, thread count and PSS.
struct Process {
    parent: u32,
    name: String,
    threads: u64,
    command_line: String,
}

/// Reads the processes of the containers with these ids (full ids) and the engine's daemons.
pub(crate) fn processes(container_ids: &[String]) -> Processes {
    let table = process_table();
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, process) in &table {
        children.entry(process.parent).or_default().push(*pid);
    }
    let mut shim_of: HashMap<&str, u32> = HashMap::new();
    let mut daemons = 0;
    for (pid, process) in &table {
        if process.name.starts_with("containerd-shim") {
            // `containerd-shim-runc-v2 -namespace moby -id ID -address ...`
            let mut words = process.command_line.split('\0');
            if words.by_ref().any(|w| w == "-id") {
                if let Some(id) = words.next() {
                    shim_of.insert(id, *pid);
                }
            }
        } else if process.name == "dockerd" || process.name == "containerd" {
            daemons += pss(*pid);
        }
    }
    let mut sum = Processes {
        daemons,
        ..Processes::default()
    };
    for id in container_ids {
        let Some(&shim) = shim_of.get(id.as_str()) else {
            continue;
        };
        sum.containers += 1;
        sum.shim += pss(shim);
        sum.cgroups += cgroup_usage(id);
        // The shim's child is the container's PID 1; everything below it is the container's.
        for &init in children.get(&shim).into_iter().flatten() {
            sum.init += pss(init);
            let mut below: Vec<u32> = children.get(&init).cloned().unwrap_or_default();
            while let Some(pid) = below.pop() {
                sum.rest += pss(pid);
                sum.rest_threads += table.get(&pid).map_or(0, |p| p.threads);
                below.extend(children.get(&pid).into_iter().flatten());
            }
        }
    }
    sum
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
                command_line: std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                    .unwrap_or_default(),
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

/// A container's memory cgroup's usage: v1 (cgroupfs driver) or v2.
fn cgroup_usage(id: &str) -> u64 {
    [
        format!("/sys/fs/cgroup/memory/docker/{id}/memory.usage_in_bytes"),
        format!("/sys/fs/cgroup/docker/{id}/memory.current"),
        format!("/sys/fs/cgroup/system.slice/docker-{id}.scope/memory.current"),
    ]
    .iter()
    .find_map(|path| std::fs::read_to_string(path).ok())
    .and_then(|text| text.trim().parse().ok())
    .unwrap_or(0)
}

/// CPU time used so far (user + system), in clock ticks, by the process `pid`.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i)?.parse::<u64>().ok())
        .sum()
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
    // /proc counts in USER_HZ, 100 per second on Linux whatever the kernel's own tick.
    let share = |ticks: u64| ticks as f64 / 100.0 / window.as_secs_f64();
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
