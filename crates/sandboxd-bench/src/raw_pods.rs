//! The floor of a session's cold create on Kubernetes: a pod of the same image made directly
//! through the API server, timed from the create call until the API says its container runs,
//! watched (not polled, which would load the API server the figure is taken through); and the
//! same with an init container first, the step a session's pod takes its agent from.

use anyhow::{bail, Context, Result};
use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};
use std::path::Path;
use std::time::{Duration, Instant};

/// Labelled with the bench's process id, so a run removes only what it made.
const LABEL: &str = "org.sandboxd.bench";
/// A pod that does not run within this is a failed run, not a slow figure.
const RUNNING_TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) struct RawPods {
    pods: Api<Pod>,
    image: String,
}

impl RawPods {
    pub(crate) async fn connect(kubeconfig: &Path, namespace: &str, image: &str) -> Result<Self> {
        let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig)
            .with_context(|| format!("reading {}", kubeconfig.display()))?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
        let client = kube::Client::try_from(config)?;
        Ok(RawPods {
            pods: Api::namespaced(client, namespace),
            image: image.to_string(),
        })
    }

    /// Creates a pod that sleeps and waits until its container runs; its name. With
    /// `init_step`, an init container that exits at once goes first, as the one that delivers
    /// a session pod's agent does.
    pub(crate) async fn create_running(&self, index: usize, init_step: bool) -> Result<String> {
        let name = format!(
            "bench-raw-{}-{index}-{}",
            std::process::id(),
            u8::from(init_step)
        );
        let init_containers = if init_step {
            serde_json::json!([{
                "name": "init",
                "image": self.image,
                "imagePullPolicy": "Never",
                "command": ["true"],
            }])
        } else {
            serde_json::json!([])
        };
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {LABEL: std::process::id().to_string()}},
            "spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 0,
                "enableServiceLinks": false,
                "automountServiceAccountToken": false,
                "initContainers": init_containers,
                "containers": [{
                    "name": "sandbox",
                    "image": self.image,
                    "imagePullPolicy": "Never",
                    "command": ["sleep", "3600"],
                }],
            },
        }))?;
        let created = self.pods.create(&PostParams::default(), &pod).await?;
        let version = created.metadata.resource_version.unwrap_or_default();
        let params = WatchParams::default()
            .fields(&format!("metadata.name={name}"))
            .timeout(u32::try_from(RUNNING_TIMEOUT.as_secs()).unwrap_or(u32::MAX));
        let started = Instant::now();
        let mut events = self.pods.watch(&params, &version).await?.boxed();
        while let Some(event) = events.try_next().await? {
            if let WatchEvent::Modified(pod) | WatchEvent::Added(pod) = event {
                if runs(&pod) {
                    return Ok(name);
                }
            }
            if started.elapsed() > RUNNING_TIMEOUT {
                break;
            }
        }
        bail!("the raw pod {name} did not run within {RUNNING_TIMEOUT:?}")
    }

    /// Removes every pod this run made.
    pub(crate) async fn clean_up(&self) {
        let selector = format!("{LABEL}={}", std::process::id());
        let params = DeleteParams {
            grace_period_seconds: Some(0),
            ..Default::default()
        };
        if let Err(e) = self
            .pods
            .delete_collection(&params, &ListParams::default().labels(&selector))
            .await
        {
            eprintln!(
                "warning: the raw pods were not removed ({e}); remove them by the label {selector}"
            );
        }
    }
}

fn runs(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_ref())
        .is_some_and(|containers| {
            containers
                .iter()
                .all(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
        })
}
