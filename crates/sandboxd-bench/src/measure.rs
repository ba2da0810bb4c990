//! The measurements: each operation through sandboxd and the raw API, and the host floor.

use crate::floor;
use crate::raw::Raw;
use crate::report::{print_row, time, Figures, Sample, MIB};
use crate::sandboxd::{Api, Service, TOKEN};
use anyhow::{bail, Result};
use std::time::{Duration, Instant};

/// The concurrent figure: this many sessions, each running this many commands in a row.
const SESSIONS: usize = 20;
const COMMANDS: usize = 50;

pub(crate) async fn run(
    n: usize,
    image: &str,
    api: &Api,
    raw: &Raw,
    service: &Service,
) -> Result<Figures> {
    println!(
        "sandboxd-bench: image {}, {} iterations per operation",
        image, n
    );
    println!(
        "{:<34} {:>11} {:>11} | {:>11} {:>11} | {:>7}",
        "operation", "sandboxd p50", "p99", "raw API p50", "p99", "ratio"
    );

    // Warm both paths up once so first-use costs do not count.
    let warm_id = api.open("cold").await?;
    api.exec(&warm_id, "true").await?;
    api.close(&warm_id).await?;
    let warm_raw = raw.create_start().await?;
    raw.exec(&warm_raw, "true").await?;
    raw.remove(&warm_raw).await?;

    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut cold_sessions = Vec::new();
    let mut raw_containers = Vec::new();
    for _ in 0..n {
        cold_sessions.push(time(&mut ours, api.open("cold")).await?);
        raw_containers.push(time(&mut theirs, raw.create_start()).await?);
    }
    let (cold, raw_create) = (Sample(ours), Sample(theirs));
    print_row("session create, cold", &cold, Some(&raw_create));

    let warm = api.warm_opens(n, Duration::from_secs(4)).await?;
    print_row("session create, warm pool", &warm, Some(&raw_create));

    let (session, container) = (&cold_sessions[0], &raw_containers[0]);
    // Ours first, the raw API's after, not in turn: a raw exec leaves the engine busy (its
    // shim and runc winding down) into whatever runs next, which would be charged to ours.
    // The host floor is taken in turn with ours, so both see the same machine.
    let (mut ours, mut argv, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..(n * 5) {
        time(&mut ours, api.exec(session, "true")).await?;
        time(&mut argv, api.exec_argv(session, &["true"])).await?;
        floor.push(floor::host_spawn()?);
    }
    let mut theirs = Vec::new();
    for _ in 0..(n * 5) {
        time(&mut theirs, raw.exec(container, "true")).await?;
    }
    let (exec_true, exec_argv, raw_exec_true) = (Sample(ours), Sample(argv), Sample(theirs));
    let floor_single = Sample(floor);
    print_row("exec `true`", &exec_true, Some(&raw_exec_true));
    print_row("exec argv [\"true\"]", &exec_argv, Some(&raw_exec_true));

    let big = "head -c 1048576 /dev/zero";
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let result = time(&mut ours, api.exec(session, big)).await?;
        if result["stdout"].as_str().map(str::len) != Some(MIB) {
            bail!("sandboxd returned a short 1 MB output");
        }
        if time(&mut theirs, raw.exec(container, big)).await? < MIB {
            bail!("the raw exec returned a short 1 MB output");
        }
    }
    print_row("exec, 1 MB of output", &Sample(ours), Some(&Sample(theirs)));

    run_files(n, api, raw, session, container).await?;
    crate::snapshots::run(n, api, raw, session, container).await?;

    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for (id, container) in cold_sessions.iter().zip(&raw_containers) {
        time(&mut ours, api.close(id)).await?;
        time(&mut theirs, raw.remove(container)).await?;
    }
    let close = Sample(ours);
    print_row("session close", &close, Some(&Sample(theirs)));

    let (concurrent, rss_bytes) = run_concurrent(api, raw, service).await?;
    let floor_concurrent = floor::host_spawn_concurrent(SESSIONS, COMMANDS)?;
    println!("\nhost floor: the same `sh -c true` spawned straight on this host (no service, no container)");
    print_row("spawn `true`", &floor_single, None);
    print_row("20 x 50 concurrent spawns", &floor_concurrent, None);
    match floor::host_spawn_concurrent_in_cgroups(SESSIONS, COMMANDS)? {
        Ok(in_cgroups) => print_row("the same, a CPU cgroup per chain", &in_cgroups, None),
        Err(reason) => println!("(the same with a CPU cgroup per chain: skipped, {reason})"),
    }
    Ok(Figures {
        cold,
        raw_create,
        warm,
        exec_true,
        exec_argv,
        raw_exec_true,
        floor_single,
        close,
        concurrent,
        floor_concurrent,
        rss_bytes,
    })
}

