//! Density of sessions paused to disk (`--paused N`): N gVisor sessions opened and each paused
//! to disk by concurrent clients, then what the N hold of the host's memory (its memory in use
//! grown, per session: the engine's records of their stopped containers, the kernel's
//! objects and the service's growth; their images are on disk), the disk their images take,
//! and the resume p50/p99 of sessions spread over the N with all the others still paused.
//!
//! It runs its own service and removes every container it made by label, also on failure; it
//! stops opening when the host's available memory falls under [`MIN_AVAILABLE`].

use crate::footprint::HostMemory;
use crate::raw::Raw;
use crate::report::{print_row, time, whole_bytes, Figure, Goal, Sample, Target, MIB};
use crate::sandboxd::{Api, Service, TOKEN};
use anyhow::{bail, Result};
use futures_util::{stream, StreamExt, TryStreamExt};
use reqwest::Method;
use std::path::Path;
use std::time::{Duration, Instant};

/// Below this much available host memory the run stops opening and cleans up.
const MIN_AVAILABLE: u64 = 2 << 30;
/// Sessions opened and paused per round, between progress lines.
const ROUND: usize = 100;
/// Sessions resumed for the resume figures, spread over the N.
const RESUMED: usize = 50;

pub(crate) async fn run(
    count: usize,
    clients: usize,
    sandboxd: &Path,
    agent: &Path,
    raw: &Raw,
) -> Result<Vec<Goal>> {
    let config = format!(
        r#"
token = "{TOKEN}"
default_runtime = "paused"
max_sessions = {}
mem_limit = "256m"
pids_limit = 128
tmpfs_size = "16m"

[runtimes.paused]
image = "{}"
isolation = "gvisor"
"#,
        count + 1,
        raw.image
    );
    Service::measured_with(sandboxd, agent, &config, "-paused", raw, async |service| {
        measure(count, clients, service).await
    })
    .await
}

async fn measure(count: usize, clients: usize, service: &Service) -> Result<Vec<Goal>> {
    println!("\npaused to disk: {count} gVisor sessions opened and paused by {clients} concurrent clients");
    let api = Api {
        http: reqwest::Client::new(),
        url: service.url.clone(),
    };
    let rss_before = service.rss_bytes();
    let before = HostMemory::read();
    let started = Instant::now();
    let mut ids = Vec::with_capacity(count);
    while ids.len() < count {
        let round = (count - ids.len()).min(ROUND);
        let paused: Vec<String> = stream::iter(0..round)
            .map(|_| open_and_pause(&api))
            .buffer_unordered(clients)
            .try_collect()
            .await?;
        ids.extend(paused);
        // Long work shows its progress: thousands take minutes.
        eprintln!(
            "paused: {} of {count} paused to disk after {:.0} s",
            ids.len(),
            started.elapsed().as_secs_f64()
        );
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = HostMemory::read();
    let rss_after = service.rss_bytes();
    let images = crate::footprint::tree_bytes(&service.state_dir().join("checkpoints"));
    let per_session = after.used.saturating_sub(before.used) as f64 / count as f64;
    println!(
        "{:<34} host memory in use grew {:.2} MB each (kernel objects {:.2} MB, the service {:.2} MB of it); images {:.1} MB each on disk",
        format!("{count} paused to disk"),
        per_session / MIB as f64,
        after.kernel.saturating_sub(before.kernel) as f64 / count as f64 / MIB as f64,
        rss_after.saturating_sub(rss_before) as f64 / count as f64 / MIB as f64,
        images as f64 / count as f64 / MIB as f64,
    );

    // Spread over the N, resumed one after another with all the others still paused.
    let step = (count / RESUMED).max(1);
    let mut resumes = Vec::new();
    for id in ids.iter().step_by(step).take(RESUMED) {
        time(&mut resumes, pause_call(&api, id, "resume")).await?;
    }
    let resumes = Sample(resumes);
    print_row(&format!("resume from disk, {count} paused"), &resumes, None);

    let closed: Vec<Result<()>> = stream::iter(&ids)
        .map(|id| api.close(id))
        .buffer_unordered(clients)
        .collect()
        .await;
    closed.into_iter().collect::<Result<Vec<()>>>()?;
    Ok(vec![Goal {
        name: format!("host memory per session paused to disk, at {count}"),
        figure: Figure::Bytes(whole_bytes(per_session)),
        floor: None,
        target: Target::AtMost(Figure::Bytes(MIB as u64)),
    }])
}

async fn open_and_pause(api: &Api) -> Result<String> {
    if HostMemory::read().available < MIN_AVAILABLE {
        bail!(
            "the host has under {} GiB available: stopping the paused run",
            MIN_AVAILABLE >> 30
        );
    }
    let id = api.open("paused").await?;
    pause_call(api, &id, "pause").await?;
    Ok(id)
}

async fn pause_call(api: &Api, id: &str, action: &str) -> Result<()> {
    let path = format!("/v1/sessions/{id}/{action}");
    api.call(Method::POST, &path, Some(serde_json::json!({})))
        .await
        .map(drop)
}
