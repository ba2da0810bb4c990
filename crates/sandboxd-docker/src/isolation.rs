//! A runtime's isolation tier as the engine runs it: runc, or gVisor's runsc registered with the
//! engine under [`GVISOR_RUNTIME`] (`scripts/host-setup.sh` builds and registers it).
//!
//! gVisor counts processes twice: each process of the sandbox has a stub process on the host
//! (the systrap platform), and the sandbox's kernel has its own limit. So a gVisor sandbox's
//! `pids_limit` is enforced inside, by gVisor (`RLIMIT_NPROC` of the sandbox's user, whose
//! processes are all of the sandbox's), and the host's limit is set above it for the stubs
//! and gVisor's own threads: at the runtime's limit on the host, about 50 processes killed
//! the whole sandbox.
//!
//! Memory likewise: all of a gVisor sandbox's memory (its processes' pages, its tmpfs files)
//! is in gVisor's kernel, which has no OOM killer of its own, and a host OOM kill of any of
//! its processes (the kernel, the gofer, a process's stub) ends the whole sandbox
//! (google/gvisor#2533). So the limit is kept inside, where it refuses instead of killing:
//! each process's address space is capped at the runtime's `mem_limit` (`RLIMIT_AS`, which
//! gVisor enforces on every mapping: a memory bomb gets ENOMEM), the tmpfs places are capped
//! by their size (ENOSPC), and the host's cgroup is set above their sum, with room for
//! gVisor's own memory.

use bollard::models::ResourcesUlimits;
use sandboxd_agent_proto::AGENT_NO_OOM_KILLER_FLAG;
use sandboxd_api::{Isolation, Limits};

/// The engine's name for gVisor's runtime.
pub const GVISOR_RUNTIME: &str = "runsc";
/// Host processes a gVisor sandbox needs beside one stub per process of its own: the
/// sandbox's kernel's threads and its gofer.
const GVISOR_HOST_PROCESSES: u32 = 256;
/// Host memory of gVisor itself, measured: its kernel and gofer idle at about 15 MiB; each
/// process of the sandbox adds about 0.45 MiB (stub and page tables; budgeted 512 KiB).
const GVISOR_HOST_MEMORY: u64 = 32 << 20;
const GVISOR_HOST_MEMORY_PER_PROCESS: u64 = 512 << 10;
/// The sandbox's memory-backed places, each `tmpfs_size`: /tmp, /dev/shm and /workspace.
const TMPFS_PLACES: u64 = 3;

/// What the engine is told for a sandbox of `limits`.
pub(crate) struct TierSettings {
    /// The engine's runtime; `None` is its default (runc).
    pub runtime: Option<String>,
    /// The cgroup's pids limit on the host.
    pub host_pids_limit: i64,
    /// The cgroup's memory limit on the host (swap included: none).
    pub host_memory: i64,
    pub ulimits: Option<Vec<ResourcesUlimits>>,
    /// Arguments that describe the tier to the agent.
    pub agent_args: Vec<String>,
}

pub(crate) fn settings(limits: &Limits) -> TierSettings {
    match limits.isolation {
        Isolation::Runc => TierSettings {
            runtime: None,
            host_pids_limit: i64::from(limits.pids_limit),
            host_memory: saturating_i64(limits.mem_limit_bytes),
            ulimits: None,
            agent_args: Vec::new(),
        },
        Isolation::Gvisor => {
            let inside = i64::from(limits.pids_limit);
            let host_memory = limits
                .mem_limit_bytes
                .saturating_add(limits.tmpfs_size_bytes.saturating_mul(TMPFS_PLACES))
                .saturating_add(GVISOR_HOST_MEMORY)
                .saturating_add(
                    u64::from(limits.pids_limit).saturating_mul(GVISOR_HOST_MEMORY_PER_PROCESS),
                );
            let ulimit = |name: &str, limit: i64| ResourcesUlimits {
                name: Some(name.to_string()),
                soft: Some(limit),
                hard: Some(limit),
            };
            TierSettings {
                runtime: Some(GVISOR_RUNTIME.to_string()),
                host_pids_limit: inside * 2 + i64::from(GVISOR_HOST_PROCESSES),
                host_memory: saturating_i64(host_memory),
                // `as` is not among the docker CLI's names, but the engine passes any name
                // on as RLIMIT_NAME.
                ulimits: Some(vec![
                    ulimit("nproc", inside),
                    ulimit("as", saturating_i64(limits.mem_limit_bytes)),
                ]),
                agent_args: vec![AGENT_NO_OOM_KILLER_FLAG.to_string()],
            }
        }
    }
}

