//! The sandboxd side: a `sandboxd serve` started for the run, and a client of its HTTP API.

use crate::raw::Raw;
use crate::report::{time, Sample};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The runtime of the E2B row: one with bash, which the E2B SDK runs commands with.
pub(crate) const E2B_RUNTIME: &str = "bash";

pub(crate) const TOKEN: &str = "bench-token-0123456789abcdef";

/// A running `sandboxd serve` with its own state directory.
pub(crate) struct Service {
    child: Child,
    pub(crate) url: String,
    pub(crate) instance: String,
    sandboxd: PathBuf,
    agent: PathBuf,
    state_dir: tempfile::TempDir,
}

impl Service {
    /// Every runtime with `isolation` (`runc` or `gvisor`); with `e2b_image`, also the runtime
    /// of the E2B row (`e2b::RUNTIME`); `extra` is appended to the config (the Kubernetes
    /// rows' `[backend]`).
    pub(crate) fn start(
        sandboxd: &Path,
        agent: &Path,
        image: &str,
        isolation: &str,
        e2b_image: Option<&str>,
        extra: &str,
    ) -> Result<Service> {
        let config = format!(
            r#"
token = "{TOKEN}"
default_runtime = "cold"
max_sessions = 60
mem_limit = "256m"
pids_limit = 128
tmpfs_size = "64m"
isolation = "{isolation}"

[runtimes.cold]
image = "{image}"

[runtimes.warm]
image = "{image}"
pool_size = 5

[policy]
max_output_bytes = "2m"
max_upload_bytes = "16m"
# The ports rows measure the proxy, not the default cap of 256 MB/s.
port_bytes_per_sec = "16g"
"#
        );
        let config = match e2b_image {
            Some(e2b_image) => format!(
                "{config}\n[runtimes.{}]\nimage = \"{e2b_image}\"\n",
                E2B_RUNTIME
            ),
            None => config,
        };
        let config = format!("{config}{extra}");
        Service::start_with_config(sandboxd, agent, &config, "")
    }

    /// A service with this config text and a state directory of its own; its sandboxes are
    /// labelled with the instance `bench-PID` followed by `instance_suffix`.
    pub(crate) fn start_with_config(
        sandboxd: &Path,
        agent: &Path,
        config: &str,
        instance_suffix: &str,
    ) -> Result<Service> {
        let state = tempfile::Builder::new()
            .prefix("sbdbench")
            .tempdir_in("/tmp")?;
        let instance = format!("bench-{}{instance_suffix}", std::process::id());
        std::fs::write(state.path().join("instance-id"), &instance)?;
        std::fs::write(state.path().join("config.toml"), config)?;
        let (child, url) = spawn(sandboxd, agent, state.path())?;
        Ok(Service {
            child,
            url,
            instance,
            sandboxd: sandboxd.to_path_buf(),
            agent: agent.to_path_buf(),
            state_dir: state,
        })
    }

    /// Runs `measure` with a service of this config, then stops it and removes by label what
    /// it and the raw side made, also when the measurement failed.
    pub(crate) async fn measured_with<T>(
        sandboxd: &Path,
        agent: &Path,
        config: &str,
        instance_suffix: &str,
        raw: &Raw,
        measure: impl AsyncFnOnce(&mut Service) -> Result<T>,
    ) -> Result<T> {
        let mut service = Service::start_with_config(sandboxd, agent, config, instance_suffix)?;
        let result = measure(&mut service).await;
        let instance = service.instance.clone();
        drop(service);
        raw.clean_up(&instance).await;
        result
    }

    /// Kills the service with SIGKILL (no chance to tidy up) and starts it again on the same
    /// state; returns once the new one listens, at a new address.
    pub(crate) fn kill_and_restart(&mut self) -> Result<()> {
        self.child.kill()?;
        self.child.wait()?;
        let (child, url) = spawn(&self.sandboxd, &self.agent, self.state_dir.path())?;
        (self.child, self.url) = (child, url);
        Ok(())
    }

