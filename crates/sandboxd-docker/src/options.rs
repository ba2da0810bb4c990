//! What the operator configures for the Docker backend.

use std::path::PathBuf;

pub struct DockerOptions {
    /// The engine's socket, e.g. `/var/run/docker.sock`.
    pub socket: String,
    /// Identifies this service's sandboxes among all containers on the engine.
    pub instance_id: String,
    /// The agent binary on the host (static, so it runs in any image).
    pub agent_binary: PathBuf,
    /// Host directory for the per-sandbox agent sockets, made private to the service (0700).
    pub socket_root: PathBuf,
    /// Host directory for the volumes' filesystem images and mount points (0700).
    pub volume_root: PathBuf,
    /// Host directory for the checkpoint images of gVisor sandboxes paused to disk (0700).
    pub checkpoint_root: PathBuf,
    /// How many sandboxes made one after another share one engine shim (1: each its own).
    pub sandboxes_per_shim: u32,
}
