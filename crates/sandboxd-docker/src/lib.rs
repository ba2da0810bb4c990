//! The Docker Engine implementation of the sandbox backend.
//!
//! Each sandbox is a container started with the hardened profile below, whatever the image
//! says. The in-sandbox agent is bind-mounted read-only and is the container's entrypoint and
//! its PID 1 (it reaps orphans itself, no engine init runs); it dials back to a unix socket that this backend creates on the host in a
//! per-sandbox directory, mounted read-only into the sandbox, and proves itself with the
//! sandbox's secret (see [`access`]). Nothing the sandbox writes lands on the host disk, and
//! the host never resolves a path the sandbox controls.

mod access;
mod agent_sockets;
mod backend;
mod build;
mod cgroup;
mod checkpoint;
mod confined;
mod confined_paths;
pub mod egress;
mod elf;
pub mod engine;
mod engine_errors;
mod host_volumes;
pub mod isolation;
mod labels;
mod late_mounts;
mod layout;
mod link;
mod listing;
mod network;
mod options;
mod pause;
mod shim;
mod stops;
mod work_volume;

pub use backend::DockerBackend;
pub use elf::is_static_elf;
pub use labels::{
    LABEL_INSTANCE, LABEL_MANAGED, LABEL_RECIPE, LABEL_RECIPE_HASH, LABEL_RUNTIME, LABEL_SESSION,
};
pub use layout::SANDBOX_UID;
pub use options::DockerOptions;
pub use sandboxd_backend::{HOME_DIR, WORKDIR};
