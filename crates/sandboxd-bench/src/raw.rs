//! The floor: the same operations done directly through the Docker Engine API.

use anyhow::{bail, Result};
use bollard::models::{ContainerCreateBody, ExecConfig, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    ListContainersOptionsBuilder, RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use bollard::Docker;
use futures_util::{StreamExt, TryStreamExt};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// Labelled with the bench's process id, so a run removes only what it made, also while
/// another run goes on beside it.
const LABEL: &str = "org.sandboxd.bench";

fn run_label() -> String {
    std::process::id().to_string()
}

/// The same operations done directly through the Engine API.
pub(crate) struct Raw {
    pub(crate) docker: Docker,
    pub(crate) image: String,
    /// The engine's runtime for the containers (`runsc` for gVisor); its default when `None`.
    pub(crate) runtime: Option<String>,
}

impl Raw {
    /// The same engine and image, with the containers on the engine runtime `runtime`.
    pub(crate) fn on_runtime(&self, runtime: &str) -> Raw {
        Raw {
            docker: self.docker.clone(),
            image: self.image.clone(),
            runtime: Some(runtime.into()),
        }
    }

    pub(crate) async fn create_start(&self) -> Result<String> {
        let body = ContainerCreateBody {
            image: Some(self.image.clone()),
            cmd: Some(vec!["sleep".into(), "86400".into()]),
            user: Some("61000:61000".into()),
            labels: Some(HashMap::from([(LABEL.to_string(), run_label())])),
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
                // The service's shape: its agent is its own init.
                init: Some(false),
                network_mode: Some("none".into()),
                runtime: self.runtime.clone(),
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
    pub(crate) async fn exec(&self, container: &str, command: &str) -> Result<usize> {
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

    pub(crate) async fn put_file(&self, container: &str, data: &[u8]) -> Result<()> {
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

    pub(crate) async fn get_file(&self, container: &str) -> Result<usize> {
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

    pub(crate) async fn remove(&self, container: &str) -> Result<()> {
        let options = RemoveContainerOptionsBuilder::default().force(true).build();
        self.docker
            .remove_container(container, Some(options))
            .await?;
        Ok(())
    }

    /// The files of `image`, as a container of it holds them, unpacked into `into` (the
    /// archive passes through the file `spool` on the way, not through memory).
    pub(crate) async fn export_image(&self, image: &str, spool: &Path, into: &Path) -> Result<()> {
        let body = ContainerCreateBody {
            image: Some(image.into()),
            cmd: Some(vec!["true".into()]),
            labels: Some(HashMap::from([(LABEL.to_string(), run_label())])),
            ..Default::default()
        };
        let options = CreateContainerOptionsBuilder::default().build();
        let created = self.docker.create_container(Some(options), body).await?;
        let spooled = async {
            let mut file = std::fs::File::create(spool)?;
            let mut export = self.docker.export_container(&created.id);
            while let Some(chunk) = export.next().await {
                file.write_all(&chunk?)?;
            }
            anyhow::Ok(())
        }
        .await;
        self.remove(&created.id).await?;
        spooled?;
        std::fs::create_dir_all(into)?;
        tar::Archive::new(std::fs::File::open(spool)?).unpack(into)?;
        std::fs::remove_file(spool)?;
        Ok(())
    }

    /// Removes whatever this run made on the engine: raw containers and the service's sandboxes.
    pub(crate) async fn clean_up(&self, instance: &str) {
        for label in [
            format!("{LABEL}={}", run_label()),
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
