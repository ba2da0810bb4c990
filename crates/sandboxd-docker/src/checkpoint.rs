//! Pause to disk for gVisor sandboxes: their memory and processes written to a checkpoint
//! image under the service's state directory, their RAM released, and restored where they were.
//!
//! The engine's own `docker checkpoint` cannot be used: its restore fails on this engine
//! (Docker 28 with containerd 2: "bind-mount /proc/0/ns/net", containerd#12141, measured with
//! runsc and runc alike). So the image is written beside the engine with `runsc checkpoint`
//! (the same runsc, its state root read from the sandbox's own command line), which stops the
//! container; and the engine's runsc runtime is `scripts/runsc-sandboxd`, a wrapper that turns
//! the `start` of a created container whose annotation [`CHECKPOINT_ANNOTATION`] names a
//! directory holding an image into `runsc restore` (at `start`, not `create`: the engine
//! configures the network namespace in between, and gVisor takes its interfaces from it). A
//! plain `docker start` thus restores the sandbox, which stays the engine's container (exec,
//! ports, logs, removal as before). Measured: a checkpoint of a busybox sandbox 32 ms, the
//! restoring start 180-290 ms.

use crate::engine_errors::{engine_error, is_not_found};
use bollard::Docker;
use sandboxd_backend::{BackendError, ExistingSandbox, Sandbox};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The annotation of a gVisor sandbox naming its checkpoint directory, read by the wrapper.
pub(crate) const CHECKPOINT_ANNOTATION: &str = "dev.sandboxd.checkpoint";
/// The file name of the wrapper `scripts/host-setup.sh` registers as the engine's runsc.
pub(crate) const RESTORING_RUNSC: &str = "runsc-sandboxd";
/// The image file runsc writes first of all; a directory holding it holds a checkpoint.
const IMAGE_FILE: &str = "checkpoint.img";
/// The longest a checkpoint may take (about 0.7 s per GiB of memory was measured).
const CHECKPOINT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest the engine may take to see the checkpointed container stopped.
const STOP_SEEN_TIMEOUT: Duration = Duration::from_secs(10);
/// Room left free on the state directory's filesystem beyond the image.
const HEADROOM_BYTES: u64 = 64 << 20;
/// How the directories of a fork's copies of memory begin (a session's is its id, a
/// snapshot's copy `snap-` and its id): left by a stopped service, they are removed.
const COPY_PREFIX: &[u8] = b"copy-";
/// In a copy's directory, the session whose agent secret its agent knows.
const OWNER_FILE: &str = "owner";

pub(crate) struct Checkpoints {
    root: PathBuf,
}

