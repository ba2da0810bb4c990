//! `sandboxd-bench`: measures sandboxd against the raw Docker Engine API in one run, on the same
//! engine and image, and prints p50/p99 for each operation with the ratio.
//!
//! It starts its own `sandboxd serve` (release build by default) with a bench config, and
//! removes every container it made when it ends, also on failure.

mod measure;
mod raw;
mod report;
mod sandboxd;
mod snapshots;

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
    let service = Service::start(&args.sandboxd, &args.agent, &args.image)?;
    let api = Api {
        http: reqwest::Client::new(),
        url: service.url.clone(),
    };
    let result = measure::run(args.iterations, &args.image, &api, &raw, &service).await;
    raw.clean_up(&service.instance).await;
    result?.print_targets();
    Ok(())
}
