//! The scale run (`--scale N`): N sessions opened by concurrent clients against the raw Engine
//! API creating and starting as many containers of the same shape; what the N idle sessions
//! cost the host each (see `footprint`); exec with N open against exec with one; the service's
//! memory; and a kill -9 restart of the service with the N open.
//!
//! It runs its own service (an instance of its own, so a restart adopts only its sandboxes)
//! and removes every container it made by label, also on failure. It stops opening, and
//! cleans up, when the host's available memory falls under [`MIN_AVAILABLE`].

use crate::floor::host_spawn;
use crate::footprint::{self, CpuShares, HostActivity, HostMemory, Processes};
use crate::raw::Raw;
use crate::report::{time, whole_bytes, Figure, Goal, Sample, Target, MIB};
use crate::sandboxd::{Api, Service, TOKEN};
use anyhow::{bail, Context, Result};
use bollard::query_parameters::ListContainersOptionsBuilder;
use futures_util::{stream, StreamExt, TryStreamExt};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Below this much available host memory the run stops opening and cleans up.
const MIN_AVAILABLE: u64 = 4 << 30;
/// Containers per round of the create comparison (see [`measure`]).
const ROUND: usize = 100;
/// Sessions whose opening is compared with the raw API's (the create goal's count); beyond
/// them the service's side opens alone, which halves the time of a run of thousands.
const COMPARED: usize = 1000;
/// Sequential execs of `true` on one session, with one and with N open: a p99 of 1,000 is
/// the tenth slowest (of 300 it was the third, one burst of the host's away from another), and
/// the CPU account's window of about 2 s counts to half a point of a CPU (/proc's ticks are
/// 10 ms).
const EXEC_SAMPLES: usize = 1000;
/// The longest wait for the kernel's work after removals (see [`footprint::kernel_settled`]).
const SETTLE_LIMIT: Duration = Duration::from_secs(300);
/// Programs named in the account of who else used the CPUs while exec was sampled.
const BUSIEST_SHOWN: usize = 6;
/// Sessions asked at once whether they answer after the restart: enough that the asking does
/// not queue behind itself, few enough for two cores.
const ANSWER_CONCURRENCY: usize = 64;
/// How long each session gets to answer after the restart.
const ANSWER_DEADLINE: Duration = Duration::from_secs(30);
const GIB: f64 = (1u64 << 30) as f64;

/// The tier of the scale run's sandboxes, and what an idle one may cost the host.
#[derive(Clone, Copy)]
pub(crate) enum Isolation {
    Runc,
    /// A kernel of its own per sandbox (gVisor's Sentry and its stubs): the issue's budget is
    /// 20 MB each.
    Gvisor,
}

impl Isolation {
    fn config_line(self) -> &'static str {
        match self {
            Isolation::Runc => "",
            Isolation::Gvisor => "isolation = \"gvisor\"",
        }
    }

    fn budget(self) -> u64 {
        match self {
            Isolation::Runc => 3 * MIB as u64,
            Isolation::Gvisor => 20 * MIB as u64,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Isolation::Runc => "runc",
            Isolation::Gvisor => "gVisor",
        }
    }
}

/// The figures of the scale run, for the goals.
pub(crate) struct ScaleFigures {
    pub(crate) isolation: Isolation,
    pub(crate) count: usize,
    pub(crate) clients: usize,
    /// The sessions (and raw containers) whose opening was timed for the create goal.
    pub(crate) compared: usize,
    pub(crate) ours_rate: f64,
    pub(crate) raw_rate: f64,
    /// Host memory per idle session, attributed (see [`Costs::attributed`]).
    pub(crate) per_session: f64,
    pub(crate) exec_one: Sample,
    pub(crate) exec_many: Sample,
    pub(crate) rss_bytes: u64,
    /// From the kill to the restarted service listening.
    pub(crate) serving: Duration,
    /// From the kill to the last session answering an exec.
    pub(crate) all_answered: Duration,
    /// The floor of `all_answered`: asking every session once the same way, before the kill.
    pub(crate) ask_all: Duration,
    pub(crate) answered: usize,
}

