//! The working directory's filesystem: a tmpfs volume of the engine's `local` driver, one per
//! sandbox, mounted at [`WORKDIR`] and again at [`HOME_DIR`], so E2B code finds its home
//! writable with the same files under the same size cap. A container's own tmpfs mounts
//! cannot be shared between two places; a volume's mount can. It lives in memory like them,
//! charged to the sandbox's memory cgroup, and is removed with its container. One whose
//! container never came (the service crashed between the two creates) or went without it is
//! removed at the next start ([`remove_orphans`]).

use crate::engine_errors::{engine_error, is_not_found};
use crate::labels::LABEL_INSTANCE;
use crate::layout::SANDBOX_UID;
use bollard::models::{Mount, MountType, VolumeCreateRequest};
use bollard::query_parameters::{ListVolumesOptionsBuilder, RemoveVolumeOptions};
use bollard::Docker;
use sandboxd_api::{Isolation, Limits};
use sandboxd_backend::BackendError;
use sandboxd_backend::HOME_DIR;
use sandboxd_backend::WORKDIR;
use std::collections::HashMap;

/// What ends a volume's name: see [`name`].
const NAME_END: &str = "-work";

/// The volume's name: the container's, marked as its working directory.
pub fn name(container: &str) -> String {
    format!("{container}{NAME_END}")
}

/// Creates the volume: a tmpfs of `options` (the mount options of the other tmpfs places),
/// owned by the sandbox's uid. It is mounted on the host only while its container runs.
/// Returns where the engine mounts it on the host (the source of the container's mounts).
pub async fn create(
    docker: &Docker,
    name: &str,
    options: &str,
    labels: HashMap<String, String>,
) -> Result<String, BackendError> {
    let request = VolumeCreateRequest {
        name: Some(name.to_string()),
        driver: Some("local".to_string()),
        driver_opts: Some(HashMap::from([
            ("type".to_string(), "tmpfs".to_string()),
            ("device".to_string(), "tmpfs".to_string()),
            (
                "o".to_string(),
                format!("{options},uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0755"),
            ),
        ])),
        labels: Some(labels),
        ..Default::default()
    };
    docker
        .create_volume(request)
        .await
        .map(|volume| volume.mountpoint)
        .map_err(engine_error)
}

/// The mount options of the volume on the host, from `tmpfs_options` (those of the sandbox's
/// other tmpfs places). On gVisor it backs gVisor's own tmpfs of the sandbox's size (see
/// [`gvisor_hints`]), whose allocation runs ahead of its files: twice the size, so gVisor's
/// limit answers first.
pub fn host_options(limits: &Limits, tmpfs_options: fn(&Limits) -> String) -> String {
    match limits.isolation {
        Isolation::Runc => tmpfs_options(limits),
        Isolation::Gvisor => tmpfs_options(&Limits {
            tmpfs_size_bytes: limits.tmpfs_size_bytes.saturating_mul(2) + (32 << 20),
            ..limits.clone()
        }),
    }
}

/// The mount hints that make gVisor keep the volume in its own kernel: one tmpfs of `size`
/// bytes, owned by the sandbox's uid, shared by both of the container's mounts of the volume
/// (whose host source is `mountpoint`). Its files are then in the sandbox's memory, which a
/// checkpoint saves (see [`crate::checkpoint`]): the host's tmpfs is mounted afresh at each
/// start of the container, so files kept there would be lost across a pause to disk.
pub fn gvisor_hints(mountpoint: &str, size: u64) -> [(String, String); 4] {
    let hint = |key: &str, value: String| (format!("dev.gvisor.spec.mount.work.{key}"), value);
    [
        hint("source", mountpoint.to_string()),
        hint("type", "tmpfs".to_string()),
        // Shared among the mounts of the source: /workspace and /home/user are one filesystem.
        hint("share", "pod".to_string()),
        hint(
            "options",
            format!("rw,size={size},mode=0755,uid={SANDBOX_UID},gid={SANDBOX_UID}"),
        ),
    ]
}

/// The container's two mounts of the volume.
pub fn mounts(name: &str) -> Vec<Mount> {
    [WORKDIR, HOME_DIR]
        .map(|target| Mount {
            target: Some(target.to_string()),
            source: Some(name.to_string()),
            typ: Some(MountType::VOLUME),
            read_only: Some(false),
            ..Default::default()
        })
        .to_vec()
}

/// Removes the work volumes of `instance_id` that no container holds (the engine's
/// `dangling`), as a crash or a container removed outside leaves them: how many went. Called
/// before this process creates any sandbox, so none is a volume made for a container still
/// to come; one a container took meanwhile is refused by the engine and stays. Volumes of
/// other instances, and any not named as a work volume, are not touched.
pub async fn remove_orphans(docker: &Docker, instance_id: &str) -> Result<usize, BackendError> {
    let filters = HashMap::from([
        ("label", vec![format!("{LABEL_INSTANCE}={instance_id}")]),
        ("dangling", vec!["true".to_string()]),
    ]);
    let options = ListVolumesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let listed = docker
        .list_volumes(Some(options))
        .await
        .map_err(engine_error)?;
    let mut removed = 0;
    for volume in listed.volumes.unwrap_or_default() {
        let ours = volume.labels.get(LABEL_INSTANCE).map(String::as_str) == Some(instance_id);
        if !ours || !volume.name.ends_with(NAME_END) {
            continue;
        }
        match docker
            .remove_volume(&volume.name, None::<RemoveVolumeOptions>)
            .await
        {
            Ok(()) => removed += 1,
            Err(e) if is_not_found(&e) => {}
            // In use after all: a container holds it, so it is no orphan.
            Err(e) => tracing::debug!(volume = %volume.name, error = %e, "work volume kept"),
        }
    }
    Ok(removed)
}

/// Removes the volume, once its container is gone; one already gone is no error.
pub async fn remove(docker: &Docker, name: &str) -> Result<(), BackendError> {
    match docker
        .remove_volume(name, None::<RemoveVolumeOptions>)
        .await
    {
        Ok(()) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(e) => Err(engine_error(e)),
    }
}