impl Checkpoints {
    /// The checkpoints under `root`; copies of memory a stopped service left there (their
    /// forks never started) are removed.
    pub fn new(root: PathBuf) -> Checkpoints {
        let left = std::fs::read_dir(&root).into_iter().flatten().flatten();
        for entry in left.filter(|e| e.file_name().as_encoded_bytes().starts_with(COPY_PREFIX)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
        Checkpoints { root }
    }

    /// The session whose agent secret the agent of copy `copy_id` knows.
    pub fn copy_owner(&self, copy_id: &str) -> Result<String, BackendError> {
        let path = self.dir(copy_id).join(OWNER_FILE);
        let mut owner = String::new();
        std::fs::File::open(&path)
            .and_then(|file| std::io::Read::take(file, 65).read_to_string(&mut owner))
            .map_err(|e| {
                BackendError::Setup(format!("no copy of memory {copy_id} is kept: {e}"))
            })?;
        Ok(owner)
    }

    fn dir(&self, session_id: &str) -> PathBuf {
        self.root.join(session_id)
    }

    /// The annotation a new gVisor sandbox is created with.
    pub fn annotation(&self, session_id: &str) -> (String, String) {
        (
            CHECKPOINT_ANNOTATION.to_string(),
            self.dir(session_id).to_string_lossy().into_owned(),
        )
    }

    /// The bytes of the session's checkpoint image, if it has one.
    pub fn image_bytes(&self, session_id: &str) -> Option<u64> {
        let dir = self.dir(session_id);
        std::fs::symlink_metadata(dir.join(IMAGE_FILE))
            .ok()
            .filter(|m| m.is_file())?;
        Some(dir_bytes(&dir))
    }

    /// Marks the listed sandboxes that have a checkpoint image as paused with their memory on
    /// disk. The checkpoint stopped them: they are paused, not gone; so is one the engine still
    /// shows running while it winds up that stop (the pause answers before it, and a resume
    /// removes the image as soon as it has restored from it).
    pub fn mark_paused(&self, sandboxes: &mut [ExistingSandbox]) {
        for found in sandboxes {
            let image = self.image_bytes(&found.sandbox.session_id);
            if image.is_some() {
                found.running = true;
                found.paused = true;
                found.memory_on_disk = image;
            }
        }
    }

    /// Removes the session's checkpoint image; none is no error.
    pub fn remove(&self, session_id: &str) {
        let dir = self.dir(session_id);
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot remove a checkpoint image");
            }
        }
    }

    /// Whether the sandbox can be paused to disk: its container runs on gVisor and was
    /// created with this session's checkpoint annotation (one made before pause to disk
    /// existed would boot afresh at its start, its memory lost).
    pub async fn restorable(
        &self,
        docker: &Docker,
        sandbox: &Sandbox,
    ) -> Result<bool, BackendError> {
        let inspect = docker
            .inspect_container(&sandbox.backend_id, None)
            .await
            .map_err(|e| match is_not_found(&e) {
                true => BackendError::SandboxGone(sandbox.session_id.clone()),
                false => engine_error(e),
            })?;
        let host = inspect.host_config.unwrap_or_default();
        let (key, dir) = self.annotation(&sandbox.session_id);
        Ok(
            host.runtime.as_deref() == Some(crate::isolation::GVISOR_RUNTIME)
                && host.annotations.and_then(|a| a.get(&key).cloned()) == Some(dir),
        )
    }

    /// Writes the running gVisor container's checkpoint image (which stops it: its RAM is
    /// released when runsc is done) and returns its bytes. The engine sees the container
    /// stopped only once it has removed its task (about 100 ms more, measured): not waited for
    /// here, but by the resume that starts it again ([`await_stopped`]). `memory_bytes` is what
    /// the sandbox holds now: without that much room (and some) on the state directory's
    /// filesystem, or when runsc fails, nothing is written and the sandbox keeps running.
    pub async fn write(
        &self,
        docker: &Docker,
        container: &str,
        session_id: &str,
        memory_bytes: u64,
    ) -> Result<u64, BackendError> {
        self.checkpoint(docker, container, session_id, memory_bytes, false)
            .await
    }

    /// Writes a copy of the running container's memory and processes as `copy_id`, for
    /// sandboxes to start from ([`Checkpoints::seed`]); the container keeps running. As
    /// [`Checkpoints::write`] otherwise.
    /// `owner` is the session whose agent secret the copied agent knows.
    pub async fn write_copy(
        &self,
        docker: &Docker,
        container: &str,
        copy_id: &str,
        memory_bytes: u64,
        owner: String,
    ) -> Result<u64, BackendError> {
        // A session's own directory is named by its id: a copy's never is.
        if !copy_id.starts_with("copy-") && !copy_id.starts_with("snap-") {
            return Err(BackendError::Setup(format!(
                "a copy of memory's id starts with \"copy-\" or \"snap-\", not {copy_id}"
            )));
        }
        let bytes = self
            .checkpoint(docker, container, copy_id, memory_bytes, true)
            .await?;
        let path = self.dir(copy_id).join(OWNER_FILE);
        if let Err(e) = std::fs::write(&path, owner) {
            self.remove(copy_id);
            return Err(BackendError::Setup(format!(
                "cannot write {}: {e}",
                path.display()
            )));
        }
        Ok(bytes)
    }

    /// Gives a created sandbox the copy `copy_id` to be restored from at its start: its files
    /// linked (not copied: they are only read) into the sandbox's checkpoint directory.
    pub fn seed(&self, copy_id: &str, session_id: &str) -> Result<(), BackendError> {
        let (from, to) = (self.dir(copy_id), self.dir(session_id));
        let setup = |e: std::io::Error| {
            BackendError::Setup(format!(
                "cannot give sandbox {session_id} the copy of memory {copy_id}: {e}"
            ))
        };
        if std::fs::symlink_metadata(from.join(IMAGE_FILE))
            .map_err(setup)?
            .is_symlink()
        {
            return Err(setup(std::io::Error::other("its image is a symlink")));
        }
        self.remove(session_id);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&to)
            .map_err(setup)?;
        for entry in std::fs::read_dir(&from).map_err(setup)? {
            let entry = entry.map_err(setup)?;
            if entry.file_type().map_err(setup)?.is_file() && entry.file_name() != OWNER_FILE {
                std::fs::hard_link(entry.path(), to.join(entry.file_name())).map_err(setup)?;
            }
        }
        Ok(())
    }

    /// Runs `runsc checkpoint` of the container into the directory `name`, leaving it running
    /// or not; the image's bytes.
    async fn checkpoint(
        &self,
        docker: &Docker,
        container: &str,
        name: &str,
        memory_bytes: u64,
        leave_running: bool,
    ) -> Result<u64, BackendError> {
        let pid = running_pid(docker, container).await?;
        let (runsc, state_root) = runsc_of(pid)?;
        let setup = |e: std::io::Error| {
            BackendError::Setup(format!(
                "cannot prepare the checkpoint directory under {}: {e}",
                self.root.display()
            ))
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.root)
            .map_err(setup)?;
        room_for(available_bytes(&self.root).map_err(setup)?, memory_bytes)?;
        let dir = self.dir(name);
        self.remove(name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(setup)?;
        let started = Instant::now();
        let mut command = tokio::process::Command::new(&runsc);
        command
            .arg(format!("--root={state_root}"))
            .arg("checkpoint")
            .arg("--image-path")
            .arg(&dir);
        if leave_running {
            command.arg("--leave-running");
        }
        let checkpoint = command.arg(container).kill_on_drop(true).output();
        let failed = |why: String| {
            self.remove(name);
            BackendError::Engine(format!(
                "the gVisor checkpoint of container {container} failed: {why}; it keeps running"
            ))
        };
        let output = match tokio::time::timeout(CHECKPOINT_TIMEOUT, checkpoint).await {
            Err(_) => return Err(failed(format!("no answer within {CHECKPOINT_TIMEOUT:?}"))),
            Ok(Err(e)) => return Err(failed(format!("cannot run {}: {e}", runsc.display()))),
            Ok(Ok(output)) => output,
        };
        if !output.status.success() {
            let said = String::from_utf8_lossy(&output.stderr);
            return Err(failed(last_line(&said).to_string()));
        }
        let bytes = private_files(&dir).map_err(setup)?;
        tracing::debug!(checkpoint = name, bytes, millis = ?started.elapsed(), "checkpoint written");
        Ok(bytes)
    }
}