    /// The lines the service's latest start wrote to its standard error that contain `what`.
    pub(crate) fn said(&self, what: &str) -> Vec<String> {
        std::fs::read_to_string(self.state_dir.path().join(SERVICE_LOG))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(what))
            .map(str::to_string)
            .collect()
    }

    /// Its state directory (the filesystem its volumes' images are on).
    pub(crate) fn state_dir(&self) -> &Path {
        self.state_dir.path()
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn rss_bytes(&self) -> u64 {
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

/// The service's standard error, in its state directory, from its latest start.
const SERVICE_LOG: &str = "service.log";

/// Starts `sandboxd serve` on the state directory `state`; returns it and its URL once it
/// listens.
fn spawn(sandboxd: &Path, agent: &Path, state: &Path) -> Result<(Child, String)> {
    let mut child = Command::new(sandboxd)
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(state.join("config.toml"))
        .arg("--state-dir")
        .arg(state)
        .arg("--agent")
        .arg(agent)
        .env("SANDBOXD_LOG", "warn")
        .stdout(Stdio::piped())
        // Its start-up lines say where a slow start went (see `Service::said`).
        .stderr(std::fs::File::create(state.join(SERVICE_LOG))?)
        .spawn()
        .with_context(|| format!("cannot start {}", sandboxd.display()))?;
    let stdout = child.stdout.take().context("no stdout")?;
    // Read to the end, not just to the address: a service whose stdout is closed under it
    // dies at its next line.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("sandboxd listening on ") {
                let _ = tx.send(url.to_string());
            }
        }
    });
    let Ok(url) = rx.recv() else {
        let _ = child.kill();
        bail!("sandboxd exited before listening; run it by hand to see why");
    };
    Ok((child, url))
}

/// How long a stopping service may take to remove its pooled sandboxes.
const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

impl Drop for Service {
    /// Stops the service with SIGTERM, so it removes its warm pools' sandboxes on the way out
    /// (a SIGKILL leaves them running: the bench would leave sandboxes behind); killed after
    /// [`STOP_TIMEOUT`].
    fn drop(&mut self) {
        let asked = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        if asked.is_ok_and(|status| status.success()) {
            let deadline = std::time::Instant::now() + STOP_TIMEOUT;
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The sandboxd HTTP API, over one keep-alive connection pool.
pub(crate) struct Api {
    pub(crate) http: reqwest::Client,
    pub(crate) url: String,
}

impl Api {
    pub(crate) async fn call(
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

    pub(crate) async fn open(&self, runtime: &str) -> Result<String> {
        let session = self
            .call(
                reqwest::Method::POST,
                "/v1/sessions",
                Some(json!({"runtime": runtime})),
            )
            .await?;
        Ok(session["id"].as_str().context("no id")?.to_string())
    }

    pub(crate) async fn exec(&self, id: &str, command: &str) -> Result<Value> {
        self.run(id, json!({"command": command})).await
    }

    /// Runs a program with its arguments, no shell.
    pub(crate) async fn exec_argv(&self, id: &str, argv: &[&str]) -> Result<Value> {
        self.run(id, json!({"argv": argv})).await
    }

    async fn run(&self, id: &str, request: Value) -> Result<Value> {
        let result = self
            .call(
                reqwest::Method::POST,
                &format!("/v1/sessions/{id}/exec"),
                Some(request.clone()),
            )
            .await?;
        if result["exit_code"] != 0 {
            bail!("{request} failed: {result}");
        }
        Ok(result)
    }

    /// A stat of the session's working directory: a request its agent serves, spawning
    /// nothing.
    pub(crate) async fn stat_workdir(&self, id: &str) -> Result<Value> {
        self.call(
            reqwest::Method::GET,
            &format!("/v1/sessions/{id}/files/stat?path=."),
            None,
        )
        .await
    }

    pub(crate) async fn close(&self, id: &str) -> Result<()> {
        self.call(reqwest::Method::DELETE, &format!("/v1/sessions/{id}"), None)
            .await
            .map(drop)
    }

    /// `n` opens of the `warm` runtime, each timed once its pool of 5 is full again (waiting
    /// at most `refill` for it), and closed.
    pub(crate) async fn warm_opens(&self, n: usize, refill: Duration) -> Result<Sample> {
        let mut warm = Vec::new();
        for _ in 0..n {
            let deadline = Instant::now() + refill;
            while self.pooled().await? < 5 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let id = time(&mut warm, self.open("warm")).await?;
            self.close(&id).await?;
        }
        Ok(Sample(warm))
    }

    pub(crate) async fn pooled(&self) -> Result<u64> {
        Ok(
            self.call(reqwest::Method::GET, "/v1/stats", None).await?["pooled"]
                .as_u64()
                .unwrap_or(0),
        )
    }
}
