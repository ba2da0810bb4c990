//! The fake platform: sandboxes as entries of a map, each with its files, whose agent
//! connections are in-memory pipes to the fake agent.

use super::agent::{self, ArchiveGate, Files};
use async_trait::async_trait;
use sandboxd_api::Limits;
use sandboxd_backend::{
    AgentIo, AgentStream, Backend, BackendError, ExistingSandbox, ImageProgress, ImageRequest,
    Paused, Sandbox, SandboxSpec, Usage, VolumeMount, WORKDIR,
};
use std::collections::{BTreeMap, HashSet};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};

#[derive(Default)]
struct State {
    /// Running sandboxes by session id, with their files.
    sandboxes: BTreeMap<String, (Sandbox, String, Files)>,
    /// Images the platform has.
    images: HashSet<String>,
    /// Sandboxes that stopped (as if their container exited), still listed.
    stopped: HashSet<String>,
    /// Sandboxes that are paused: their agent does not answer.
    paused: HashSet<String>,
    /// Of those, the ones paused to disk.
    on_disk: HashSet<String>,
    /// Volumes the platform keeps, by id.
    volumes: HashSet<String>,
    /// Per session: the paths its volumes are mounted at, at its create or later.
    mounted: BTreeMap<String, Vec<String>>,
}

/// The fake platform. Its knobs let a test make creates fail, images go missing or a sandbox
/// vanish.
#[derive(Default)]
pub struct FakeBackend {
    state: Mutex<State>,
    /// Creates that fail from now on, with an engine error.
    pub failing_creates: AtomicU32,
    /// Creates made, successful or not.
    pub creates: AtomicU32,
    /// How long a create takes.
    pub create_delay: Mutex<Duration>,
    /// How long taking back a sandbox takes (its agent dialing back).
    pub adopt_delay: Mutex<Duration>,
    /// Read by every listing: held for writing, it keeps listings waiting as a slow engine does.
    listing: Arc<tokio::sync::RwLock<()>>,
    /// Per session: held for writing, its archives wait as a starved agent's do.
    archives: Mutex<BTreeMap<String, Arc<tokio::sync::RwLock<()>>>>,
    /// Archives waiting for their session's hold to go.
    pub archives_waiting: Arc<AtomicU32>,
    /// Connections the service handed back for another request ([`AgentIo::reuse`]); each is
    /// closed here, as a new one costs nothing.
    pub reused: Arc<AtomicU32>,
    /// Set, pauses go to disk as on gVisor with a checkpoint image of this many bytes; zero,
    /// they are refused for want of room; unset, they freeze.
    pub disk_pauses: Mutex<Option<u64>>,
    /// Set, the platform keeps volumes and mounts them into started sandboxes too (as Docker's
    /// runc does); unset, it keeps none.
    pub volumes: AtomicBool,
    /// Mounts into started sandboxes that fail from now on.
    pub failing_mounts: AtomicU32,
}

impl FakeBackend {
    /// A platform that has these images.
    pub fn with_images(images: &[&str]) -> Arc<FakeBackend> {
        let backend = FakeBackend::default();
        backend.state().images = images.iter().map(|i| i.to_string()).collect();
        Arc::new(backend)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("fake backend lock")
    }

    /// The sandboxes that run now.
    pub fn running(&self) -> usize {
        let state = self.state();
        state.sandboxes.len() - state.stopped.len()
    }

    /// Stops a sandbox as if its container exited on its own.
    pub fn stop(&self, session_id: &str) {
        self.state().stopped.insert(session_id.to_string());
    }

    /// Whether the sandbox is paused now.
    pub fn is_paused(&self, session_id: &str) -> bool {
        self.state().paused.contains(session_id)
    }

    /// Keeps every listing waiting until the guard is dropped.
    pub fn hold_listings(&self) -> tokio::sync::OwnedRwLockWriteGuard<()> {
        self.listing
            .clone()
            .try_write_owned()
            .expect("listings are held once at a time")
    }

    /// Keeps the session's archives (of snapshots) waiting until the guard is dropped.
    pub fn hold_archives(&self, session_id: &str) -> tokio::sync::OwnedRwLockWriteGuard<()> {
        let mut archives = self.archives.lock().expect("archives lock");
        let hold = archives.entry(session_id.to_string()).or_default().clone();
        hold.try_write_owned()
            .expect("archives are held once at a time")
    }

