//! A sandbox's limits as the file gives them, each inherited from the level above (built in,
//! `[defaults]`, a runtime, a recipe) and checked.

use crate::error::{invalid, ConfigError};
use crate::size::format_bytes;
use crate::size::SizeValue;
use sandboxd_api::{Isolation, Limits, NetworkMode};
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsFile {
    mem_limit: Option<SizeValue>,
    cpus: Option<f64>,
    pids_limit: Option<i64>,
    network_mode: Option<String>,
    tmpfs_size: Option<SizeValue>,
    isolation: Option<String>,
}

/// Service-wide defaults that apply when the file names none.
pub(crate) const BUILTIN_DEFAULTS: Limits = Limits {
    mem_limit_bytes: 1 << 30,
    cpus: 1.0,
    pids_limit: 256,
    network_mode: NetworkMode::None,
    tmpfs_size_bytes: 256 << 20,
    isolation: Isolation::Runc,
};

/// The memory-backed places of a sandbox of `tmpfs_size` each: `/tmp`, the working
/// directory and `/dev/shm`.
pub(crate) const TMPFS_PLACES: u64 = 3;

/// Docker refuses memory limits below 6 MB; a sandbox needs more than that anyway.
const MIN_MEM_LIMIT: u64 = 6 << 20;

pub(crate) fn resolve_limits(
    file: &LimitsFile,
    inherited: &Limits,
    prefix: &str,
) -> Result<Limits, ConfigError> {
    let field = |name: &str| format!("{prefix}{name}");
    let mem_limit_bytes = match &file.mem_limit {
        Some(value) => value.resolve(&field("mem_limit"))?,
        None => inherited.mem_limit_bytes,
    };
    if mem_limit_bytes < MIN_MEM_LIMIT {
        return Err(invalid(
            field("mem_limit"),
            format!(
                "{} is below the minimum of 6m",
                format_bytes(mem_limit_bytes)
            ),
        ));
    }
    let cpus = file.cpus.unwrap_or(inherited.cpus);
    if !(cpus.is_finite() && cpus > 0.0) {
        return Err(invalid(
            field("cpus"),
            format!("must be a number above 0 (e.g. 0.5 or 2.0), got {cpus}"),
        ));
    }
    let pids_limit = match file.pids_limit {
        Some(n) => u32::try_from(n).ok().filter(|&n| n >= 1).ok_or_else(|| {
            invalid(
                field("pids_limit"),
                format!("must be a whole number of processes of at least 1, got {n}"),
            )
        })?,
        None => inherited.pids_limit,
    };
    let network_mode = match file.network_mode.as_deref() {
        None => inherited.network_mode,
        Some("none") => NetworkMode::None,
        Some("bridge") => NetworkMode::Bridge,
        Some("egress") => NetworkMode::Egress,
        Some(other) => {
            return Err(invalid(
                field("network_mode"),
                format!("unknown network mode \"{other}\"; use \"none\", \"bridge\" or \"egress\""),
            ))
        }
    };
    let tmpfs_size_bytes = match &file.tmpfs_size {
        Some(value) => value.resolve(&field("tmpfs_size"))?,
        None => inherited.tmpfs_size_bytes,
    };
    if tmpfs_size_bytes < 1 << 20 {
        return Err(invalid(field("tmpfs_size"), "must be at least 1m"));
    }
    let isolation = match file.isolation.as_deref() {
        None => inherited.isolation,
        Some("runc") => Isolation::Runc,
        Some("gvisor") => Isolation::Gvisor,
        Some(other) => {
            return Err(invalid(
                field("isolation"),
                format!("unknown isolation \"{other}\"; use \"runc\" (a container on the host's kernel) or \"gvisor\" (a kernel of the sandbox's own)"),
            ))
        }
    };
    Ok(Limits {
        mem_limit_bytes,
        cpus,
        pids_limit,
        network_mode,
        tmpfs_size_bytes,
        isolation,
    })
}
