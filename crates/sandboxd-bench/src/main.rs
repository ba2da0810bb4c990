//! `sandboxd-bench`: measures sandboxd against the raw Docker Engine API in one run, on the same
//! engine and image, and prints p50/p99 for each operation with the ratio.
//!
//! It starts its own `sandboxd serve` (release build by default) with a bench config, and
//! removes every container it made when it ends, also on failure. With `--kubeconfig` it also
//! runs create, exec and close with the sandboxes as pods on that cluster; with `--gvisor`,
//! the same with every runtime on gVisor (an engine with `runsc`).

mod beside;
mod code;
mod computer;
mod e2b;
mod egress;
mod floor;
mod footprint;
mod measure;
mod pause_disk;
mod paused;
mod ports;
mod raw;
mod raw_pods;
mod report;
mod restore_floor;
mod sandboxd;
mod scale;
mod snapshots;
mod volumes;

use anyhow::Result;
use bollard::Docker;
use clap::Parser;
use raw::Raw;
use sandboxd::{Api, Service};
use std::path::PathBuf;

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
    /// A Python with the `e2b` package (tests/e2b/requirements.txt): adds the E2B SDK row.
    #[arg(long)]
    e2b_python: Option<PathBuf>,
    /// The image of that row's runtime: one with bash, which the E2B SDK runs commands with.
    #[arg(long, default_value = "sandboxd/python:3.11-bookworm")]
    e2b_image: String,
    /// Also measure create, exec and close with the sandboxes as pods on this cluster.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Also measure create (cold and warm pool), exec and close with every runtime on gVisor
    /// (the engine's `runsc`, registered by `SANDBOXD_GVISOR=1 scripts/host-setup.sh`), and
    /// pause to disk and resume of a Python session holding 64 MiB (in `--e2b-image`).
    #[arg(long)]
    gvisor: bool,
    /// Adds the code-context row (builds the python-interpreter recipe on first use).
    #[arg(long)]
    code_contexts: bool,
    /// Adds the computer-use rows (builds the desktop recipe on first use).
    #[arg(long)]
    computer: bool,
    /// Also the scale run: this many sessions open at once (see `scale`).
    #[arg(long)]
    scale: Option<usize>,
    /// The concurrent clients opening the scale run's sessions.
    #[arg(long, default_value_t = 20)]
    scale_clients: usize,
    /// Only the scale run.
    #[arg(long, requires = "scale")]
    scale_only: bool,
    /// The scale run's sessions, and the raw containers they are held against, on gVisor.
    #[arg(long, requires = "scale")]
    scale_gvisor: bool,
    /// Only the density run of sessions paused to disk: this many gVisor sessions opened and
    /// paused (see `paused`); the engine's runsc must be host-setup's, as for `--gvisor`.
    #[arg(long)]
    paused: Option<usize>,
    /// Only the egress proxy's row (no service, no engine).
    #[arg(long)]
    egress_only: bool,
    /// Internal: one chain of the host floor's spawns, in this cgroup (see `floor`).
    #[arg(long, hide = true)]
    spawn_chain_in: Option<PathBuf>,
    /// Internal: the spawns of that chain.
    #[arg(long, hide = true, default_value_t = 0)]
    spawn_chain_commands: usize,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    if let Some(cgroup) = &args.spawn_chain_in {
        return floor::run_chain(cgroup, args.spawn_chain_commands);
    }
    if args.egress_only {
        return egress::run(args.iterations).await;
    }
    let docker = Docker::connect_with_socket_defaults()?
        .negotiate_version()
        .await?;
    let raw = Raw {
        docker,
        image: args.image.clone(),
        runtime: None,
    };
    if let Some(count) = args.paused {
        let goals =
            paused::run(count, args.scale_clients, &args.sandboxd, &args.agent, &raw).await?;
        report::print_goals("paused goals (each figure against its budget)", &goals);
        return Ok(());
    }
    if args.scale_only {
        let goals = run_scale(&args, &raw).await?;
        report::print_goals(
            "scale goals (each figure against its floor in this run)",
            &goals,
        );
        return Ok(());
    }
    let e2b_image = args.e2b_python.as_ref().map(|_| args.e2b_image.as_str());
    let mut extra = ports::runtime_config(&args.image);
    if args.code_contexts {
        extra.push_str(&code::runtime_config());
    }
    if args.computer {
        extra.push_str(&computer::runtime_config());
    }
    if args.code_contexts || args.computer {
        // Recipe builds trust the host's CA bundle (a TLS-intercepting proxy's CA among them).
        extra.push_str(
            "\n[build]\nextra_ca_certificates = [\"/etc/ssl/certs/ca-certificates.crt\"]\n",
        );
    }
    let service = Service::start(
        &args.sandboxd,
        &args.agent,
        &args.image,
        "runc",
        e2b_image,
        &extra,
    )?;
    let api = Api {
        http: reqwest::Client::new(),
        url: service.url.clone(),
    };
    let mut result = measure::run(args.iterations, &args.image, &api, &raw, &service).await;
    if result.is_ok() {
        if let Err(e) = ports::run(args.iterations, &api).await {
            result = Err(e);
        }
    }
    if let (Ok(_), Some(python)) = (&result, &args.e2b_python) {
        if let Err(e) = e2b::run(python, args.iterations, &api).await {
            result = Err(e);
        }
    }
    if let (Ok(_), true) = (&result, args.code_contexts) {
        if let Err(e) = code::run(args.iterations, &api).await {
            result = Err(e);
        }
    }
    if let (Ok(_), true) = (&result, args.computer) {
        if let Err(e) = computer::run(args.iterations, &api).await {
            result = Err(e);
        }
    }
    let mut volume_goals = Vec::new();
    if result.is_ok() {
        match volumes::run(args.iterations, &api, service.state_dir()).await {
            Ok(goals) => volume_goals = goals,
            Err(e) => result = Err(e),
        }
    }
    // Stopped first, so its warm pool cannot start sandboxes again behind the clean-up.
    let instance = service.instance.clone();
    drop(service);
    raw.clean_up(&instance).await;
    let figures = result?;
    let elsewhere = [
        args.kubeconfig
            .as_deref()
            .map(|kubeconfig| beside::Beside::kubernetes(kubeconfig, &args.image)),
        args.gvisor.then(|| beside::Beside::gvisor(&args.e2b_image)),
    ];
    let mut beside_goals = Vec::new();
    for beside in elsewhere.iter().flatten() {
        let goals = beside::run(
            args.iterations,
            &args.sandboxd,
            &args.agent,
            &args.image,
            beside,
            &figures,
            &raw,
        )
        .await?;
        beside_goals.extend(goals);
    }
    egress::run(args.iterations).await?;
    let mut goals = figures.targets();
    goals.extend(figures.exec_goals());
    goals.extend(volume_goals);
    goals.extend(beside_goals);
    if args.scale.is_some() {
        goals.extend(run_scale(&args, &raw).await?);
    }
    report::print_goals(
        "targets and goals (each figure against its floor in this run)",
        &goals,
    );
    Ok(())
}

/// The scale run's goals.
async fn run_scale(args: &Args, raw: &Raw) -> Result<Vec<report::Goal>> {
    let count = args.scale.unwrap_or_default();
    let gvisor_raw;
    let (raw, isolation) = if args.scale_gvisor {
        gvisor_raw = raw.on_runtime("runsc");
        (&gvisor_raw, scale::Isolation::Gvisor)
    } else {
        (raw, scale::Isolation::Runc)
    };
    let figures = scale::run(
        count,
        args.scale_clients,
        &args.sandboxd,
        &args.agent,
        raw,
        isolation,
    )
    .await?;
    Ok(figures.goals())
}
