//! `sandboxd-bench`: measures sandboxd against the raw Docker Engine API in one run, on the same
//! engine and image, and prints p50/p99 for each operation with the ratio.
//!
//! It starts its own `sandboxd serve` (release build by default) with a bench config, and
//! removes every container it made when it ends, also on failure.

use anyhow::{bail, Context, Result};
use bollard::models::{ContainerCreateBody, ExecConfig, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    ListContainersOptionsBuilder, RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use bollard::Docker;
use clap::Parser;
use futures_util::{StreamExt, TryStreamExt};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "bench-token-0123456789abcdef";
const LABEL: &str = "org.sandboxd.bench";
const MIB: usize = 1 << 20;
/// The concurrent figure: this many sessions, each running this many commands in a row.
const SESSIONS: usize = 20;
const COMMANDS: usize = 50;

#[derive(Parser)]
#[command(about = "Benchmark sandboxd against the raw Docker Engine API")]
struct Args {
    /// The sandboxd binary.
    #[arg(long, default_value = "target/release/sandboxd")]
    sandboxd: PathBuf,
    /// The static in-sandbox agent.
    #[arg(
        long,
        env = "SANDBOXD_AGENT",
        default_value = "target/x86_64-unknown-linux-gnu/release/sandboxd-agent"
    )]
    agent: PathBuf,
    /// The image both sides run.
    #[arg(long, default_value = "sandboxd/busybox:local")]
    image: String,
    /// Repetitions of the single-operation measurements.
    #[arg(long, default_value_t = 30)]
    iterations: usize,
}

/// Latencies of one operation.
struct Sample(Vec<Duration>);

impl Sample {
    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort();
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted.get(index).copied().unwrap_or_default()
    }

    fn p50(&self) -> Duration {
        self.percentile(0.5)
    }

    fn p99(&self) -> Duration {
        self.percentile(0.99)
    }
}

/// The figures the issue's targets are stated in.
struct Figures {
    cold: Sample,
    raw_create: Sample,
    warm: Sample,
    exec_true: Sample,
    raw_exec_true: Sample,
    close: Sample,
    concurrent: Sample,
    /// `concurrent` without the service: see [`host_spawn_floor`].
    floor_concurrent: Sample,
    rss_bytes: u64,
}