/// Whether the engine's runsc runtime is the restoring wrapper.
pub(crate) fn engine_restores(info: &bollard::models::SystemInfo) -> bool {
    info.runtimes
        .as_ref()
        .and_then(|r| r.get(crate::isolation::GVISOR_RUNTIME))
        .and_then(|r| r.path.as_deref())
        .is_some_and(|path| Path::new(path).file_name() == Some(RESTORING_RUNSC.as_ref()))
}

/// Refuses a checkpoint of `memory_bytes` where only `available` bytes are free.
fn room_for(available: u64, memory_bytes: u64) -> Result<(), BackendError> {
    let needed = memory_bytes.saturating_add(HEADROOM_BYTES);
    if available >= needed {
        return Ok(());
    }
    Err(BackendError::NoRoom(format!(
        "no room to pause to disk: the state directory's filesystem has {} MiB free and the sandbox's memory needs about {} MiB; it keeps running (free space there, or close sessions)",
        available >> 20,
        needed >> 20
    )))
}

fn available_bytes(path: &Path) -> std::io::Result<u64> {
    let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(std::io::Error::other)?;
    // SAFETY: statvfs is plain data, for which all zeroes is a valid value.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a statvfs for the kernel to fill.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// The host pid of the running container's first process (on gVisor, its `runsc-sandbox`
/// process).
pub(crate) async fn running_pid(docker: &Docker, container: &str) -> Result<i64, BackendError> {
    let inspect =
        docker
            .inspect_container(container, None)
            .await
            .map_err(|e| match is_not_found(&e) {
                true => BackendError::SandboxGone(container.to_string()),
                false => engine_error(e),
            })?;
    let state = inspect.state.unwrap_or_default();
    match state.pid {
        Some(pid) if pid > 0 && state.running == Some(true) => Ok(pid),
        _ => Err(BackendError::Engine(format!(
            "container {container} is not running"
        ))),
    }
}

/// The runsc binary of the sandbox process `pid` and the state root it was started with
/// (`--root=`, the engine's runtime root, which `runsc checkpoint` must be given).
fn runsc_of(pid: i64) -> Result<(PathBuf, String), BackendError> {
    let unreadable = |what: &str, e: std::io::Error| {
        BackendError::Setup(format!(
            "cannot read the gVisor sandbox's {what} (pid {pid}): {e}"
        ))
    };
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).map_err(|e| unreadable("exe", e))?;
    let cmdline =
        std::fs::read(format!("/proc/{pid}/cmdline")).map_err(|e| unreadable("cmdline", e))?;
    let root = state_root(&cmdline).ok_or_else(|| {
        BackendError::Setup(format!(
            "the gVisor sandbox (pid {pid}) was started without --root; cannot checkpoint it"
        ))
    })?;
    Ok((exe, root))
}