pub(crate) async fn run(
    count: usize,
    clients: usize,
    sandboxd: &Path,
    agent: &Path,
    raw: &Raw,
    isolation: Isolation,
) -> Result<ScaleFigures> {
    let config = format!(
        r#"
token = "{TOKEN}"
default_runtime = "cold"
max_sessions = {}
mem_limit = "256m"
pids_limit = 128
tmpfs_size = "64m"

[runtimes.cold]
image = "{}"
{}
"#,
        count + 1,
        raw.image,
        isolation.config_line()
    );
    Service::measured_with(sandboxd, agent, &config, "-scale", raw, async |service| {
        measure(count, clients, service, raw, isolation).await
    })
    .await
}

async fn measure(
    count: usize,
    clients: usize,
    service: &mut Service,
    raw: &Raw,
    isolation: Isolation,
) -> Result<ScaleFigures> {
    println!(
        "\nscale: {count} sessions on {} opened by {clients} concurrent clients, image {}",
        isolation.name(),
        raw.image
    );
    let api = Api {
        http: reqwest::Client::new(),
        url: service.url.clone(),
    };
    let probe = api.open("cold").await?;
    let one = exec_samples(&api, &probe).await?;
    let rss_one = service.rss_bytes();

    // In rounds, the raw side first and removed again before the service's side opens as
    // many, so both start from the same engine and share whatever else the host does.
    let before = HostMemory::read();
    let (mut raw_time, mut ours_time) = (Duration::ZERO, Duration::ZERO);
    let mut raw_costs = None;
    let mut ids = Vec::with_capacity(count);
    let mut remaining = count - 1;
    let mut compared = 0;
    let run_started = Instant::now();
    while remaining > 0 {
        let round = remaining.min(ROUND);
        let comparing = compared < COMPARED;
        if comparing {
            let raw_before = HostMemory::read();
            let started = Instant::now();
            let containers: Vec<String> = stream::iter(0..round)
                .map(|_| async {
                    guard_memory()?;
                    raw.create_start().await
                })
                .buffer_unordered(clients)
                .try_collect()
                .await?;
            raw_time += started.elapsed();
            raw_costs = Some(Costs::read(&containers, raw_before, 0, 0));
            stream::iter(&containers)
                .map(|c| raw.remove(c))
                .buffer_unordered(clients)
                .try_collect::<Vec<()>>()
                .await?;
        }
        let started = Instant::now();
        let opened: Vec<String> = stream::iter(0..round)
            .map(|_| async {
                guard_memory()?;
                api.open("cold").await
            })
            .buffer_unordered(clients)
            .try_collect()
            .await?;
        let took = started.elapsed();
        if comparing {
            ours_time += took;
            compared += round;
        }
        ids.extend(opened);
        remaining -= round;
        // Long work shows its progress: a run of thousands takes tens of minutes.
        eprintln!(
            "scale: {} of {count} open after {:.0} s (the last {round} at {:.1} /s)",
            ids.len() + 1,
            run_started.elapsed().as_secs_f64(),
            round as f64 / took.as_secs_f64()
        );
    }
    let raw_costs = raw_costs.context("the scale run needs at least 2 sessions")?;
    let raw_rate = compared as f64 / raw_time.as_secs_f64();
    let ours_rate = compared as f64 / ours_time.as_secs_f64();
    ids.push(probe.clone());
    // Let the agents' spare connections and the service's pings settle, and the kernel free
    // the raw side's removed containers.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let settling = footprint::kernel_settled(SETTLE_LIMIT).await;
    if settling < SETTLE_LIMIT {
        eprintln!(
            "scale: the kernel's workers settled after {:.0} s",
            settling.as_secs_f64()
        );
    } else {
        eprintln!(
            "scale: the kernel's workers were still busy after {} s; measuring anyway",
            SETTLE_LIMIT.as_secs()
        );
    }
    let rss_bytes = service.rss_bytes();
    let sandboxes = sandbox_ids(raw, &service.instance).await?;
    let costs = Costs::read(&sandboxes, before, rss_one, rss_bytes);
    let idle = footprint::idle_cpu(service.pid(), Duration::from_secs(8)).await;
    let many = exec_samples(&api, &probe).await?;

    println!(
        "{:<34} {:>11.1} /s                | {:>11.1} /s                | {:>6.2}x",
        format!("open {compared}, {clients} clients"),
        ours_rate,
        raw_rate,
        ours_rate / raw_rate
    );
    crate::report::print_row("exec `true`, 1 session open", &one.exec, None);
    crate::report::print_row(&format!("exec `true`, {count} open"), &many.exec, None);
    crate::report::print_row("host spawn `sh -c true`, 1 open", &one.host_spawn, None);
    crate::report::print_row(
        &format!("host spawn `sh -c true`, {count} open"),
        &many.host_spawn,
        None,
    );
    println!(
        "  with {count} open the host's own spawn (no service, HTTP or container) moved p50 {:.2}x, p99 {:.2}x; the service's exec p50 {:.2}x, p99 {:.2}x",
        ratio(many.host_spawn.p50(), one.host_spawn.p50()),
        ratio(many.host_spawn.p99(), one.host_spawn.p99()),
        ratio(many.exec.p50(), one.exec.p50()),
        ratio(many.exec.p99(), one.exec.p99()),
    );
    print_activity(&one.activity, &many.activity, count);
    println!(
        "{:<34} {:>11.1} MB with 1 open, {:.1} MB with {count}",
        "service memory (VmRSS)",
        rss_one as f64 / MIB as f64,
        rss_bytes as f64 / MIB as f64
    );
    println!(
        "{:<34} service {:.1}% of a CPU, engine daemons {:.1}%, the whole host {:.1}% (of 100% per CPU), over 8 s with {count} open and no requests",
        "idle CPU",
        idle.service * 100.0,
        idle.daemons * 100.0,
        idle.host * 100.0
    );
    raw_costs.print(&format!(
        "{} raw containers (sleep)",
        raw_costs.processes.containers
    ));
    costs.print(&format!("{} idle sessions", costs.processes.containers));
    let per_session = costs.attributed();
    println!(
        "  extrapolated (not measured) to 3,000 sessions: {:.1} GiB attributed, {:.1} GiB by the host's count",
        per_session * 3000.0 / GIB,
        costs.host_used_each() * 3000.0 / GIB
    );

    // What a start must wait for whoever starts: the engine's answers with N running.
    let asked = Instant::now();
    let (version, info) = tokio::join!(raw.docker.version(), raw.docker.info());
    version?;
    info?;
    println!(
        "{:<34} {:.2} s for /version and /info at once, with {count} open (a start asks both)",
        "engine answering",
        asked.elapsed().as_secs_f64()
    );
    // The floor of the answers after the restart: asking all N takes time of its own.
    let asking = Instant::now();
    let asked: Vec<Option<Duration>> = stream::iter(&ids)
        .map(|id| time_an_answer(&api, id, asking))
        .buffer_unordered(ANSWER_CONCURRENCY)
        .collect()
        .await;
    let ask_all = asking.elapsed();
    if asked.iter().any(Option::is_none) {
        bail!("a session did not answer a stat before the restart");
    }
    let killed = Instant::now();
    tokio::task::block_in_place(|| service.kill_and_restart())?;
    let serving = killed.elapsed();
    let api = Api {
        http: reqwest::Client::new(),
        url: service.url.clone(),
    };
    let answers: Vec<Option<Duration>> = stream::iter(&ids)
        .map(|id| time_an_answer(&api, id, killed))
        .buffer_unordered(ANSWER_CONCURRENCY)
        .collect()
        .await;
    for line in service.said("from the last run") {
        println!("  the service: {line}");
    }
    let answered = answers.iter().flatten().count();
    let all_answered = answers.iter().flatten().max().copied().unwrap_or_default();
    println!(
        "{:<34} serving again {:.2} s after the kill; {answered} of {} sessions answered a stat of their working directory, the last {:.2} s after the kill (asking all {} before the kill took {:.3} s)",
        "kill -9 restart",
        serving.as_secs_f64(),
        ids.len(),
        all_answered.as_secs_f64(),
        ids.len(),
        ask_all.as_secs_f64()
    );

    let closed: Vec<Result<()>> = stream::iter(&ids)
        .map(|id| api.close(id))
        .buffer_unordered(clients)
        .collect()
        .await;
    closed.into_iter().collect::<Result<Vec<()>>>()?;
    Ok(ScaleFigures {
        isolation,
        count,
        clients,
        compared,
        ours_rate,
        raw_rate,
        per_session,
        exec_one: one.exec,
        exec_many: many.exec,
        rss_bytes,
        serving,
        all_answered,
        ask_all,
        answered,
    })
}