impl Figures {
    /// Prints each target with the figures it is checked against, and whether it was met.
    fn print_targets(&self) {
        let single = self.exec_true.p50();
        let targets = [
            (
                "exec `true` p50 at most 1/10 of the raw API's",
                self.exec_true.p50() * 10 <= self.raw_exec_true.p50(),
                format!(
                    "{} vs {} / 10",
                    ms(self.exec_true.p50()),
                    ms(self.raw_exec_true.p50())
                ),
            ),
            (
                "create from a warm pool p50 under 10 ms",
                self.warm.p50() < Duration::from_millis(10),
                ms(self.warm.p50()),
            ),
            (
                "cold create p50 at most 1.1x raw create+start",
                self.cold.p50().as_secs_f64() <= 1.1 * self.raw_create.p50().as_secs_f64(),
                format!("{} vs {}", ms(self.cold.p50()), ms(self.raw_create.p50())),
            ),
            (
                "close p50 under 100 ms",
                self.close.p50() < Duration::from_millis(100),
                ms(self.close.p50()),
            ),
            (
                "20 x 50 concurrent p99 under 5x the single exec p50",
                self.concurrent.p99() < single * 5,
                format!(
                    "{} vs 5 x {}; without the service (host floor) the p99 is {}",
                    ms(self.concurrent.p99()),
                    ms(single),
                    ms(self.floor_concurrent.p99())
                ),
            ),
            (
                "service RSS with 20 open sessions under 64 MB",
                self.rss_bytes < 64 * MIB as u64,
                format!("{:.1} MB", self.rss_bytes as f64 / MIB as f64),
            ),
        ];
        println!("\ntargets");
        for (target, met, figures) in targets {
            let verdict = if met { "met" } else { "MISSED" };
            println!("  {verdict:<7} {target}: {figures}");
        }
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn print_row(name: &str, ours: &Sample, raw: Option<&Sample>) {
    let (ours50, ours99) = (ours.percentile(0.5), ours.percentile(0.99));
    match raw {
        Some(raw) => {
            let (raw50, raw99) = (raw.percentile(0.5), raw.percentile(0.99));
            println!(
                "{name:<34} {:>11} {:>11} | {:>11} {:>11} | {:>6.3}x",
                ms(ours50),
                ms(ours99),
                ms(raw50),
                ms(raw99),
                ours50.as_secs_f64() / raw50.as_secs_f64()
            );
        }
        None => println!(
            "{name:<34} {:>11} {:>11} | {:>11} {:>11} |",
            ms(ours50),
            ms(ours99),
            "-",
            "-"
        ),
    }
}

/// A running `sandboxd serve` with its own state directory.
struct Service {
    child: Child,
    url: String,
    instance: String,
    _state: tempfile::TempDir,
}

impl Service {
    fn start(args: &Args) -> Result<Service> {
        let state = tempfile::Builder::new()
            .prefix("sbdbench")
            .tempdir_in("/tmp")?;
        let instance = format!("bench-{}", std::process::id());
        std::fs::write(state.path().join("instance-id"), &instance)?;
        let config = format!(
            r#"
token = "{TOKEN}"
default_runtime = "cold"
max_sessions = 60
mem_limit = "256m"
pids_limit = 128
tmpfs_size = "64m"

[runtimes.cold]
image = "{image}"

[runtimes.warm]
image = "{image}"
pool_size = 5

[policy]
max_output_bytes = "2m"
max_upload_bytes = "16m"
"#,
            image = args.image
        );
        std::fs::write(state.path().join("config.toml"), config)?;
        let mut child = Command::new(&args.sandboxd)
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(state.path().join("config.toml"))
            .arg("--state-dir")
            .arg(state.path())
            .arg("--agent")
            .arg(&args.agent)
            .env("SANDBOXD_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {}", args.sandboxd.display()))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let url = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|line| {
                line.strip_prefix("sandboxd listening on ")
                    .map(str::to_string)
            });
        let Some(url) = url else {
            let _ = child.kill();
            bail!("sandboxd exited before listening; run it by hand to see why");
        };
        Ok(Service {
            child,
            url,
            instance,
            _state: state,
        })
    }

    fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The sandboxd HTTP API, over one keep-alive connection pool.
struct Api {
    http: reqwest::Client,
    url: String,
}

impl Api {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(TOKEN);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await?;
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("{path}: {status} {value}");
        }
        Ok(value)
    }

    async fn open(&self, runtime: &str) -> Result<String> {
        let session = self
            .call(
                reqwest::Method::POST,
                "/v1/sessions",
                Some(json!({"runtime": runtime})),
            )
            .await?;
        Ok(session["id"].as_str().context("no id")?.to_string())
    }

    async fn exec(&self, id: &str, command: &str) -> Result<Value> {
        let result = self
            .call(
                reqwest::Method::POST,
                &format!("/v1/sessions/{id}/exec"),
                Some(json!({"command": command})),
            )
            .await?;
        if result["exit_code"] != 0 {
            bail!("command {command:?} failed: {result}");
        }
        Ok(result)
    }

    async fn close(&self, id: &str) -> Result<()> {
        self.call(reqwest::Method::DELETE, &format!("/v1/sessions/{id}"), None)
            .await
            .map(drop)
    }

    async fn pooled(&self) -> Result<u64> {
        Ok(
            self.call(reqwest::Method::GET, "/v1/stats", None).await?["pooled"]
                .as_u64()
                .unwrap_or(0),
        )
    }
}

/// The same operations done directly through the Engine API.
struct Raw {
    docker: Docker,
    image: String,
}

