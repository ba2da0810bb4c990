//! The same session operations with the sandboxes as pods (`--kubeconfig`), beside the Docker
//! figures of the same run: create, exec `true` and close, each through a second service whose
//! config names the cluster.

use crate::report::{print_row, Figures, Sample};
use crate::sandboxd::{Api, Service};
use anyhow::Result;
use std::path::Path;
use std::time::Instant;

/// The namespace bench pods go to (scripts/k8s-up.sh prepares it).
const NAMESPACE: &str = "sandboxd";

pub(crate) async fn run(
    n: usize,
    sandboxd: &Path,
    agent: &Path,
    image: &str,
    kubeconfig: &Path,
    docker: &Figures,
) -> Result<()> {
    let backend = format!(
        "\n[backend]\nkind = \"kubernetes\"\nkubeconfig = \"{}\"\nnamespace = \"{NAMESPACE}\"\n",
        kubeconfig.display()
    );
    let service = Service::start(sandboxd, agent, image, None, &backend)?;
    let api = Api {
        http: reqwest::Client::new(),
        url: service.url.clone(),
    };
    println!("\non Kubernetes: the same operations, sandboxes as pods (ratio: against Docker's sandboxd figure above)");
    let warm = api.open("cold").await?;
    api.exec(&warm, "true").await?;
    api.close(&warm).await?;

    let mut samples = Vec::new();
    let mut sessions = Vec::new();
    for _ in 0..n {
        let started = Instant::now();
        sessions.push(api.open("cold").await?);
        samples.push(started.elapsed());
    }
    print_row("session create, cold", &Sample(samples), Some(&docker.cold));

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
    Ok(())
}