fn guard_memory() -> Result<()> {
    let available = HostMemory::read().available;
    if available < MIN_AVAILABLE {
        bail!(
            "the host has only {:.1} GiB available (under {:.0} GiB): stopping the scale run",
            available as f64 / GIB,
            MIN_AVAILABLE as f64 / GIB
        );
    }
    Ok(())
}

/// Sequential execs of `true` on the session, and in turn with them the host floor's spawn of
/// the same (see [`host_spawn`]), so both see the same machine: with thousands of sandboxes the
/// host itself slows, whatever the service does.
async fn exec_samples(api: &Api, id: &str) -> Result<ExecSamples> {
    let mut execs = Vec::with_capacity(EXEC_SAMPLES);
    let mut spawns = Vec::with_capacity(EXEC_SAMPLES);
    let activity = HostActivity::start();
    for _ in 0..EXEC_SAMPLES {
        time(&mut execs, api.exec(id, "true")).await?;
        spawns.push(host_spawn()?);
    }
    Ok(ExecSamples {
        exec: Sample(execs),
        host_spawn: Sample(spawns),
        activity: activity.finish(),
    })
}

/// What [`exec_samples`] measured.
struct ExecSamples {
    exec: Sample,
    host_spawn: Sample,
    /// What every program on the host used of the CPUs meanwhile.
    activity: CpuShares,
}

