//! Volumes: what mounting one costs a session's open, and how fast a sandbox writes and reads
//! one, each beside its floor in the same run. The open with one volume is timed against the
//! warm pool's open of the same runtime, each with the pool full (on runc the volume is
//! mounted into the pooled sandbox it is handed; the difference is what the budget of
//! 20 ms is held to). The 256 MiB sequential
//! write (`dd ... conv=fsync`) and read (`iflag=direct`, past the page cache) run inside the
//! sandbox on the volume and on the host in the service's state directory (the filesystem
//! that holds the volume's image), each timed whole: the write and read rates are compared.

use crate::report::{print_row, time, Figure, Goal, Sample, Target};
use crate::sandboxd::Api;
use anyhow::{bail, Context, Result};
use reqwest::Method;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// The runtime with a warm pool (`Service::start`'s `warm`).
const POOLED: &str = "warm";
const VOLUME: &str = "bench-volume";
const MOUNT: &str = "/workspace/data";
const MIB_MOVED: u64 = 256;
/// The warm pool's sandboxes besides ours, waited for before each pooled open.
const POOL_SIZE: u64 = 5;

pub(crate) async fn run(n: usize, api: &Api, state_dir: &Path) -> Result<Vec<Goal>> {
    api.call(
        Method::POST,
        "/v1/volumes",
        Some(json!({"name": VOLUME, "size": "512m"})),
    )
    .await?;
    let measured = measure(n, api, state_dir).await;
    let removed = api
        .call(Method::DELETE, &format!("/v1/volumes/{VOLUME}"), None)
        .await;
    let goals = measured?;
    removed?;
    Ok(goals)
}

async fn measure(n: usize, api: &Api, state_dir: &Path) -> Result<Vec<Goal>> {
    // In turn, each pooled open after the pool filled again, so both see the same machine.
    let (mut pooled, mut mounted) = (Vec::new(), Vec::new());
    for _ in 0..n {
        wait_for_pool(api).await?;
        let id = time(&mut pooled, api.open(POOLED)).await?;
        api.close(&id).await?;
        wait_for_pool(api).await?;
        let id = time(&mut mounted, open_with_volume(api)).await?;
        api.close(&id).await?;
    }
    let (pooled, mounted) = (Sample(pooled), Sample(mounted));
    print_row("session create, warm pool (in turn)", &pooled, None);
    print_row("session create, one volume", &mounted, None);

    let id = open_with_volume(api).await?;
    let moved = move_bytes(api, &id, state_dir).await;
    api.close(&id).await?;
    let moved = moved?;
    let rate = |d: Duration| MIB_MOVED as f64 / d.as_secs_f64();
    println!(
        "{:<34} write {:>7.1} MB/s, read {:>7.1} MB/s | host disk write {:>7.1} MB/s, read {:>7.1} MB/s (256 MiB, dd fsync / direct)",
        "volume, sequential",
        rate(moved.volume_write),
        rate(moved.volume_read),
        rate(moved.host_write),
        rate(moved.host_read)
    );
    Ok(vec![
        Goal {
            name: "open with one volume vs a warm-pool open".into(),
            figure: Figure::Latency(mounted.p50()),
            floor: Some(Figure::Latency(pooled.p50())),
            target: Target::AtMostOver(Figure::Latency(Duration::from_millis(20))),
        },
        Goal {
            name: "256 MiB written to a volume vs the host's disk".into(),
            figure: Figure::Rate(rate(moved.volume_write)),
            floor: Some(Figure::Rate(rate(moved.host_write))),
            target: Target::NotBelowTimes(0.8),
        },
        Goal {
            name: "256 MiB read from a volume vs the host's disk".into(),
            figure: Figure::Rate(rate(moved.volume_read)),
            floor: Some(Figure::Rate(rate(moved.host_read))),
            target: Target::NotBelowTimes(0.8),
        },
    ])
}

async fn wait_for_pool(api: &Api) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while api.pooled().await? < POOL_SIZE {
        if Instant::now() > deadline {
            bail!("the warm pool did not fill within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

async fn open_with_volume(api: &Api) -> Result<String> {
    let session = api
        .call(
            Method::POST,
            "/v1/sessions",
            Some(json!({"runtime": POOLED, "volumes": [{"name": VOLUME, "path": MOUNT}]})),
        )
        .await?;
    Ok(session["id"].as_str().context("no id")?.to_string())
}

/// The four timings of the sequential write and read, in the sandbox and on the host.
struct Moved {
    volume_write: Duration,
    volume_read: Duration,
    host_write: Duration,
    host_read: Duration,
}

async fn move_bytes(api: &Api, id: &str, state_dir: &Path) -> Result<Moved> {
    let write =
        |path: &str| format!("dd if=/dev/zero of={path} bs=1M count={MIB_MOVED} conv=fsync");
    let read = |path: &str| format!("dd if={path} of=/dev/null bs=1M iflag=direct");
    let inside = format!("{MOUNT}/bench.bin");
    let mut volume = (Vec::new(), Vec::new());
    time(&mut volume.0, api.exec(id, &write(&inside))).await?;
    time(&mut volume.1, api.exec(id, &read(&inside))).await?;
    api.exec(id, &format!("rm {inside}")).await?;

    let host_file = state_dir.join("bench-host.bin");
    let host_path = host_file
        .to_str()
        .context("a state directory that is not UTF-8")?;
    let host_write = on_host(&write(host_path))?;
    let host_read = on_host(&read(host_path));
    let _ = std::fs::remove_file(&host_file);
    Ok(Moved {
        volume_write: volume.0[0],
        volume_read: volume.1[0],
        host_write,
        host_read: host_read?,
    })
}

/// Runs the shell command on the host, timed whole.
fn on_host(command: &str) -> Result<Duration> {
    let started = Instant::now();
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("{command} 2>/dev/null")])
        .status()?;
    if !status.success() {
        bail!("{command} failed on the host: {status}");
    }
    Ok(started.elapsed())
}
