//! The same session operations on another kind of sandbox, beside the Docker figures of the
//! same run: as pods (`--kubeconfig`) or under gVisor (`--gvisor`), each through a second
//! service whose config says so: create (cold, and from a warm pool where there is one),
//! exec `true` and close; on gVisor, pause to disk and resume too ([`crate::pause_disk`]).

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
        }
    }

    pub(crate) fn gvisor(python_image: &str) -> Beside {
        Beside {
            title: "on gVisor: the same operations, every runtime with isolation = \"gvisor\"",
            isolation: "gvisor",
            extra: crate::pause_disk::runtime(python_image),
            warm: true,
            pause_to_disk: true,
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
    print_row("session create, cold", &Sample(samples), Some(&docker.cold));

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
