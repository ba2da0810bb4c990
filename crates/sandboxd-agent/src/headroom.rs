//! Whether the sandbox's memory has room for the agent to start a process.
//!
//! Files in tmpfs count against the sandbox's memory and nothing reclaims them, so a sandbox
//! can fill its memory with files and no process to kill. The agent's fork then needs memory
//! the kernel can only find by killing the agent, the only process left, and the session with
//! it; starting nothing while the room is under [`AGENT_RESERVE`] keeps the agent, and the
//! answer says what frees memory.

use std::io;

/// Room left for the agent's own fork (its page tables and kernel stack, a few hundred KiB)
/// and the kernel's per-CPU charge batches, which let memory.current lag by up to 256 KiB each.
const AGENT_RESERVE: u64 = 4 << 20;
/// More than the byte count of what a cgroup holds takes (20 digits and a newline).
const HELD_MAX_LEN: usize = 32;

/// Where the sandbox's memory cgroup keeps its limit, its use and their breakdown, and the
/// breakdown's keys for all file pages and those in tmpfs: cgroup v2, then v1.
struct Layout {
    limit: &'static str,
    held: &'static str,
    stat: &'static str,
    files: &'static str,
    in_tmpfs: &'static str,
}

const LAYOUTS: [Layout; 2] = [
    Layout {
        limit: "/sys/fs/cgroup/memory.max",
        held: "/sys/fs/cgroup/memory.current",
        stat: "/sys/fs/cgroup/memory.stat",
        files: "file",
        in_tmpfs: "shmem",
    },
    Layout {
        limit: "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        held: "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        stat: "/sys/fs/cgroup/memory/memory.stat",
        files: "total_cache",
        in_tmpfs: "total_shmem",
    },
];

/// `Err` (kind `OutOfMemory`, saying how full the sandbox is) when the sandbox's memory has
/// less than [`AGENT_RESERVE`] left; `Ok` when it has room or no memory cgroup to read.
pub fn room_to_start() -> io::Result<()> {
    let Some((layout, limit)) = *LIMIT.get_or_init(|| LAYOUTS.iter().find_map(limit_of)) else {
        return Ok(());
    };
    let Some(held) = held_now(layout) else {
        return Ok(());
    };
    if limit.saturating_sub(held) >= AGENT_RESERVE {
        return Ok(());
    }
    // Only now the fuller count: the page cache of other files is the kernel's to reclaim.
    let Some(stat) = read(layout.stat) else {
        return Ok(());
    };
    let files = stat_value(&stat, layout.files).unwrap_or(0);
    let in_tmpfs = stat_value(&stat, layout.in_tmpfs).unwrap_or(0);
    let pinned = held.saturating_sub(files.saturating_sub(in_tmpfs));
    if limit.saturating_sub(pinned) >= AGENT_RESERVE {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!(
            "the sandbox's memory is full ({} of its {} in use, {} of it files in tmpfs such as /tmp, /workspace, /home/user and /dev/shm, which count as memory); the agent starts nothing until {} are free, so that it is not the process the kernel kills. Delete files or stop processes, then try again",
            mib(pinned),
            mib(limit),
            mib(in_tmpfs),
            mib(AGENT_RESERVE)
        ),
    ))
}

/// The cgroup layout mounted and its memory limit, read at the first start: a sandbox's limit
/// does not change while it runs, so each start reads only what the cgroup holds.
static LIMIT: std::sync::OnceLock<Option<(&'static Layout, u64)>> = std::sync::OnceLock::new();

/// The memory limit of `layout`'s cgroup, when it is the one mounted; `None` without a limit
/// (v2 writes `max`; v1's "none" is a number too large to matter).
fn limit_of(layout: &'static Layout) -> Option<(&'static Layout, u64)> {
    let limit = read(layout.limit)?.trim().parse().ok()?;
    Some((layout, limit))
}

/// What the sandbox's memory holds now, from its cgroup file opened at the first check and kept
/// ([`crate::sys::read_generated`]); read by its path should the kept descriptor fail.
fn held_now(layout: &Layout) -> Option<u64> {
    static HELD: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let parse = |text: &str| text.trim().parse().ok();
    HELD.get_or_init(|| std::fs::File::open(layout.held).ok())
        .as_ref()
        .and_then(|file| crate::sys::read_generated(file, &mut [0; HELD_MAX_LEN]).and_then(parse))
        .or_else(|| read(layout.held).as_deref().and_then(parse))
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The value of `key` in a cgroup `memory.stat`.
fn stat_value(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok()).flatten()
    })
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_values_are_read_by_exact_key() {
        let stat = "anon 100\nfile 2048\nshmem 1024\nfile_mapped 7\n";
        assert_eq!(stat_value(stat, "file"), Some(2048));
        assert_eq!(stat_value(stat, "shmem"), Some(1024));
        assert_eq!(stat_value(stat, "kernel"), None);
        assert_eq!(mib(3 << 19), "1.5 MiB");
    }
}