/// Who used the CPUs while exec was sampled, with one open and with `count`: with thousands
/// of sandboxes the host's own work grows (the kernel's memory monitor, DAMON, walks every
/// mapping of the pages it samples; a VM's init may scan every network namespace), and with
/// two cores and a kernel that does not preempt itself, an exec's hops wait behind it.
fn print_activity(one: &CpuShares, many: &CpuShares, count: usize) {
    println!(
        "  CPU used while exec was sampled, as a share of one CPU, with 1 open -> {count} open: the whole host {:.0}% -> {:.0}%; the busiest programs but the benchmark:",
        one.host * 100.0,
        many.host * 100.0
    );
    for (name, processes, share) in many.programs.iter().take(BUSIEST_SHOWN) {
        println!(
            "    {name:<20} {:>5.1}% -> {:>5.1}% ({processes} processes)",
            one.of(name) * 100.0,
            share * 100.0
        );
    }
}

fn ratio(figure: Duration, floor: Duration) -> f64 {
    figure.as_secs_f64() / floor.as_secs_f64()
}

/// Asks the session's agent for a stat until it answers; how long after `since` that was.
/// A stat rather than an exec: thousands of spawns at once would measure two cores' spawn
/// rate, not the restart.
async fn time_an_answer(api: &Api, id: &str, since: Instant) -> Option<Duration> {
    while since.elapsed() < ANSWER_DEADLINE {
        if api.stat_workdir(id).await.is_ok() {
            return Some(since.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// The full ids of the service's sandboxes.
async fn sandbox_ids(raw: &Raw, instance: &str) -> Result<Vec<String>> {
    let filters = HashMap::from([(
        "label".to_string(),
        vec![format!("org.sandboxd.instance={instance}")],
    )]);
    let options = ListContainersOptionsBuilder::default()
        .filters(&filters)
        .build();
    let listed = raw.docker.list_containers(Some(options)).await?;
    listed
        .into_iter()
        .map(|c| c.id.context("a container without an id"))
        .collect()
}

/// What a set of idle containers costs, against the host before they started.
struct Costs {
    processes: Processes,
    before: HostMemory,
    after: HostMemory,
    /// The service's growth (0 for the raw side).
    service_growth: u64,
}

impl Costs {
    fn read(containers: &[String], before: HostMemory, rss_before: u64, rss_after: u64) -> Costs {
        Costs {
            processes: footprint::processes(containers),
            before,
            after: HostMemory::read(),
            service_growth: rss_after.saturating_sub(rss_before),
        }
    }

    fn each(&self, bytes: u64) -> f64 {
        bytes as f64 / self.processes.containers.max(1) as f64
    }

    /// PSS of the containers' processes and their shims, and the growth of the kernel's
    /// objects and of the service, per container. The daemons' own memory is left out: it
    /// moves with garbage collection more than with the count.
    fn attributed(&self) -> f64 {
        let p = &self.processes;
        self.each(
            p.init
                + p.rest
                + p.shim
                + self.after.kernel.saturating_sub(self.before.kernel)
                + self.service_growth,
        )
    }

    /// The host's memory in use, grown, per container: everything, also what other programs
    /// on the host did meanwhile.
    fn host_used_each(&self) -> f64 {
        self.each(self.after.used.saturating_sub(self.before.used))
    }

    fn print(&self, what: &str) {
        let p = &self.processes;
        let kib = |bytes: f64| format!("{:.0} KiB", bytes / 1024.0);
        println!("{what}, each (PSS; kernel from /proc/meminfo):");
        println!(
            "  PID 1 {}, other processes {} ({:.1} threads), shim {} ({} shims for {}), kernel objects {}, service {}; attributed {:.2} MB",
            kib(self.each(p.init)),
            kib(self.each(p.rest)),
            self.each(p.rest_threads),
            kib(self.each(p.shim)),
            p.shims,
            p.containers,
            kib(self.each(self.after.kernel.saturating_sub(self.before.kernel))),
            kib(self.each(self.service_growth)),
            self.attributed() / MIB as f64
        );
        println!(
            "  memory cgroup {}; host memory in use grew {:.2} MB each (whole host, noisy); engine daemons {:.0} MB in all",
            kib(self.each(p.cgroups)),
            self.host_used_each() / MIB as f64,
            p.daemons as f64 / MIB as f64
        );
    }
}

impl ScaleFigures {
    /// The issue's goals 3-5, each against its floor in this run.
    pub(crate) fn goals(&self) -> Vec<Goal> {
        let n = self.count;
        // A session that never answered leaves the goal missed.
        let last_answer = if self.answered == n {
            self.all_answered
        } else {
            ANSWER_DEADLINE
        };
        vec![
            Goal {
                name: format!(
                    "host memory per idle {} session, at {n} (attributed)",
                    self.isolation.name()
                ),
                figure: Figure::Bytes(whole_bytes(self.per_session)),
                floor: None,
                target: Target::AtMost(Figure::Bytes(self.isolation.budget())),
            },
            Goal {
                name: format!("exec p50 with {n} open vs with one"),
                figure: Figure::Latency(self.exec_many.p50()),
                floor: Some(Figure::Latency(self.exec_one.p50())),
                target: Target::AtMostTimes(1.2),
            },
            Goal {
                name: format!("exec p99 with {n} open vs with one"),
                figure: Figure::Latency(self.exec_many.p99()),
                floor: Some(Figure::Latency(self.exec_one.p99())),
                target: Target::AtMostTimes(1.2),
            },
            Goal {
                name: format!("service RSS with {n} open"),
                figure: Figure::Bytes(self.rss_bytes),
                floor: None,
                target: Target::AtMost(Figure::Bytes(64 * MIB as u64)),
            },
            Goal {
                name: format!(
                    "{} opened by {} clients vs the raw API",
                    self.compared, self.clients
                ),
                figure: Figure::Rate(self.ours_rate),
                floor: Some(Figure::Rate(self.raw_rate)),
                target: Target::NotBelowTimes(1.0),
            },
            Goal {
                name: format!("kill -9 restart with {n} open: serving again"),
                figure: Figure::Latency(self.serving),
                floor: None,
                target: Target::AtMost(Figure::Latency(Duration::from_secs(2))),
            },
            Goal {
                name: format!("... and the last of {n} answering ({} did)", self.answered),
                figure: Figure::Latency(last_answer),
                // Asking all N once, before the kill: what the answers take with no restart,
                // over 2 s on a 2-core host with 3,000 open. The restart may add what serving
                // again may take.
                floor: Some(Figure::Latency(self.ask_all)),
                target: Target::AtMostOver(Figure::Latency(Duration::from_secs(2))),
            },
        ]
    }
}
