//! Pause to disk on gVisor (`--gvisor`): a Python session holding 64 MiB of live objects,
//! paused (its memory and processes written to the state directory, its RAM released) and
//! resumed (restored, its agent answering again), `n` times each, the resume sent the moment
//! the pause answered; then `n` more with the resume sent a second after the pause (not timed),
//! as an idle session's is; then forked into 4 sessions
//! that carry its processes (the answer comes once all four agents answer), and sessions opened
//! from a snapshot with its memory, a few times each. Each restoring figure is held against
//! runsc alone restoring the same sandbox ([`crate::restore_floor`]) in the same run.

use crate::report::{print_row, time, Figure, Goal, Sample, Target};
use crate::restore_floor::RestoreFloor;
use crate::sandboxd::Api;
use anyhow::{bail, Result};
use reqwest::Method;
use serde_json::json;
use std::time::{Duration, Instant};

/// The runtime the gVisor service gets for these rows.
pub(crate) const RUNTIME: &str = "python-memory";
/// What the session's process holds: 64 MiB of random bytes, which cannot be shared or
/// compressed away.
const HOLD: &str =
    "python3 -c 'import os, time; held = bytearray(os.urandom(64 << 20)); time.sleep(1e9)'";
const HELD_BYTES: u64 = 64 << 20;
/// Sessions per fork, and forks measured at most: each holds four copies of the memory.
const FORKED: usize = 4;
const FORKS: usize = 5;
/// How long the settled resumes wait after their pause.
const SETTLE: Duration = Duration::from_secs(1);

/// The runtime's lines for the gVisor service's config.
pub(crate) fn runtime(python_image: &str) -> String {
    format!("\n[runtimes.{RUNTIME}]\nimage = \"{python_image}\"\nmem_limit = \"512m\"\n")
}

pub(crate) async fn run(n: usize, api: &Api, floor: &RestoreFloor) -> Result<Vec<Goal>> {
    let id = api.open(RUNTIME).await?;
    let path = |rest: &str| format!("/v1/sessions/{id}{rest}");
    api.call(
        Method::POST,
        &path("/processes"),
        Some(json!({"command": HOLD})),
    )
    .await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while api.call(Method::GET, &path(""), None).await?["memory_bytes"]
        .as_u64()
        .unwrap_or(0)
        < HELD_BYTES
    {
        if Instant::now() > deadline {
            bail!("the Python process did not come to hold 64 MiB within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (mut pauses, mut resumes, mut settled) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..2 * n {
        let paused = time(
            &mut pauses,
            api.call(Method::POST, &path("/pause"), Some(json!({}))),
        )
        .await?;
        if paused["paused_memory"] != "disk" {
            bail!("the pause kept the memory in RAM ({paused}): the engine's runsc is not scripts/runsc-sandboxd (SANDBOXD_GVISOR=1 scripts/host-setup.sh registers it)");
        }
        let resumed = if round < n {
            &mut resumes
        } else {
            tokio::time::sleep(SETTLE).await;
            &mut settled
        };
        time(
            resumed,
            api.call(Method::POST, &path("/resume"), Some(json!({}))),
        )
        .await?;
    }
    let log = api.call(Method::GET, &path("/activity"), None).await?;
    let image = log["entries"]
        .as_array()
        .and_then(|entries| entries.iter().find(|e| e["action"] == "pause"))
        .and_then(|entry| entry["bytes"].as_u64())
        .unwrap_or_default();
    let (pauses, resumes, settled) = (Sample(pauses), Sample(resumes), Sample(settled));
    print_row(
        &format!(
            "pause to disk, Python holding 64 MiB ({} MiB image)",
            image >> 20
        ),
        &pauses,
        None,
    );
    println!("  (floor of the restoring rows: runsc alone restoring the same sandbox, until an exec answers)");
    print_row(
        "resume from disk at once, agent answering",
        &resumes,
        Some(&floor.single),
    );
    print_row(
        "resume from disk 1 s after, agent answering",
        &settled,
        Some(&floor.single),
    );
    let mut forks = Vec::new();
    for _ in 0..n.min(FORKS) {
        let forked = time(
            &mut forks,
            api.call(
                Method::POST,
                &path("/fork"),
                Some(json!({"count": FORKED, "memory": true})),
            ),
        )
        .await?;
        for session in forked["sessions"].as_array().into_iter().flatten() {
            api.close(session["id"].as_str().unwrap_or_default())
                .await?;
        }
    }
    let forks = Sample(forks);
    print_row(
        "fork of 4 carrying the processes, all answering",
        &forks,
        Some(&floor.four),
    );
    let snapshot = api
        .call(
            Method::POST,
            &path("/snapshots"),
            Some(json!({"name": "bench", "memory": true})),
        )
        .await?;
    let snapshot_id = snapshot["id"].as_str().unwrap_or_default().to_string();
    let mut opens = Vec::new();
    for _ in 0..n.min(FORKS) {
        let opened = time(
            &mut opens,
            api.call(
                Method::POST,
                "/v1/sessions",
                Some(json!({"snapshot": snapshot_id})),
            ),
        )
        .await?;
        api.close(opened["id"].as_str().unwrap_or_default()).await?;
    }
    api.call(
        Method::DELETE,
        &format!("/v1/snapshots/{snapshot_id}"),
        None,
    )
    .await?;
    let opens = Sample(opens);
    print_row(
        "open from a snapshot with memory, agent answering",
        &opens,
        Some(&floor.single),
    );
    api.close(&id).await?;
    let goal = |name: &str, figure: &Sample, floor: Option<&Sample>, budget_ms: u64| Goal {
        name: name.into(),
        figure: Figure::Latency(figure.p50()),
        floor: floor.map(|floor| Figure::Latency(floor.p50())),
        target: Target::AtMost(Figure::Latency(Duration::from_millis(budget_ms))),
    };
    Ok(vec![
        goal("gVisor pause to disk p50, 64 MiB held", &pauses, None, 150),
        goal(
            "gVisor resume at once p50 vs runsc's restore",
            &resumes,
            Some(&floor.single),
            150,
        ),
        goal(
            "gVisor resume 1 s after p50 vs runsc's restore",
            &settled,
            Some(&floor.single),
            150,
        ),
        goal(
            "gVisor fork of 4 p50 vs runsc's 4 restores",
            &forks,
            Some(&floor.four),
            600,
        ),
        goal(
            "gVisor open from a memory snapshot vs runsc's restore",
            &opens,
            Some(&floor.single),
            200,
        ),
    ])
}
