//! The sandbox backend trait: what the service needs from a container platform.
//!
//! A backend starts and removes sandboxes, reports their resource use and hands out
//! connections to the in-sandbox agent. Everything a sandbox does (commands, files) goes
//! through the agent's protocol, so a new platform (Kubernetes is next) implements only
//! this trait.

use sandboxd_api::Limits;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// Every sandbox's working directory (and `HOME`), where relative paths resolve.
pub const WORKDIR: &str = "/workspace";
/// E2B's home directory: the working directory's filesystem mounted a second time, so E2B
/// code finds its `/home/user` writable with the same files, size cap and confinement.
pub const HOME_DIR: &str = "/home/user";

/// The places below which a volume may be mounted: the sandbox's own writable places, never
/// the agent's or the system's.
pub const VOLUME_PLACES: &[&str] = &[WORKDIR, HOME_DIR, "/tmp"];

/// What to start: everything here comes from the operator's config, never from a client,
/// except the volumes, which the core checked (the caller's own, at a path below
/// [`VOLUME_PLACES`]).
#[derive(Debug, Clone)]
pub struct SandboxSpec {
    pub session_id: String,
    pub runtime: String,
    pub image: String,
    pub limits: Limits,
    pub volumes: Vec<VolumeMount>,
    /// A copy of another sandbox's memory and processes ([`Backend::copy_memory`]) this one
    /// starts from, instead of booting afresh.
    pub memory_from: Option<String>,
}

/// A volume mounted in a sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeMount {
    /// The service's id of the volume (not its name, which only its tenant's).
    pub volume_id: String,
    /// Where in the sandbox.
    pub path: String,
    pub read_only: bool,
}

/// What to do at a path of a volume from the host, besides reading or writing a file
/// ([`Backend::open_volume_file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumePathOp {
    /// The entry itself.
    Stat,
    /// A directory's entries, `depth` levels down (1: its own), at most `max` of them.
    List { depth: u32, max: usize },
    /// Makes a directory (and its missing parents when `parents`).
    MakeDir { parents: bool },
    /// Removes a file, or a directory with everything in it.
    Remove,
}

/// An entry of a volume as the host sees it, never followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeEntry {
    /// From the volume's root, starting with `/`.
    pub path: String,
    pub kind: VolumeEntryKind,
    pub size: u64,
    /// The permission bits.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// Seconds since the epoch.
    pub accessed: i64,
    pub modified: i64,
    pub changed: i64,
    /// Where a symlink points, as written in it.
    pub target: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumeEntryKind {
    File,
    Directory,
    Symlink,
    Other,
}

/// A started sandbox, as the backend knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    pub session_id: String,
    /// The platform's own id (a container id for Docker).
    pub backend_id: String,
}

/// A sandbox found on the platform that belongs to this service instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExistingSandbox {
    pub sandbox: Sandbox,
    pub runtime: String,
    /// Started and not stopped; a paused sandbox is running too.
    pub running: bool,
    /// Frozen by [`Backend::pause`]: its agent cannot answer until it is resumed.
    pub paused: bool,
    /// Paused with its memory and processes on disk ([`Paused::OnDisk`]), the bytes of its
    /// image: the platform shows it stopped, and it is counted running and paused.
    pub memory_on_disk: Option<u64>,
}

/// Where [`Backend::pause`] left a sandbox's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paused {
    /// Frozen in place: its memory stays in RAM.
    Frozen,
    /// Its memory and processes written to disk (`bytes` of checkpoint image) and its RAM
    /// released; [`Backend::resume`] restores them.
    OnDisk { bytes: u64 },
}

/// Live resource use of one sandbox, read from the platform (not from the sandbox).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub memory_bytes: u64,
    /// The ceiling `memory_bytes` counts against, where the platform sets one: the runtime's
    /// memory, and on gVisor also its kernel's own memory and its memory-backed places.
    pub memory_limit_bytes: Option<u64>,
    pub processes: u64,
}

/// The image a runtime's sandboxes start from, and how to make it when the platform lacks it.
#[derive(Debug, Clone)]
pub struct ImageRequest {
    pub image: String,
    /// How to build it; without a build, a missing image can only be pulled.
    pub build: Option<ImageBuild>,
}

/// A recipe build: a Dockerfile and the files beside it, on top of a base image.
#[derive(Debug, Clone)]
pub struct ImageBuild {
    /// The recipe's name and the hash of its content, recorded on the image.
    pub recipe: String,
    pub hash: String,
    /// The image the Dockerfile starts FROM, made available (pulled) first if it can be.
    pub base: String,
    pub dockerfile: String,
    /// Files the Dockerfile may COPY: (name, contents).
    pub context: Vec<(String, Arc<[u8]>)>,
    /// The longest the build may take.
    pub timeout: Duration,
}

