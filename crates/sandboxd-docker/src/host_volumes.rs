//! Volumes on the host: one ext4 filesystem image per volume, a sparse file under the state
//! directory, loop-mounted (`nosuid,nodev`) where containers bind it from. The image's size
//! is the hard cap: a writer inside gets "no space" there, and the host's disk never gives a
//! volume more than its size. Overlay quotas need an XFS backing filesystem with `pquota`,
//! which these hosts lack; a loop device needs nothing but root.
//!
//! Layout: `ROOT/ID/image.ext4` (0600) and `ROOT/ID/mnt` (the mount point), in 0700
//! directories; the filesystem's root belongs to the sandboxes' uid. A mount point that is
//! not mounted (after a reboot) is never handed to a container: its files would land on the
//! state directory's disk, uncapped.

use crate::access::private_dir;
use crate::layout::SANDBOX_UID;
use bollard::models::{Mount, MountBindOptions, MountBindOptionsPropagationEnum, MountType};
use sandboxd_backend::{BackendError, VolumeMount};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use tokio::process::Command;

const IMAGE: &str = "image.ext4";
const MOUNT_POINT: &str = "mnt";

pub struct HostVolumes {
    root: PathBuf,
}

fn setup(what: String) -> BackendError {
    BackendError::Setup(what)
}

/// Runs a host tool, its failure an error that quotes what it said.
async fn run(program: &str, args: &[&str]) -> Result<(), BackendError> {
    let output = Command::new(program)
        .args(args)
        .output()
        .await
        .map_err(|e| {
            setup(format!(
                "cannot run {program} (scripts/host-setup.sh installs it): {e}"
            ))
        })?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    Err(setup(format!(
        "{program} {} failed: {}",
        args.join(" "),
        said.trim()
    )))
}

/// Whether `path` is a mount point: it is on another device than its parent.
fn is_mounted(path: &Path) -> bool {
    let (Ok(inner), Some(Ok(outer))) = (
        std::fs::metadata(path),
        path.parent().map(std::fs::metadata),
    ) else {
        return false;
    };
    inner.dev() != outer.dev()
}

/// A volume's id, as the core makes them: hex, so it names a directory safely.
fn checked(id: &str) -> Result<&str, BackendError> {
    if !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(id)
    } else {
        Err(setup(format!("invalid volume id {id:?}")))
    }
}

impl HostVolumes {
    pub fn new(root: PathBuf) -> HostVolumes {
        HostVolumes { root }
    }

    /// Where the volume's filesystem is mounted on the host.
    pub fn mount_point(&self, id: &str) -> PathBuf {
        self.root.join(id).join(MOUNT_POINT)
    }

    /// The mount point of a volume that is mounted, for a container's bind.
    pub fn mounted(&self, id: &str) -> Result<PathBuf, BackendError> {
        let point = self.mount_point(checked(id)?);
        if is_mounted(&point) {
            Ok(point)
        } else {
            Err(setup(format!(
                "volume {id} is not mounted on the host; restart the service to mount it again"
            )))
        }
    }

