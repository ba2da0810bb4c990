//! The working directory's filesystem: a tmpfs volume of the engine's `local` driver, one per
//! sandbox, mounted at [`WORKDIR`] and again at [`HOME_DIR`], so E2B code finds its home
//! writable with the same files under the same size cap. A container's own tmpfs mounts
//! cannot be shared between two places; a volume's mount can. It lives in memory like them,
//! charged to the sandbox's memory cgroup, and is removed with its container.

use crate::layout::SANDBOX_UID;
use crate::link::{engine_error, is_not_found};
use bollard::models::{Mount, MountType, VolumeCreateRequest};
use bollard::query_parameters::RemoveVolumeOptions;
use bollard::Docker;
use sandboxd_backend::BackendError;
use sandboxd_backend::HOME_DIR;
use sandboxd_backend::WORKDIR;
use std::collections::HashMap;

/// The volume's name: the container's, marked as its working directory.
pub fn name(container: &str) -> String {
    format!("{container}-work")
}

/// Creates the volume: a tmpfs of `options` (the mount options of the other tmpfs places),
/// owned by the sandbox's uid. It is mounted on the host only while its container runs.
pub async fn create(
    docker: &Docker,
    name: &str,
    options: &str,
    labels: HashMap<String, String>,
) -> Result<(), BackendError> {
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
        .map(drop)
        .map_err(engine_error)
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