async fn run_files(n: usize, api: &Api, raw: &Raw, session: &str, container: &str) -> Result<()> {
    let data: Vec<u8> = (0..MIB)
        .map(|i| u8::try_from(i * 31 % 251).expect("a remainder of 251 fits a byte"))
        .collect();
    let path = format!(
        "{}/v1/sessions/{session}/files/content?path=/tmp/bench.bin",
        api.url
    );
    let (mut writes, mut raw_writes, mut reads, mut raw_reads) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        time(&mut writes, async {
            let response = api
                .http
                .put(&path)
                .bearer_auth(TOKEN)
                .body(data.clone())
                .send()
                .await?;
            if !response.status().is_success() {
                bail!("file write: {}", response.status());
            }
            Ok(())
        })
        .await?;
        time(&mut raw_writes, raw.put_file(container, &data)).await?;
        let read = time(&mut reads, async {
            let response = api
                .http
                .get(&path)
                .bearer_auth(TOKEN)
                .send()
                .await?
                .error_for_status()?;
            Ok(response.bytes().await?)
        })
        .await?;
        if read.as_ref() != data.as_slice() {
            bail!("file read returned other bytes than were written");
        }
        time(&mut raw_reads, raw.get_file(container)).await?;
    }
    print_row(
        "file write, 1 MB",
        &Sample(writes),
        Some(&Sample(raw_writes)),
    );
    print_row("file read, 1 MB", &Sample(reads), Some(&Sample(raw_reads)));
    Ok(())
}

/// 20 sessions each running 50 commands, all at once; the same against 20 raw containers.
/// Each side's first exec in each of its sandboxes, all at once, is reported on its own
/// before: as for the single exec, the first use of a sandbox started a moment ago stays out
/// of the concurrent figure. Returns our latencies and the service's RSS with the sessions open.
async fn run_concurrent(api: &Api, raw: &Raw, service: &Service) -> Result<(Sample, u64)> {
    let mut ids = Vec::new();
    for _ in 0..SESSIONS {
        ids.push(api.open("cold").await?);
    }
    let rss = service.rss_bytes();
    let ours_first = in_a_row_on_each(&ids, 1, |id| api.exec(id, "true"))
        .await?
        .0;
    let (ours, ours_elapsed) = in_a_row_on_each(&ids, COMMANDS, |id| api.exec(id, "true")).await?;

    let mut containers = Vec::new();
    for _ in 0..SESSIONS {
        containers.push(raw.create_start().await?);
    }
    let theirs_first = in_a_row_on_each(&containers, 1, |c| raw.exec(c, "true"))
        .await?
        .0;
    let (theirs, raw_elapsed) =
        in_a_row_on_each(&containers, COMMANDS, |c| raw.exec(c, "true")).await?;
    print_row(
        "first exec of 20 new, at once",
        &ours_first,
        Some(&theirs_first),
    );
    print_row("20 x 50 concurrent `true`", &ours, Some(&theirs));
    let total = (SESSIONS * COMMANDS) as f64;
    println!(
        "{:<34} {:>11.0} cmd/s           | {:>11.0} cmd/s           | {:>6.1}x",
        "20 x 50 throughput",
        total / ours_elapsed.as_secs_f64(),
        total / raw_elapsed.as_secs_f64(),
        raw_elapsed.as_secs_f64() / ours_elapsed.as_secs_f64()
    );
    println!(
        "{:<34} {:>11.1} MB (VmRSS of sandboxd)",
        "service memory, 20 open sessions",
        rss as f64 / MIB as f64
    );
    for id in &ids {
        api.close(id).await?;
    }
    for c in &containers {
        raw.remove(c).await?;
    }
    Ok((ours, rss))
}

/// Runs `op` `times` in a row on each of `targets`, all targets at once: the latencies, and
/// how long the whole took.
async fn in_a_row_on_each<'a, T, Fut>(
    targets: &'a [String],
    times: usize,
    op: impl Fn(&'a str) -> Fut,
) -> Result<(Sample, Duration)>
where
    Fut: std::future::Future<Output = Result<T>>,
{
    let started = Instant::now();
    let per_target = futures_util::future::try_join_all(targets.iter().map(|target| {
        let op = &op;
        async move {
            let mut samples = Vec::new();
            for _ in 0..times {
                time(&mut samples, op(target)).await?;
            }
            Ok::<_, anyhow::Error>(samples)
        }
    }))
    .await?;
    Ok((
        Sample(per_target.into_iter().flatten().collect()),
        started.elapsed(),
    ))
}