    /// The paths a sandbox has volumes mounted at.
    pub fn mounted(&self, session_id: &str) -> Vec<String> {
        self.state()
            .mounted
            .get(session_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Removes a sandbox behind the service's back.
    pub fn vanish(&self, session_id: &str) {
        self.state().sandboxes.remove(session_id);
    }
}

#[async_trait]
impl Backend for FakeBackend {
    async fn create(&self, spec: &SandboxSpec) -> Result<Sandbox, BackendError> {
        self.creates.fetch_add(1, Ordering::SeqCst);
        let delay = *self.create_delay.lock().expect("delay lock");
        tokio::time::sleep(delay).await;
        if take_one(&self.failing_creates) {
            return Err(BackendError::Engine("the fake engine refused".into()));
        }
        if !self.state().images.contains(&spec.image) {
            return Err(BackendError::ImageMissing {
                image: spec.image.clone(),
                hint: "the fake platform has no such image".into(),
            });
        }
        let sandbox = Sandbox {
            session_id: spec.session_id.clone(),
            backend_id: format!("fake-{}", spec.session_id),
        };
        let mut state = self.state();
        // As an engine refuses a second container of the same name.
        if state.sandboxes.contains_key(&spec.session_id) {
            return Err(BackendError::Engine(format!(
                "the fake engine has a sandbox of session {} already",
                spec.session_id
            )));
        }
        state.sandboxes.insert(
            spec.session_id.clone(),
            (sandbox.clone(), spec.runtime.clone(), Files::default()),
        );
        let paths = spec.volumes.iter().map(|m| m.path.clone()).collect();
        state.mounted.insert(spec.session_id.clone(), paths);
        drop(state);
        Ok(sandbox)
    }

    async fn adopt(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        let delay = *self.adopt_delay.lock().expect("delay lock");
        tokio::time::sleep(delay).await;
        match self.state().sandboxes.contains_key(&sandbox.session_id) {
            true => Ok(()),
            false => Err(BackendError::SandboxGone(sandbox.session_id.clone())),
        }
    }

    async fn adopt_paused(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        self.adopt(sandbox).await
    }

    async fn pause(&self, sandbox: &Sandbox) -> Result<Paused, BackendError> {
        let disk = *self.disk_pauses.lock().expect("disk pauses lock");
        if disk == Some(0) {
            return Err(BackendError::NoRoom("the fake disk is full".into()));
        }
        self.set_paused(sandbox, true)?;
        let Some(bytes) = disk else {
            return Ok(Paused::Frozen);
        };
        self.state().on_disk.insert(sandbox.session_id.clone());
        Ok(Paused::OnDisk { bytes })
    }

    async fn resume(&self, sandbox: &Sandbox) -> Result<Option<u64>, BackendError> {
        self.set_paused(sandbox, false)?;
        let restored = self.state().on_disk.remove(&sandbox.session_id);
        Ok(restored
            .then(|| *self.disk_pauses.lock().expect("disk pauses lock"))
            .flatten())
    }

    fn writable_places(&self) -> Vec<String> {
        vec![WORKDIR.into(), "/tmp".into()]
    }

    async fn destroy(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        let mut state = self.state();
        state.sandboxes.remove(&sandbox.session_id);
        state.stopped.remove(&sandbox.session_id);
        state.paused.remove(&sandbox.session_id);
        state.mounted.remove(&sandbox.session_id);
        Ok(())
    }

    fn offers_volumes(&self) -> bool {
        self.volumes.load(Ordering::SeqCst)
    }

    fn mounts_into_started(&self, _limits: &Limits) -> bool {
        self.offers_volumes()
    }

    async fn mount_volumes(
        &self,
        sandbox: &Sandbox,
        mounts: &[VolumeMount],
    ) -> Result<(), BackendError> {
        if take_one(&self.failing_mounts) {
            return Err(BackendError::Engine(
                "the fake sandbox refused the mount".into(),
            ));
        }
        let mut state = self.state();
        if !state.sandboxes.contains_key(&sandbox.session_id) {
            return Err(BackendError::SandboxGone(sandbox.session_id.clone()));
        }
        let paths = state.mounted.entry(sandbox.session_id.clone()).or_default();
        paths.extend(mounts.iter().map(|m| m.path.clone()));
        Ok(())
    }

    async fn create_volume(&self, id: &str, _size_bytes: u64) -> Result<(), BackendError> {
        self.state().volumes.insert(id.to_string());
        Ok(())
    }

    async fn restore_volume(&self, id: &str) -> Result<(), BackendError> {
        match self.state().volumes.contains(id) {
            true => Ok(()),
            false => Err(BackendError::Engine(format!(
                "the fake volume {id} is gone"
            ))),
        }
    }

    async fn remove_volume(&self, id: &str) -> Result<(), BackendError> {
        self.state().volumes.remove(id);
        Ok(())
    }

    async fn list_volumes(&self) -> Result<Vec<String>, BackendError> {
        Ok(self.state().volumes.iter().cloned().collect())
    }

    async fn agent(&self, sandbox: &Sandbox) -> Result<AgentStream, BackendError> {
        let state = self.state();
        if state.stopped.contains(&sandbox.session_id) {
            return Err(BackendError::AgentUnavailable("the sandbox stopped".into()));
        }
        if state.paused.contains(&sandbox.session_id) {
            return Err(BackendError::AgentUnavailable(
                "the sandbox is paused".into(),
            ));
        }
        let Some((_, _, files)) = state.sandboxes.get(&sandbox.session_id) else {
            return Err(BackendError::SandboxGone(sandbox.session_id.clone()));
        };
        let (service_end, agent_end) = tokio::io::duplex(1 << 16);
        let archives = self.archives.lock().expect("archives lock");
        let hold = archives.get(&sandbox.session_id).cloned();
        drop(archives);
        let gate = ArchiveGate {
            hold,
            waiting: self.archives_waiting.clone(),
        };
        tokio::spawn(agent::serve(agent_end, files.clone(), gate));
        Ok(Box::new(FakeConnection(service_end, self.reused.clone())))
    }

    async fn usage(&self, sandbox: &Sandbox) -> Result<Usage, BackendError> {
        match self.state().sandboxes.contains_key(&sandbox.session_id) {
            true => Ok(Usage {
                memory_bytes: 1 << 20,
                memory_limit_bytes: None,
                processes: 1,
            }),
            false => Err(BackendError::SandboxGone(sandbox.session_id.clone())),
        }
    }

    async fn list(&self) -> Result<Vec<ExistingSandbox>, BackendError> {
        let _answering = self.listing.read().await;
        let image_bytes = self
            .disk_pauses
            .lock()
            .expect("disk pauses lock")
            .unwrap_or(0);
        let state = self.state();
        Ok(state
            .sandboxes
            .iter()
            .map(|(id, (sandbox, runtime, _))| ExistingSandbox {
                sandbox: sandbox.clone(),
                runtime: runtime.clone(),
                running: !state.stopped.contains(id),
                paused: state.paused.contains(id),
                memory_on_disk: state.on_disk.contains(id).then_some(image_bytes),
            })
            .collect())
    }

    async fn has_image(&self, image: &str) -> Result<bool, BackendError> {
        Ok(self.state().images.contains(image))
    }

    async fn ensure_image(
        &self,
        request: &ImageRequest,
        progress: &(dyn Fn(ImageProgress) + Send + Sync),
    ) -> Result<String, BackendError> {
        if self.state().images.contains(&request.image) {
            return Ok(request.image.clone());
        }
        if request.build.is_none() {
            return Err(BackendError::ImageMissing {
                image: request.image.clone(),
                hint: "nothing can be pulled on the fake platform".into(),
            });
        }
        progress(ImageProgress {
            step: Some((1, 1)),
            line: "building on the fake platform".into(),
        });
        self.state().images.insert(request.image.clone());
        Ok(request.image.clone())
    }
}

impl FakeBackend {
    fn set_paused(&self, sandbox: &Sandbox, paused: bool) -> Result<(), BackendError> {
        let mut state = self.state();
        if !state.sandboxes.contains_key(&sandbox.session_id) {
            return Err(BackendError::SandboxGone(sandbox.session_id.clone()));
        }
        if paused {
            state.paused.insert(sandbox.session_id.clone());
        } else {
            state.paused.remove(&sandbox.session_id);
        }
        Ok(())
    }
}

/// Takes one from a count of failures still to come; whether there was one.
fn take_one(failures: &AtomicU32) -> bool {
    failures
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

/// The service's end of a fake agent connection, and the count of those handed back.
struct FakeConnection(DuplexStream, Arc<AtomicU32>);

impl AgentIo for FakeConnection {
    fn reuse(self: Box<Self>) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

impl AsyncRead for FakeConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for FakeConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
