//! The sandbox backend trait: what the service needs from a container platform.
//!
//! A backend starts and removes sandboxes, reports their resource use and hands out
//! connections to the in-sandbox agent. Everything a sandbox does (commands, files) goes
//! through the agent's protocol, so a new platform (Kubernetes is next) implements only
//! this trait.

use sandboxd_api::Limits;
use tokio::io::{AsyncRead, AsyncWrite};

/// What to start: everything here comes from the operator's config, never from a client.
#[derive(Debug, Clone)]
pub struct SandboxSpec {
    pub session_id: String,
    pub runtime: String,
    pub image: String,
    pub limits: Limits,
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
    pub running: bool,
}

/// Live resource use of one sandbox, read from the platform (not from the sandbox).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub memory_bytes: u64,
    pub processes: u64,
}

/// A byte stream to a sandbox's agent.
pub trait AgentIo: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> AgentIo for T {}
pub type AgentStream = Box<dyn AgentIo>;

#[derive(Debug, thiserror::Error)]
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
}

#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Starts a sandbox and returns once its agent is ready to take requests.
    async fn create(&self, spec: &SandboxSpec) -> Result<Sandbox, BackendError>;

    /// Takes back a sandbox that was started before this service process (after a restart),
    /// returning once its agent is reachable again.
    async fn adopt(&self, sandbox: &Sandbox) -> Result<(), BackendError>;

    /// Removes a sandbox at once (no grace period); removing one that is gone is not an error.
    async fn destroy(&self, sandbox: &Sandbox) -> Result<(), BackendError>;

    /// A fresh connection to the sandbox's agent, for one request.
    async fn agent(&self, sandbox: &Sandbox) -> Result<AgentStream, BackendError>;

    async fn usage(&self, sandbox: &Sandbox) -> Result<Usage, BackendError>;

    /// The sandboxes of this service instance that exist on the platform.
    async fn list(&self) -> Result<Vec<ExistingSandbox>, BackendError>;
}