/// How far a pull or build is, as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageProgress {
    /// The build step under way (from 1) and how many there are, when building.
    pub step: Option<(u32, u32)>,
    /// The latest line of output.
    pub line: String,
}

/// A byte stream to a sandbox's agent, which answers one request after another on it.
pub trait AgentIo: AsyncRead + AsyncWrite + Unpin + Send {
    /// Hands the connection back for a later request. Only after a request that ended
    /// cleanly: its answer read to the end and nothing half-written. Dropping it instead
    /// closes it.
    fn reuse(self: Box<Self>);
}
pub type AgentStream = Box<dyn AgentIo>;

/// The dial-in connections any backend can hand out (see [`sandboxd_agent_proto::AgentHub`]).
impl AgentIo for sandboxd_agent_proto::AgentLease {
    fn reuse(self: Box<Self>) {
        self.give_back();
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    #[error("image \"{image}\" is not available: {hint}")]
    ImageMissing { image: String, hint: String },
    #[error("the container engine is unavailable: {0}")]
    EngineUnavailable(String),
    #[error("sandbox {0} no longer exists")]
    SandboxGone(String),
    #[error("the sandbox agent is not answering: {0}")]
    AgentUnavailable(String),
    #[error("the container engine refused: {0}")]
    Engine(String),
    #[error("{0}")]
    Setup(String),
    /// The backend cannot do this at all (a pod cannot be frozen): not a failure of the moment.
    #[error("{0}")]
    Unsupported(String),
    /// The host has no room for what was asked (a checkpoint image on a full disk).
    #[error("{0}")]
    NoRoom(String),
}

fn no_volumes(id: &str) -> BackendError {
    BackendError::Setup(format!("volume {id}: this backend keeps no volumes"))
}

#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Starts a sandbox and returns once its agent is ready to take requests.
    async fn create(&self, spec: &SandboxSpec) -> Result<Sandbox, BackendError>;

    /// Takes back a sandbox that was started before this service process (after a restart),
    /// returning once its agent is reachable again.
    async fn adopt(&self, sandbox: &Sandbox) -> Result<(), BackendError>;

    /// The first, immediate step of taking back a sandbox started before this service
    /// process: from here on, requests to it wait for its agent instead of failing, so the
    /// service can serve before [`Backend::adopt`] has seen every agent back. Nothing by
    /// default.
    fn reattach(&self, _sandbox: &Sandbox) {}

    /// Called once the sandboxes of the last run are reattached: the backend may now do in
    /// the background what makes their agents reachable again (the Docker backend binds their
    /// sockets, then calls the agents back), while the service serves. Nothing by default.
    fn call_agents_back(&self) {}

    /// Takes back a sandbox that was paused when this service process started: its frozen
    /// agent cannot dial back, so this returns at once and [`Backend::resume`] waits for it.
    async fn adopt_paused(&self, sandbox: &Sandbox) -> Result<(), BackendError>;

    /// Pauses every process of the sandbox: it uses no CPU and keeps its memory, processes
    /// and files, frozen in RAM or, where the platform can (gVisor on Docker), written to
    /// disk with its RAM released. A pause that fails (a full disk, a failed checkpoint)
    /// leaves the sandbox running. Pausing a paused sandbox is no error.
    async fn pause(&self, sandbox: &Sandbox) -> Result<Paused, BackendError>;

    /// Thaws or restores a paused sandbox and returns once its agent takes requests again,
    /// with the bytes of checkpoint image it was restored from (none when it was frozen).
    /// Resuming a running sandbox is no error.
    async fn resume(&self, sandbox: &Sandbox) -> Result<Option<u64>, BackendError>;

    /// Writes a copy of the running sandbox's memory and processes, kept as `copy_id`, for
    /// sandboxes of the same runtime to start from ([`SandboxSpec::memory_from`]); the
    /// sandbox keeps running. Returns the copy's bytes. Where the platform cannot (a runc
    /// sandbox, a pod), [`BackendError::Unsupported`], the default.
    async fn copy_memory(&self, sandbox: &Sandbox, _copy_id: &str) -> Result<u64, BackendError> {
        Err(BackendError::Unsupported(format!(
            "sandbox {}: this platform keeps no copy of a sandbox's memory",
            sandbox.session_id
        )))
    }

    /// Removes a copy of memory; none is no error.
    fn remove_memory_copy(&self, _copy_id: &str) {}

