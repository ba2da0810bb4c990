//! The same session operations on another kind of sandbox, beside the Docker figures of the
//! same run: as pods (`--kubeconfig`) or under gVisor (`--gvisor`), each through a second
//! service whose config says so: create (cold, and from its warm pool),
//! exec `true` and close; on gVisor, the sandbox's own spawn under its exec
//! ([`exec_over_own_spawn`]), and pause to disk and resume ([`crate::pause_disk`]), whose
//! goals it returns.

use crate::raw::Raw;
use crate::raw_pods::RawPods;
use crate::report::{print_row, time, Figures, Goal, Sample};
use crate::sandboxd::{Api, Service};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The floor of a cold create.
enum ColdFloor {
    /// A container made and started through the Engine API on this engine runtime.
    Engine(&'static str),
    /// A pod made through the API server of the cluster this kubeconfig names, until it runs.
    Pod(PathBuf),
}

/// The namespace bench pods go to (the service makes it; the cluster gives it its service account).
const NAMESPACE: &str = "sandboxd";

/// Where the operations run.
pub(crate) struct Beside {
    title: &'static str,
    isolation: &'static str,
    extra: String,
    /// The Python image pause to disk is measured with (gVisor's only), held against runsc
    /// alone restoring the same sandbox.
    pause_to_disk: Option<String>,
    /// What the service's cold create is held against: the platform's own create of the same
    /// sandbox, with nothing of the service's in the way.
    cold_floor: ColdFloor,
    /// A runtime whose image has Python, to measure the sandbox's own spawn inside it: the
    /// floor of the exec figure ([`exec_over_own_spawn`]).
    spawn_floor_runtime: Option<&'static str>,
    /// A `bridge` runtime whose agents the service dials on the pod network, beside the
    /// port-forward of the others (Kubernetes).
    pod_network_runtime: Option<&'static str>,
}

/// The Kubernetes bench's `bridge` runtime, its agents dialed on the pod network.
const POD_NETWORK_RUNTIME: &str = "online";

impl Beside {
    /// The bench runs on a host routed to the pods' addresses (the test cluster's node), so
    /// the service is told to dial `bridge` agents on the pod network as in the cluster.
    pub(crate) fn kubernetes(kubeconfig: &Path, image: &str) -> Beside {
        Beside {
            title: "on Kubernetes: the same operations, sandboxes as pods",
            isolation: "runc",
            extra: format!(
                "\n[runtimes.{POD_NETWORK_RUNTIME}]\nimage = \"{image}\"\nnetwork_mode = \"bridge\"\n\
                 \n[backend]\nkind = \"kubernetes\"\nkubeconfig = \"{}\"\nnamespace = \"{NAMESPACE}\"\n\
                 agent_path = \"pod-network\"\n",
                kubeconfig.display()
            ),
            pause_to_disk: None,
            cold_floor: ColdFloor::Pod(kubeconfig.to_path_buf()),
            spawn_floor_runtime: None,
            pod_network_runtime: Some(POD_NETWORK_RUNTIME),
        }
    }