/// `--root=` of a NUL-separated command line.
fn state_root(cmdline: &[u8]) -> Option<String> {
    cmdline
        .split(|b| *b == 0)
        .find_map(|arg| arg.strip_prefix(b"--root="))
        .map(|root| String::from_utf8_lossy(root).into_owned())
}

/// Makes the files of `dir` readable by the service's user only; returns their bytes.
fn private_files(dir: &Path) -> std::io::Result<u64> {
    let mut bytes = 0u64;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_file() {
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o600))?;
            bytes = bytes.saturating_add(meta.len());
        }
    }
    Ok(bytes)
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok().filter(|m| m.is_file()))
        .map(|m| m.len())
        .sum()
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("runsc said nothing")
}

/// Waits until the engine shows the container stopped, as it does once the stop its checkpoint
/// made is wound up: a start before that would find it running.
pub(crate) async fn await_stopped(docker: &Docker, container: &str) -> Result<(), BackendError> {
    let deadline = Instant::now() + STOP_SEEN_TIMEOUT;
    loop {
        let inspect = docker
            .inspect_container(container, None)
            .await
            .map_err(engine_error)?;
        if inspect.state.and_then(|s| s.running) != Some(true) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(BackendError::Engine(format!(
                "the engine still shows container {container} running {STOP_SEEN_TIMEOUT:?} after its checkpoint"
            )));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_root_is_read_from_the_sandbox_command_line() {
        let cmdline = b"runsc-sandbox\0--root=/run/docker/runtime-runc/moby\0--log-fd=3\0boot\0";
        assert_eq!(
            state_root(cmdline).as_deref(),
            Some("/run/docker/runtime-runc/moby")
        );
        assert_eq!(state_root(b"runsc-sandbox\0boot\0"), None);
    }

    #[test]
    fn a_checkpoint_without_room_is_refused_with_the_figures() {
        assert!(room_for(1 << 30, 256 << 20).is_ok());
        let refused = room_for(100 << 20, 256 << 20).unwrap_err();
        assert!(matches!(refused, BackendError::NoRoom(_)), "{refused}");
        let message = refused.to_string();
        assert!(message.contains("100 MiB free"), "{message}");
        assert!(message.contains("keeps running"), "{message}");
    }

    #[test]
    fn a_sandbox_with_an_image_is_listed_paused_on_disk_stopped_or_not_yet() {
        let root = tempfile::tempdir().unwrap();
        let checkpoints = Checkpoints::new(root.path().to_path_buf());
        for id in ["stopped", "winding-up"] {
            std::fs::create_dir(root.path().join(id)).unwrap();
            std::fs::write(root.path().join(id).join(IMAGE_FILE), [0; 7]).unwrap();
        }
        let listed = |id: &str, running: bool| ExistingSandbox {
            sandbox: Sandbox {
                session_id: id.to_string(),
                backend_id: format!("c-{id}"),
            },
            runtime: "py".to_string(),
            running,
            paused: false,
            memory_on_disk: None,
        };
        let mut sandboxes = [
            listed("stopped", false),
            listed("winding-up", true),
            listed("running", true),
            listed("gone", false),
        ];
        checkpoints.mark_paused(&mut sandboxes);
        let seen: Vec<_> = sandboxes
            .iter()
            .map(|s| (s.running, s.paused, s.memory_on_disk))
            .collect();
        assert_eq!(
            seen,
            [
                (true, true, Some(7)),
                (true, true, Some(7)),
                (true, false, None),
                (false, false, None)
            ]
        );
    }

    #[test]
    fn an_image_is_counted_only_where_runsc_wrote_one() {
        let root = tempfile::tempdir().unwrap();
        let checkpoints = Checkpoints::new(root.path().to_path_buf());
        assert_eq!(checkpoints.image_bytes("s1"), None);
        std::fs::create_dir(root.path().join("s1")).unwrap();
        assert_eq!(checkpoints.image_bytes("s1"), None, "an empty directory");
        std::fs::write(root.path().join("s1").join(IMAGE_FILE), [0; 10]).unwrap();
        std::fs::write(root.path().join("s1").join("pages.img"), [0; 5]).unwrap();
        assert_eq!(private_files(&root.path().join("s1")).unwrap(), 15);
        assert_eq!(checkpoints.image_bytes("s1"), Some(15));
        let mode = std::fs::metadata(root.path().join("s1").join("pages.img"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        checkpoints.remove("s1");
        assert!(!root.path().join("s1").exists());
    }
}