impl Raw {
    async fn create_start(&self) -> Result<String> {
        let body = ContainerCreateBody {
            image: Some(self.image.clone()),
            cmd: Some(vec!["sleep".into(), "86400".into()]),
            user: Some("61000:61000".into()),
            labels: Some(HashMap::from([(LABEL.to_string(), "true".to_string())])),
            host_config: Some(HostConfig {
                cap_drop: Some(vec!["ALL".into()]),
                security_opt: Some(vec!["no-new-privileges".into()]),
                // The archive API refuses read-only roots and cannot write into tmpfs mounts.
                readonly_rootfs: Some(false),
                tmpfs: Some(HashMap::from([(
                    "/tmp".into(),
                    "rw,exec,size=64m,mode=1777".into(),
                )])),
                pids_limit: Some(128),
                memory: Some(256 << 20),
                memory_swap: Some(256 << 20),
                init: Some(true),
                network_mode: Some("none".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let name = format!("sandboxd-bench-raw-{}", rand_suffix());
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let created = self.docker.create_container(Some(options), body).await?;
        self.docker.start_container(&created.id, None).await?;
        Ok(created.id)
    }

    /// Create, start attached and read all output, then inspect for the exit code: what a
    /// Docker-exec-based service pays per command.
    async fn exec(&self, container: &str, command: &str) -> Result<usize> {
        let exec = self
            .docker
            .create_exec(
                container,
                ExecConfig {
                    cmd: Some(vec!["sh".into(), "-c".into(), command.into()]),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await?;
        let mut bytes = 0;
        if let bollard::exec::StartExecResults::Attached { mut output, .. } =
            self.docker.start_exec(&exec.id, None).await?
        {
            while let Some(chunk) = output.next().await {
                bytes += chunk?.into_bytes().len();
            }
        }
        let inspect = self.docker.inspect_exec(&exec.id).await?;
        if inspect.exit_code != Some(0) {
            bail!("raw exec {command:?} failed: {:?}", inspect.exit_code);
        }
        Ok(bytes)
    }

    async fn put_file(&self, container: &str, data: &[u8]) -> Result<()> {
        let mut archive = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        archive.append_data(&mut header, "bench.bin", data)?;
        let options = UploadToContainerOptionsBuilder::default().path("/").build();
        self.docker
            .upload_to_container(
                container,
                Some(options),
                bollard::body_full(archive.into_inner()?.into()),
            )
            .await?;
        Ok(())
    }

    async fn get_file(&self, container: &str) -> Result<usize> {
        let options = DownloadFromContainerOptionsBuilder::default()
            .path("/bench.bin")
            .build();
        let chunks: Vec<bytes::Bytes> = self
            .docker
            .download_from_container(container, Some(options))
            .try_collect()
            .await?;
        Ok(chunks.iter().map(bytes::Bytes::len).sum())
    }

    async fn remove(&self, container: &str) -> Result<()> {
        let options = RemoveContainerOptionsBuilder::default().force(true).build();
        self.docker
            .remove_container(container, Some(options))
            .await?;
        Ok(())
    }

    /// Removes whatever this run made on the engine: raw containers and the service's sandboxes.
    async fn clean_up(&self, instance: &str) {
        for label in [
            format!("{LABEL}=true"),
            format!("org.sandboxd.instance={instance}"),
        ] {
            let filters = HashMap::from([("label".to_string(), vec![label])]);
            let options = ListContainersOptionsBuilder::default()
                .all(true)
                .filters(&filters)
                .build();
            for container in self
                .docker
                .list_containers(Some(options))
                .await
                .unwrap_or_default()
            {
                if let Some(id) = container.id {
                    let _ = self.remove(&id).await;
                }
            }
        }
    }
}

fn rand_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}-{}",
        std::process::id(),
        nanos.as_nanos() % 1_000_000_000
    )
}

async fn time<T>(
    samples: &mut Vec<Duration>,
    op: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let started = Instant::now();
    let value = op.await?;
    samples.push(started.elapsed());
    Ok(value)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let docker = Docker::connect_with_socket_defaults()?
        .negotiate_version()
        .await?;
    let raw = Raw {
        docker,
        image: args.image.clone(),
    };
    let service = Service::start(&args)?;
    let api = Api {
        http: reqwest::Client::new(),
        url: service.url.clone(),
    };
    let result = run(&args, &api, &raw, &service).await;
    raw.clean_up(&service.instance).await;
    result?.print_targets();
    Ok(())
}

async fn run(args: &Args, api: &Api, raw: &Raw, service: &Service) -> Result<Figures> {
    let n = args.iterations;
    println!(
        "sandboxd-bench: image {}, {} iterations per operation",
        args.image, n
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

    let mut warm = Vec::new();
    for _ in 0..n {
        for _ in 0..200 {
            if api.pooled().await? >= 5 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let id = time(&mut warm, api.open("warm")).await?;
        api.close(&id).await?;
    }
    let warm = Sample(warm);
    print_row("session create, warm pool", &warm, Some(&raw_create));

    let (session, container) = (&cold_sessions[0], &raw_containers[0]);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..(n * 5) {
        time(&mut ours, api.exec(session, "true")).await?;
        time(&mut theirs, raw.exec(container, "true")).await?;
    }
    let (exec_true, raw_exec_true) = (Sample(ours), Sample(theirs));
    print_row("exec `true`", &exec_true, Some(&raw_exec_true));

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

    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for (id, container) in cold_sessions.iter().zip(&raw_containers) {
        time(&mut ours, api.close(id)).await?;
        time(&mut theirs, raw.remove(container)).await?;
    }
    let close = Sample(ours);
    print_row("session close", &close, Some(&Sample(theirs)));

    let (concurrent, rss_bytes) = run_concurrent(api, raw, service).await?;
    let (floor_single, floor_concurrent) = host_spawn_floor(n * 5)?;
    println!("\nhost floor: the same `sh -c true` spawned straight on this host (no service, no container)");
    print_row("spawn `true`", &floor_single, None);
    print_row("20 x 50 concurrent spawns", &floor_concurrent, None);
    Ok(Figures {
        cold,
        raw_create,
        warm,
        exec_true,
        raw_exec_true,
        close,
        concurrent,
        floor_concurrent,
        rss_bytes,
    })
}

async fn run_files(n: usize, api: &Api, raw: &Raw, session: &str, container: &str) -> Result<()> {
    let data: Vec<u8> = (0..MIB).map(|i| (i * 31 % 251) as u8).collect();
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
/// Returns our latencies and the service's RSS with the sessions open.
async fn run_concurrent(api: &Api, raw: &Raw, service: &Service) -> Result<(Sample, u64)> {
    let mut ids = Vec::new();
    for _ in 0..SESSIONS {
        ids.push(api.open("cold").await?);
    }
    let rss = service.rss_bytes();
    let started = Instant::now();
    let per_session = futures_util::future::try_join_all(ids.iter().map(|id| async move {
        let mut samples = Vec::new();
        for _ in 0..COMMANDS {
            time(&mut samples, api.exec(id, "true")).await?;
        }
        Ok::<_, anyhow::Error>(samples)
    }))
    .await?;
    let ours_elapsed = started.elapsed();
    let ours = Sample(per_session.into_iter().flatten().collect());

    let mut containers = Vec::new();
    for _ in 0..SESSIONS {
        containers.push(raw.create_start().await?);
    }
    let started = Instant::now();
    let per_container = futures_util::future::try_join_all(containers.iter().map(|c| async move {
        let mut samples = Vec::new();
        for _ in 0..COMMANDS {
            time(&mut samples, raw.exec(c, "true")).await?;
        }
        Ok::<_, anyhow::Error>(samples)
    }))
    .await?;
    let raw_elapsed = started.elapsed();
    let theirs = Sample(per_container.into_iter().flatten().collect());
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

/// The physical floor under the exec figures: `sh -c true` spawned straight on this host
/// (with the host's busybox, the binary the bench image is built from, when there is one),
/// `n` times in a row and then 20 threads x 50 at once, output piped as the agent does. No
/// service, HTTP or container is in the way, so no service can do better on this machine.
fn host_spawn_floor(n: usize) -> Result<(Sample, Sample)> {
    fn spawn_true() -> Result<Duration> {
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
    let single = (0..n).map(|_| spawn_true()).collect::<Result<Vec<_>>>()?;
    let concurrent = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..SESSIONS)
            .map(|_| {
                scope.spawn(|| {
                    (0..COMMANDS)
                        .map(|_| spawn_true())
                        .collect::<Result<Vec<_>>>()
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|thread| thread.join().expect("spawning thread panicked"))
            .collect::<Result<Vec<_>>>()
    })?;
    Ok((
        Sample(single),
        Sample(concurrent.into_iter().flatten().collect()),
    ))
}