    /// The directories of a sandbox its processes can write, all of them: what a snapshot
    /// keeps.
    fn writable_places(&self) -> Vec<String>;

    /// Removes a sandbox at once (no grace period); removing one that is gone is not an error.
    async fn destroy(&self, sandbox: &Sandbox) -> Result<(), BackendError>;

    /// A connection to the sandbox's agent, ready for a request.
    async fn agent(&self, sandbox: &Sandbox) -> Result<AgentStream, BackendError>;

    async fn usage(&self, sandbox: &Sandbox) -> Result<Usage, BackendError>;

    /// Whether the kernel killed a process of a stopped sandbox for want of memory, as far
    /// as the platform knows: what ended it, when its agent was among them. False by default.
    async fn ran_out_of_memory(&self, _sandbox: &Sandbox) -> bool {
        false
    }

    /// The sandboxes of this service instance that exist on the platform.
    async fn list(&self) -> Result<Vec<ExistingSandbox>, BackendError>;

    /// Word from the platform that sandboxes of this instance stopped or went: a message each
    /// time (coalesced: one may stand for many), the channel closing when the watch broke, so
    /// the service lists ([`Backend::list`]) on word instead of all the time. `None` where the
    /// platform gives no such word; the service then lists every second.
    fn watch_stops(&self) -> Option<tokio::sync::mpsc::Receiver<()>> {
        None
    }

    /// Whether this backend keeps volumes ([`Backend::create_volume`] and the rest); when
    /// not, the service refuses them before asking. False by default.
    fn offers_volumes(&self) -> bool {
        false
    }

    /// Whether volumes can be mounted into a started sandbox of these limits
    /// ([`Backend::mount_volumes`]), so that a session with volumes can come from a warm
    /// pool. False by default.
    fn mounts_into_started(&self, _limits: &Limits) -> bool {
        false
    }

    /// Mounts volumes into a started sandbox, one that no client used yet (from a warm pool),
    /// as [`Backend::create`] would have with them in its spec.
    async fn mount_volumes(
        &self,
        sandbox: &Sandbox,
        _mounts: &[VolumeMount],
    ) -> Result<(), BackendError> {
        Err(no_volumes(&sandbox.session_id))
    }

    /// Makes a volume's storage with a hard cap of `size_bytes`, its root owned by the
    /// sandboxes' uid, ready to mount. What a crash left of an earlier try is replaced.
    async fn create_volume(&self, id: &str, _size_bytes: u64) -> Result<(), BackendError> {
        Err(no_volumes(id))
    }

    /// Makes a volume made earlier ready to mount again (after a restart or a reboot);
    /// nothing when it is.
    async fn restore_volume(&self, id: &str) -> Result<(), BackendError> {
        Err(no_volumes(id))
    }

    /// Removes a volume's storage and data; removing one that is gone is not an error.
    async fn remove_volume(&self, id: &str) -> Result<(), BackendError> {
        Err(no_volumes(id))
    }

    /// The ids of the volumes whose storage exists, to remove what no record has.
    async fn list_volumes(&self) -> Result<Vec<String>, BackendError> {
        Ok(Vec::new())
    }

    /// Bytes a volume's files take now, where the backend can tell.
    async fn volume_used_bytes(&self, _id: &str) -> Option<u64> {
        None
    }

    /// Opens a file of a volume from the host, confined to the volume: no symlink followed,
    /// no other filesystem reached, missing directories made when `write`. `None` where
    /// the backend cannot reach a volume's files without a sandbox.
    fn open_volume_file(
        &self,
        _id: &str,
        _path: &str,
        _write: bool,
    ) -> Option<std::io::Result<std::fs::File>> {
        None
    }

    /// Does `op` at `path` of a volume from the host, confined like
    /// [`Backend::open_volume_file`]: the entries it concerns (none for a removal). `None`
    /// where the backend cannot reach a volume's files without a sandbox.
    fn volume_path(
        &self,
        _id: &str,
        _path: &str,
        _op: VolumePathOp,
    ) -> Option<std::io::Result<Vec<VolumeEntry>>> {
        None
    }

    /// Whether the platform has the image now, without pulling or building it.
    async fn has_image(&self, image: &str) -> Result<bool, BackendError>;

    /// Makes the image available, trying in order: it is there; it can be pulled; it can be
    /// built from `request.build`. Reports progress as it goes and returns the reference to
    /// start sandboxes from. When nothing works, the error names the image, what was tried and
    /// what the operator can do ([`BackendError::ImageMissing`]).
    async fn ensure_image(
        &self,
        request: &ImageRequest,
        progress: &(dyn Fn(ImageProgress) + Send + Sync),
    ) -> Result<String, BackendError>;
}
