//! The ports rows: a small GET (p50, p99) and the throughput of a 100 MB download through the
//! reverse proxy (busybox httpd in a sandbox without a network, reached through its agent),
//! beside the same files served by `python3 -m http.server` on the host's loopback. The
//! bench's service raises `policy.port_bytes_per_sec` far above its default (256 MB/s), so the
//! download shows what the proxy carries rather than the cap.

use crate::report::{print_row, Sample, MIB};
use crate::sandboxd::{Api, TOKEN};
use anyhow::{bail, Context, Result};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PORT: u16 = 8001;
const BIG: usize = 100 * MIB;
/// The runtime the rows' session uses: the bench image with room for the file in /workspace.
const RUNTIME: &str = "ports";

/// The config lines of [`RUNTIME`], for the service's config.
pub(crate) fn runtime_config(image: &str) -> String {
    format!("\n[runtimes.{RUNTIME}]\nimage = \"{image}\"\nmem_limit = \"512m\"\ntmpfs_size = \"160m\"\n")
}

/// Kills the host's server when the measurement ends, also on failure.
struct HostServer(Child);

impl Drop for HostServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) async fn run(n: usize, api: &Api) -> Result<()> {
    let id = api.open(RUNTIME).await?;
    let measured = measure(n, api, &id).await;
    api.close(&id).await?;
    measured
}

async fn measure(n: usize, api: &Api, id: &str) -> Result<()> {
    api.exec(
        id,
        &format!("echo small > small.txt && head -c {BIG} /dev/zero > big.bin"),
    )
    .await?;
    api.call(
        reqwest::Method::POST,
        &format!("/v1/sessions/{id}/processes"),
        Some(serde_json::json!({
            "command": format!("httpd -f -p 127.0.0.1:{PORT} -h /workspace"),
            "timeout_secs": 600,
        })),
    )
    .await?;
    let host_dir = tempfile::tempdir()?;
    std::fs::write(host_dir.path().join("small.txt"), "small\n")?;
    std::fs::write(host_dir.path().join("big.bin"), vec![0u8; BIG])?;
    let host_port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let _host = HostServer(
        Command::new("python3")
            .args(["-m", "http.server", &host_port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .current_dir(host_dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start python3 -m http.server on the host")?,
    );
    let proxied = format!("{}/v1/sessions/{id}/ports/{PORT}", api.url);
    let host = format!("http://127.0.0.1:{host_port}");
    for base in [&proxied, &host] {
        wait_until_served(api, &format!("{base}/small.txt")).await?;
    }
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..(n * 5) {
        ours.push(get(api, &format!("{proxied}/small.txt"), 6).await?);
        theirs.push(get(api, &format!("{host}/small.txt"), 6).await?);
    }
    print_row("port: small GET", &Sample(ours), Some(&Sample(theirs)));
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..n.clamp(1, 5) {
        ours.push(get(api, &format!("{proxied}/big.bin"), BIG).await?);
        theirs.push(get(api, &format!("{host}/big.bin"), BIG).await?);
    }
    let (ours, theirs) = (Sample(ours), Sample(theirs));
    print_row("port: 100 MB download", &ours, Some(&theirs));
    let (ours, theirs) = (throughput(&ours), throughput(&theirs));
    println!(
        "{:<34} {:>9.0} MB/s {:>11} | {:>9.0} MB/s {:>11} | {:>6.3}x",
        "port: 100 MB download throughput",
        ours,
        "",
        theirs,
        "",
        ours / theirs
    );
    Ok(())
}

/// Megabytes per second of the median download.
fn throughput(sample: &Sample) -> f64 {
    let mut times: Vec<f64> = sample.0.iter().map(Duration::as_secs_f64).collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    BIG as f64 / MIB as f64 / median
}

/// One GET, timed from the request to the last byte; the body must be `len` bytes.
async fn get(api: &Api, url: &str, len: usize) -> Result<Duration> {
    let started = Instant::now();
    let response = api.http.get(url).bearer_auth(TOKEN).send().await?;
    let status = response.status();
    let body = response.bytes().await?;
    if !status.is_success() || body.len() != len {
        bail!("GET {url}: {status}, {} bytes", body.len());
    }
    Ok(started.elapsed())
}

async fn wait_until_served(api: &Api, url: &str) -> Result<()> {
    for _ in 0..200 {
        if get(api, url, 6).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("{url} did not answer within 10 s")
}