fn saturating_i64(bytes: u64) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

/// Why the engine cannot run every runtime of the config, when it cannot: `engine_runtimes`
/// are the runtimes it reports, `wanted` each runtime alias and its tier.
pub fn missing_tier<'a>(
    engine_runtimes: &[String],
    wanted: impl IntoIterator<Item = (&'a str, Isolation)>,
) -> Option<String> {
    if engine_runtimes.iter().any(|r| r == GVISOR_RUNTIME) {
        return None;
    }
    let gvisor: Vec<&str> = wanted
        .into_iter()
        .filter(|(_, isolation)| *isolation == Isolation::Gvisor)
        .map(|(alias, _)| alias)
        .collect();
    (!gvisor.is_empty()).then(|| {
        format!(
            "runtimes {} ask for isolation = \"gvisor\", and the Docker engine has no runtime \"{GVISOR_RUNTIME}\" (it has: {}); scripts/host-setup.sh builds gVisor and registers it with the engine, or remove those runtimes",
            gvisor.join(", "),
            engine_runtimes.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gvisor_limits_are_enforced_inside_and_the_host_leaves_room_for_gvisor() {
        let mut limits = sandboxd_api::Limits {
            mem_limit_bytes: 1 << 30,
            cpus: 1.0,
            pids_limit: 64,
            network_mode: sandboxd_api::NetworkMode::None,
            tmpfs_size_bytes: 1 << 20,
            isolation: Isolation::Runc,
        };
        let runc = settings(&limits);
        assert_eq!((runc.runtime, runc.host_pids_limit), (None, 64));
        assert_eq!(runc.host_memory, 1 << 30);
        assert!(
            runc.agent_args.is_empty(),
            "runc's kernel chooses OOM victims"
        );
        limits.isolation = Isolation::Gvisor;
        let gvisor = settings(&limits);
        assert_eq!(gvisor.runtime.as_deref(), Some("runsc"));
        assert!(gvisor.host_pids_limit > 2 * 64);
        assert_eq!(gvisor.agent_args, ["--no-oom-killer"]);
        // One process at the limit beside full tmpfs places and gVisor's own memory fits
        // under the host's limit.
        assert!(gvisor.host_memory >= (1 << 30) + 3 * (1 << 20) + (32 << 20));
        let ulimits = gvisor.ulimits.unwrap();
        let hard = |name: &str| {
            ulimits
                .iter()
                .find(|u| u.name.as_deref() == Some(name))?
                .hard
        };
        assert_eq!((hard("nproc"), hard("as")), (Some(64), Some(1 << 30)));
    }

    #[test]
    fn an_engine_without_runsc_is_named_with_the_runtimes_that_need_it() {
        let engine = vec!["runc".to_string()];
        assert_eq!(missing_tier(&engine, [("sh", Isolation::Runc)]), None);
        let why = missing_tier(
            &engine,
            [("sh", Isolation::Runc), ("py-g", Isolation::Gvisor)],
        )
        .unwrap();
        assert!(
            why.contains("py-g") && why.contains("runsc") && !why.contains("sh,"),
            "{why}"
        );
        let with = vec!["runc".to_string(), "runsc".to_string()];
        assert_eq!(missing_tier(&with, [("py-g", Isolation::Gvisor)]), None);
    }
}
