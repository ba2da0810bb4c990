//! The host floor: `sh -c true` spawned straight on this host, alone and in concurrent chains,
//! with no service, HTTP or container in the way.
//!
//! The concurrent floor again, each chain in a CPU cgroup of its own as each sandbox is, shows
//! how much of the concurrent tail the kernel's scheduling of many cgroups adds by itself. A
//! chain is then this binary run again (`--spawn-chain-in DIR`): it moves itself into `DIR`
//! (writing its pid to `cgroup.procs` works alike on cgroup v1 and v2), says it is ready, waits
//! for a line on stdin so that all chains start together, spawns, and prints each latency.

use crate::report::Sample;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The physical floor under the exec figures: `sh -c true` spawned straight on this host
/// (with the host's busybox, the binary the bench image is built from, when there is one),
/// output piped as the agent does. std spawns it with posix_spawn. No service, HTTP or
/// container is in the way, so no service can do better on this machine.
pub(crate) fn host_spawn() -> Result<Duration> {
    let mut command = if Path::new("/bin/busybox").exists() {
        let mut busybox = Command::new("/bin/busybox");
        busybox.arg0("sh");
        busybox
    } else {
        Command::new("/bin/sh")
    };
    let started = Instant::now();
    let output = command.args(["-c", "true"]).output()?;
    if !output.status.success() {
        bail!("sh -c true failed on the host: {}", output.status);
    }
    Ok(started.elapsed())
}

/// `commands` spawns in a row: one chain of the concurrent floor.
fn spawn_chain(commands: usize) -> Result<Vec<Duration>> {
    (0..commands).map(|_| host_spawn()).collect()
}

/// The floor of the concurrent figure: `chains` threads each spawning `commands` in a row,
/// all at once.
pub(crate) fn host_spawn_concurrent(chains: usize, commands: usize) -> Result<Sample> {
    let concurrent = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..chains)
            .map(|_| scope.spawn(|| spawn_chain(commands)))
            .collect();
        threads
            .into_iter()
            .map(|thread| thread.join().expect("spawning thread panicked"))
            .collect::<Result<Vec<_>>>()
    })?;
    Ok(Sample(concurrent.into_iter().flatten().collect()))
}

/// The line a chain prints once it is in its cgroup.
const READY: &str = "ready";

/// The cgroups made for one measurement, removed when it ends (also on failure).
struct Cgroups {
    parent: PathBuf,
    children: Vec<PathBuf>,
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        for child in &self.children {
            let _ = std::fs::remove_dir(child);
        }
        let _ = std::fs::remove_dir(&self.parent);
    }
}

/// Chains that have not ended are killed (a failed measurement leaves none running).
struct Chains(Vec<Child>);

impl Drop for Chains {
    fn drop(&mut self) {
        for chain in &mut self.0 {
            let _ = chain.kill();
            let _ = chain.wait();
        }
    }
}

/// `chains` chains of `commands` spawns each, all at once, each in a cgroup of its own.
/// The inner `Err` is why it was skipped, where this host gives no CPU cgroups to make (not
/// root, no cgroupfs).
pub(crate) fn host_spawn_concurrent_in_cgroups(
    chains: usize,
    commands: usize,
) -> Result<std::result::Result<Sample, String>> {
    let cgroups = match make_cgroups(chains) {
        Ok(cgroups) => cgroups,
        Err(e) => return Ok(Err(format!("{e:#}"))),
    };
    let bench = std::env::current_exe().context("cannot find the bench's own binary")?;
    let mut running = Chains(Vec::new());
    for dir in &cgroups.children {
        let chain = Command::new(&bench)
            .arg("--spawn-chain-in")
            .arg(dir)
            .arg("--spawn-chain-commands")
            .arg(commands.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("cannot start a chain of spawns")?;
        running.0.push(chain);
    }
    let mut outputs = Vec::new();
    for chain in &mut running.0 {
        let mut output = BufReader::new(chain.stdout.take().context("a chain's stdout")?);
        let mut line = String::new();
        output.read_line(&mut line)?;
        if line.trim() != READY {
            bail!("a chain of spawns did not get into its cgroup: {line:?}");
        }
        outputs.push(output);
    }
    for chain in &mut running.0 {
        writeln!(chain.stdin.as_mut().context("a chain's stdin")?, "go")?;
    }
    let mut latencies = Vec::new();
    for output in outputs {
        for line in output.lines() {
            latencies.push(Duration::from_nanos(line?.trim().parse()?));
        }
    }
    for chain in &mut running.0 {
        if !chain.wait()?.success() {
            bail!("a chain of spawns failed");
        }
    }
    if latencies.len() != chains * commands {
        bail!(
            "{} spawn latencies from the chains, not {}",
            latencies.len(),
            chains * commands
        );
    }
    Ok(Ok(Sample(latencies)))
}

/// A parent cgroup of the CPU controller with `count` children.
fn make_cgroups(count: usize) -> Result<Cgroups> {
    let name = format!("sandboxd-bench-{}", std::process::id());
    let v2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    let root = if v2 {
        PathBuf::from("/sys/fs/cgroup")
    } else {
        PathBuf::from("/sys/fs/cgroup/cpu")
    };
    if !root.is_dir() {
        bail!("no CPU cgroup hierarchy at {}", root.display());
    }
    // The host's own setting is not the bench's to change.
    let delegated = |dir: &Path| {
        std::fs::read_to_string(dir.join("cgroup.subtree_control"))
            .is_ok_and(|controllers| controllers.split_whitespace().any(|c| c == "cpu"))
    };
    if v2 && !delegated(&root) {
        bail!("the cpu controller is not enabled below {}", root.display());
    }
    let parent = root.join(name);
    std::fs::create_dir(&parent).with_context(|| format!("cannot make {}", parent.display()))?;
    let mut cgroups = Cgroups {
        parent: parent.clone(),
        children: Vec::new(),
    };
    if v2 {
        std::fs::write(parent.join("cgroup.subtree_control"), "+cpu")
            .with_context(|| format!("cannot enable the cpu controller in {}", parent.display()))?;
    }
    for index in 0..count {
        let child = parent.join(index.to_string());
        std::fs::create_dir(&child).with_context(|| format!("cannot make {}", child.display()))?;
        cgroups.children.push(child);
    }
    Ok(cgroups)
}

/// A chain's side (`--spawn-chain-in DIR`): into `dir`, ready, wait for the start, spawn
/// `commands` times, print each latency in nanoseconds.
pub(crate) fn run_chain(dir: &Path, commands: usize) -> Result<()> {
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
        .with_context(|| format!("cannot move into {}", dir.display()))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{READY}")?;
    stdout.flush()?;
    let mut go = String::new();
    std::io::stdin().read_line(&mut go)?;
    for latency in spawn_chain(commands)? {
        writeln!(stdout, "{}", latency.as_nanos())?;
    }
    Ok(())
}