    pub(crate) fn gvisor(python_image: &str) -> Beside {
        Beside {
            title: "on gVisor: the same operations, every runtime with isolation = \"gvisor\"",
            isolation: "gvisor",
            extra: crate::pause_disk::runtime(python_image),
            pause_to_disk: Some(python_image.into()),
            cold_floor: ColdFloor::Engine("runsc"),
            spawn_floor_runtime: Some(crate::pause_disk::RUNTIME),
            pod_network_runtime: None,
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
) -> Result<Vec<Goal>> {
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
    match &beside.cold_floor {
        ColdFloor::Engine(runtime) => raw_create(n, raw, runtime, &cold, docker).await?,
        ColdFloor::Pod(kubeconfig) => raw_pod_create(n, kubeconfig, image, &cold).await?,
    }

    let warm = api.warm_opens(n, Duration::from_secs(10)).await?;
    print_row("session create, warm pool", &warm, Some(&docker.warm));

    let exec_true = execs_of_true(&api, &sessions[0], n * 5).await?;
    print_row("exec `true`", &exec_true, Some(&docker.exec_true));
    if let Some(runtime) = beside.pod_network_runtime {
        let id = api.open(runtime).await?;
        // The first exec warms the agent's caches, as above.
        api.exec(&id, "true").await?;
        let exec_true = execs_of_true(&api, &id, n * 5).await?;
        api.close(&id).await?;
        print_row(
            "exec `true`, agent on the pod network",
            &exec_true,
            Some(&docker.exec_true),
        );
        println!("  (the row above it: through the API server's port-forward)");
    }
    if let Some(runtime) = beside.spawn_floor_runtime {
        let (exec_true, floor) = exec_over_own_spawn(&api, runtime, n * 5).await?;
        print_row(
            &format!("exec `true`, {runtime}"),
            &exec_true,
            Some(&docker.exec_true),
        );
        print_row(
            &format!("own spawn `sh -c true`, {runtime}"),
            &floor,
            Some(&docker.floor_single),
        );
        println!(
            "  exec `true` through the service adds {:.2} ms over the sandbox's own spawn (p50, same session; the floor's ratio is against the host's)",
            (exec_true.p50().as_secs_f64() - floor.p50().as_secs_f64()) * 1000.0
        );
    }

    let mut samples = Vec::new();
    for id in &sessions {
        let started = Instant::now();
        api.close(id).await?;
        samples.push(started.elapsed());
    }
    print_row("session close", &Sample(samples), Some(&docker.close));
    let Some(python_image) = &beside.pause_to_disk else {
        return Ok(Vec::new());
    };
    let floor = crate::restore_floor::run(n, raw, python_image).await?;
    crate::pause_disk::run(n, &api, &floor).await
}

/// `count` execs of `true` in session `id`, one at a time, each timed.
async fn execs_of_true(api: &Api, id: &str, count: usize) -> Result<Sample> {
    let mut samples = Vec::new();
    for _ in 0..count {
        time(&mut samples, api.exec(id, "true")).await?;
    }
    Ok(Sample(samples))
}

/// Exec `true` through the service in a session of `runtime`, and what the sandbox's own
/// kernel takes to start `sh -c true` in the same session, the floor under the exec (as the
/// host floor is under runc's): a Python process spawns it with its output piped
/// (`subprocess`: vfork and exec, as the agent's posix_spawn), timing each itself, so no
/// service, agent or HTTP is in the way. Taken in turn, [`SPAWN_ROUND`] of each at a time, so a
/// drift of the sandbox's speed during the run weighs on both alike.
async fn exec_over_own_spawn(api: &Api, runtime: &str, count: usize) -> Result<(Sample, Sample)> {
    let id = api.open(runtime).await?;
    let measured = async {
        let (mut exec_true, mut spawns) = (Vec::new(), Vec::new());
        // The first exec of a session warms its agent's caches: left out.
        api.exec(&id, "true").await?;
        while exec_true.len() < count {
            let round = SPAWN_ROUND.min(count - exec_true.len());
            for _ in 0..round {
                time(&mut exec_true, api.exec(&id, "true")).await?;
            }
            spawns.extend(own_spawns(api, &id, round).await?);
        }
        Ok::<_, anyhow::Error>((exec_true, spawns))
    }
    .await;
    api.close(&id).await?;
    let (exec_true, spawns) = measured?;
    Ok((Sample(exec_true), Sample(spawns)))
}

/// Exec and own spawns taken at a time by [`exec_over_own_spawn`].
const SPAWN_ROUND: usize = 10;

/// `count` spawns of `sh -c true` by one Python process in session `id`, each timed by it.
async fn own_spawns(api: &Api, id: &str, count: usize) -> Result<Vec<Duration>> {
    let script = format!(
        "python3 -c 'import subprocess, time\nfor _ in range({}):\n    started = time.perf_counter_ns()\n    subprocess.run([\"sh\", \"-c\", \"true\"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)\n    print((time.perf_counter_ns() - started) // 1000)'",
        count + 1
    );
    let ran = api.exec(id, &script).await?;
    let stdout = ran["stdout"].as_str().unwrap_or_default();
    // The first spawn of each warms the interpreter's and the kernel's caches: left out.
    let spawns = stdout
        .lines()
        .skip(1)
        .map(|us| us.parse().map(Duration::from_micros))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("the spawn timings were not numbers: {stdout:?}"))?;
    if spawns.len() != count {
        bail!(
            "{} spawn timings came back of {count}: {stdout:?}",
            spawns.len()
        );
    }
    Ok(spawns)
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

/// The API server's create of a pod of the same image until its container runs, with and
/// without an init step before it, and the service's cold create (its pod with the agent
/// delivered by an init container and answering) against both.
async fn raw_pod_create(n: usize, kubeconfig: &Path, image: &str, cold: &Sample) -> Result<()> {
    let pods = RawPods::connect(kubeconfig, NAMESPACE, image).await?;
    let (mut plain, mut with_init) = (Vec::new(), Vec::new());
    let measured = async {
        for index in 0..n {
            time(&mut plain, pods.create_running(index, false)).await?;
            time(&mut with_init, pods.create_running(index, true)).await?;
        }
        Ok::<(), anyhow::Error>(())
    }
    .await;
    pods.clean_up().await;
    measured?;
    let (plain, with_init) = (Sample(plain), Sample(with_init));
    print_row("raw API pod create until it runs", &plain, None);
    print_row("  the same with an init step first", &with_init, None);
    println!(
        "  the service's cold create here against the raw API's pod: {:.2}x (p50; goal at most 1.1x); against the pod with an init step: {:.2}x",
        cold.p50().as_secs_f64() / plain.p50().as_secs_f64(),
        cold.p50().as_secs_f64() / with_init.p50().as_secs_f64()
    );
    Ok(())
}