    /// The binds of a sandbox's volumes, each from its filesystem mounted on the host (never
    /// from a mount point left empty, whose files would land on the host's disk uncapped).
    pub fn binds(&self, volumes: &[VolumeMount]) -> Result<Vec<Mount>, BackendError> {
        volumes
            .iter()
            .map(|volume| {
                let source = self.mounted(&volume.volume_id)?;
                Ok(Mount {
                    target: Some(volume.path.clone()),
                    source: Some(source.to_string_lossy().into_owned()),
                    typ: Some(MountType::BIND),
                    read_only: Some(volume.read_only),
                    bind_options: Some(MountBindOptions {
                        propagation: Some(MountBindOptionsPropagationEnum::RPRIVATE),
                        non_recursive: Some(true),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
            })
            .collect()
    }

    pub async fn create(&self, id: &str, size_bytes: u64) -> Result<(), BackendError> {
        let dir = self.root.join(checked(id)?);
        // What a crash left of an earlier try goes first.
        self.remove(id).await?;
        let io = |what: &str, e: std::io::Error| setup(format!("volume {id}: cannot {what}: {e}"));
        private_dir(&dir).map_err(|e| io("make its directory", e))?;
        private_dir(&dir.join(MOUNT_POINT)).map_err(|e| io("make its mount point", e))?;
        let image = dir.join(IMAGE);
        {
            use std::os::unix::fs::OpenOptionsExt;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&image)
                .map_err(|e| io("make its image", e))?;
            // Sparse: the host's disk gives it blocks only as they are written.
            file.set_len(size_bytes)
                .map_err(|e| io("size its image", e))?;
        }
        let image_text = image.to_string_lossy();
        let owner = format!("root_owner={SANDBOX_UID}:{SANDBOX_UID}");
        // No blocks reserved for root: the sandbox gets the whole size.
        run(
            "mkfs.ext4",
            &[
                "-q",
                "-F",
                "-m",
                "0",
                "-E",
                &owner,
                "-L",
                "sandboxd",
                &image_text,
            ],
        )
        .await?;
        self.mount(id).await?;
        // lost+found is root's: a directory the sandbox could not use.
        let _ = std::fs::remove_dir(self.mount_point(id).join("lost+found"));
        Ok(())
    }

    async fn mount(&self, id: &str) -> Result<(), BackendError> {
        let dir = self.root.join(id);
        let point = dir.join(MOUNT_POINT);
        let point_text = point.to_string_lossy();
        run(
            "mount",
            &[
                "-t",
                "ext4",
                "-o",
                "loop,nosuid,nodev",
                &dir.join(IMAGE).to_string_lossy(),
                &point_text,
            ],
        )
        .await?;
        // Direct I/O from the loop device to its image: without it every block is cached
        // twice and writes run at a third of the disk's speed; with it, near the disk's.
        let source = Command::new("findmnt")
            .args(["-n", "-o", "SOURCE", &point_text])
            .output()
            .await
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        match source {
            Ok(device) if device.starts_with("/dev/loop") => {
                if let Err(e) = run("losetup", &["--direct-io=on", &device]).await {
                    tracing::warn!(volume = id, error = %e, "volume without direct I/O: slower");
                }
            }
            _ => tracing::warn!(volume = id, "cannot find the volume's loop device"),
        }
        Ok(())
    }

    pub async fn restore(&self, id: &str) -> Result<(), BackendError> {
        let point = self.mount_point(checked(id)?);
        if is_mounted(&point) {
            return Ok(());
        }
        if !self.root.join(id).join(IMAGE).exists() {
            return Err(setup(format!("volume {id}: its image is missing")));
        }
        self.mount(id).await
    }

    pub async fn remove(&self, id: &str) -> Result<(), BackendError> {
        let dir = self.root.join(checked(id)?);
        let point = dir.join(MOUNT_POINT);
        if is_mounted(&point) && run("umount", &[&point.to_string_lossy()]).await.is_err() {
            // Busy on the host (a download under way): detached now, freed when it ends.
            run("umount", &["-l", &point.to_string_lossy()]).await?;
        }
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(setup(format!("volume {id}: cannot remove its files: {e}"))),
        }
    }

    pub fn list(&self) -> Result<Vec<String>, BackendError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(setup(format!("cannot list the volumes' directory: {e}"))),
        };
        Ok(entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| checked(name).is_ok())
            .collect())
    }

    /// Bytes in use on the volume's filesystem.
    pub fn used_bytes(&self, id: &str) -> Option<u64> {
        let point = self.mounted(id).ok()?;
        let path = std::ffi::CString::new(point.as_os_str().as_encoded_bytes()).ok()?;
        // SAFETY: statvfs is plain integers; all-zero is a valid value to be overwritten.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: statvfs writes into the struct it is given; the path is a C string.
        if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
            return None;
        }
        Some((stat.f_blocks - stat.f_bfree) * stat.f_frsize)
    }

    pub fn prepare(&self) -> Result<(), BackendError> {
        private_dir(&self.root)
            .map_err(|e| setup(format!("cannot prepare {}: {e}", self.root.display())))
    }
}
