//! The same session operations on another kind of sandbox, beside the Docker figures of the
//! same run: as pods (`--kubeconfig`) or under gVisor (`--gvisor`), each through a second
//! service whose config says so: create (cold, and from a warm pool where there is one),
//! exec `true` and close; on gVisor, pause to disk and resume too ([`crate::pause_disk`]).

use crate::raw::Raw;
use crate::report::{print_row, time, Figures, Sample};
use crate::sandboxd::{Api, Service};
use anyhow::Result;
use std::path::Path;
use std::time::{Duration, Instant};

/// The namespace bench pods go to (the service makes it; the cluster gives it its service account).
const NAMESPACE: &str = "sandboxd";

/// Where the operations run.
pub(crate) struct Beside {
    title: &'static str,
    isolation: &'static str,
    extra: String,
    /// Whether the service's warm pool is measured (pods cannot be pooled ahead here: the
    /// Kubernetes rows never had one).
    warm: bool,
    /// Whether pause to disk is measured (gVisor's only).
    pause_to_disk: bool,
    /// The engine runtime whose raw create and start is measured beside the service's cold
    /// create: gVisor's own start, the floor of ours.
    raw_runtime: Option<&'static str>,
}

impl Beside {
    pub(crate) fn kubernetes(kubeconfig: &Path) -> Beside {
        Beside {
            title: "on Kubernetes: the same operations, sandboxes as pods",
            isolation: "runc",
            extra: format!(
                "\n[backend]\nkind = \"kubernetes\"\nkubeconfig = \"{}\"\nnamespace = \"{NAMESPACE}\"\n",
                kubeconfig.display()
            ),
            warm: false,
            pause_to_disk: false,
            raw_runtime: None,
        }
    }

    pub(crate) fn gvisor(python_image: &str) -> Beside {
        Beside {
            title: "on gVisor: the same operations, every runtime with isolation = \"gvisor\"",
            isolation: "gvisor",
            extra: crate::pause_disk::runtime(python_image),
            warm: true,
            pause_to_disk: true,
            raw_runtime: Some("runsc"),
        }
    }
}

pub(crate) async fn run(
    n: usize,
    sandboxd: &Path,
    agent: &Path,
    image: &str,
    beside: &Beside,
    docker: &Figures,
    raw: &Raw,
) -> Result<()> {
    let service = Service::start(
        sandboxd,
        agent,
        image,
        beside.isolation,
        None,
        &beside.extra,
    )?;
    let api = Api {
        http: reqwest::Client::new(),
        url: service.url.clone(),
    };
    println!(
        "\n{} (ratio: against Docker's runc figure above)",
        beside.title
    );
    let first = api.open("cold").await?;
    api.exec(&first, "true").await?;
    api.close(&first).await?;

    let mut samples = Vec::new();
    let mut sessions = Vec::new();
    for _ in 0..n {
        let started = Instant::now();
        sessions.push(api.open("cold").await?);
        samples.push(started.elapsed());
    }
    let cold = Sample(samples);
    print_row("session create, cold", &cold, Some(&docker.cold));
    if let Some(runtime) = beside.raw_runtime {
        raw_create(n, raw, runtime, &cold, docker).await?;
    }

    if beside.warm {
        let mut warm = Vec::new();
        for _ in 0..n {
            for _ in 0..500 {
                if api.pooled().await? >= 5 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let id = time(&mut warm, api.open("warm")).await?;
            api.close(&id).await?;
        }
        print_row(
            "session create, warm pool",
            &Sample(warm),
            Some(&docker.warm),
        );
    }

    let mut samples = Vec::new();
    for _ in 0..(n * 5) {
        let started = Instant::now();
        api.exec(&sessions[0], "true").await?;
        samples.push(started.elapsed());
    }
    print_row("exec `true`", &Sample(samples), Some(&docker.exec_true));

    let mut samples = Vec::new();
    for id in &sessions {
        let started = Instant::now();
        api.close(id).await?;
        samples.push(started.elapsed());
    }
    print_row("session close", &Sample(samples), Some(&docker.close));
    if beside.pause_to_disk {
        crate::pause_disk::run(n, &api).await?;
    }
    Ok(())
}

/// The raw API's create and start of a container on the engine runtime `runtime`, against the
/// raw runc figure of the same run; and the service's cold create against it.
async fn raw_create(
    n: usize,
    raw: &Raw,
    runtime: &str,
    cold: &Sample,
    docker: &Figures,
) -> Result<()> {
    let raw = raw.on_runtime(runtime);
    let (mut samples, mut made) = (Vec::new(), Vec::new());
    let measured = async {
        for _ in 0..n {
            made.push(time(&mut samples, raw.create_start()).await?);
        }
        Ok::<(), anyhow::Error>(())
    }
    .await;
    for container in &made {
        raw.remove(container).await?;
    }
    measured?;
    let samples = Sample(samples);
    print_row(
        &format!("raw API create+start, {runtime}"),
        &samples,
        Some(&docker.raw_create),
    );
    println!(
        "  the service's cold create here against the raw API's on {runtime}: {:.2}x (p50)",
        cold.p50().as_secs_f64() / samples.p50().as_secs_f64()
    );
    Ok(())
}
