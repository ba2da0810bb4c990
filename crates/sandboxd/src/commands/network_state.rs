//! `sandboxd serve --remove-network-state`: removes what a stopped service keeps on the host
//! for its restart: its egress network, the firewall chains named after it and the
//! sandboxes' resolv.conf. The Docker backend's own removal does it, so an operator and the
//! test scripts remove exactly what the service made, and nothing of another instance.

use anyhow::{bail, Context, Result};
use sandboxd_backend::Backend;
use sandboxd_config::{BackendSettings, Config};
use sandboxd_docker::{DockerBackend, DockerOptions};
use std::path::Path;

/// Removes the egress network state of the instance whose state directory is `state_dir`.
/// Refused while any sandbox of the instance exists (running or stopped): its network's
/// rules are what keeps such a sandbox in.
pub fn remove(config: &Config, state_dir: &Path, docker_socket: &str) -> Result<()> {
    if !matches!(config.backend, BackendSettings::Docker(_)) {
        bail!("the Kubernetes backend keeps no network state on this host: nothing to remove");
    }
    let id_file = state_dir.join("instance-id");
    let instance_id = std::fs::read_to_string(&id_file)
        .with_context(|| {
            format!(
                "cannot read {}: no service ran with this state directory",
                id_file.display()
            )
        })?
        .trim()
        .to_string();
    if instance_id.is_empty() {
        bail!("{} is empty", id_file.display());
    }
    // The backend writes the resolv.conf beside the agent sockets; the engine takes only
    // absolute paths.
    let state_dir = std::fs::canonicalize(state_dir)
        .with_context(|| format!("cannot resolve the state directory {}", state_dir.display()))?;
    let backend = DockerBackend::connect(DockerOptions {
        socket: docker_socket.to_string(),
        instance_id: instance_id.clone(),
        agent_binary: std::path::PathBuf::new(),
        socket_root: state_dir.join("sandboxes"),
        volume_root: state_dir.join("volumes"),
        checkpoint_root: state_dir.join("checkpoints"),
        sandboxes_per_shim: 1,
    })?;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let sandboxes = backend.list().await?;
        if !sandboxes.is_empty() {
            bail!(
                "instance {instance_id} still has {} sandboxes: stop the service and remove them first (`docker rm -f $(docker ps -aq --filter label=org.sandboxd.instance={instance_id})`)",
                sandboxes.len()
            );
        }
        // Found (or made) with its rules, then removed whole: the backend's one way to both.
        let network = backend.egress_network().await?;
        network
            .remove()
            .await
            .map_err(sandboxd_backend::BackendError::from)?;
        let names = network.names();
        println!(
            "removed the egress network {} and the firewall chains {}* of instance {instance_id}",
            names.network, names.chain
        );
        Ok(())
    })
}
