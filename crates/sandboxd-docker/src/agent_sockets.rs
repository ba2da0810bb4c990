//! The sandboxes' agent sockets: each sandbox has a directory of its own under the socket
//! root, mounted into it, where a hub listens for its agent.
//!
//! The sandboxes of the last run are taken back before their sockets are bound again: on a
//! busy host, binding thousands (with their directory checks and hand-overs) takes seconds,
//! which the service would otherwise spend not serving. They are bound in the background
//! instead, and a call that needs one not yet bound binds it first, or waits for the binding
//! under way.

use crate::access::{self, SandboxAccess};
use sandboxd_agent_proto::host::{wake_agent, AgentKey};
use sandboxd_agent_proto::AgentHub;
use sandboxd_backend::BackendError;
use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// The longest path a unix socket address can hold.
const MAX_SOCKET_PATH: usize = 107;
/// Threads binding the sockets taken back, at most: binding is mostly system calls, which
/// a few threads overlap.
const BINDING_THREADS: usize = 4;

pub(crate) struct AgentSockets {
    root: PathBuf,
    key: AgentKey,
    /// Whether files can be given to the sandboxes' uid, for directories left loose.
    service_is_root: bool,
    slots: Mutex<HashMap<String, Slot>>,
    /// Woken each time a binding ends, bound or not.
    settled: Notify,
}

enum Slot {
    Open(Arc<AgentHub>),
    /// Taken back from the last run, its socket not bound again yet.
    TakenBack,
    /// Being bound again, by the background binding or by a call that needed it first.
    Binding,
}

/// What a look at a session's slot found.
enum Found {
    Open(Arc<AgentHub>),
    /// The caller set it [`Slot::Binding`] and must bind it.
    ToBind,
    Binding,
    Nothing,
}

impl AgentSockets {
    pub fn new(root: PathBuf, key: AgentKey, service_is_root: bool) -> AgentSockets {
        AgentSockets {
            root,
            key,
            service_is_root,
            slots: Mutex::new(HashMap::new()),
            settled: Notify::new(),
        }
    }

    /// The session's directory on the host.
    pub fn dir(&self, session_id: &str) -> PathBuf {
        self.root.join(session_id)
    }

    /// Beside (not in: that is the sandbox's) the session's directory, the session whose
    /// secret its agent proves, when not its own.
    fn secret_of_file(&self, session_id: &str) -> PathBuf {
        self.root.join(format!("{session_id}.secret-of"))
    }

    /// The session whose secret the session's agent proves: its own, or for a sandbox started
    /// from a copy of memory, the one whose agent it was copied from.
    pub fn secret_owner(&self, session_id: &str) -> String {
        std::fs::read_to_string(self.secret_of_file(session_id))
            .ok()
            .filter(|owner| !owner.is_empty() && owner.len() <= 64)
            .unwrap_or_else(|| session_id.to_string())
    }

    /// A fresh directory for a new sandbox, holding the secret file its agent reads at start,
    /// and the hub listening there, handed to its agent with `access`. A sandbox started from
    /// a copy of another's memory has `secret_of` that other's (or its source's) session: its
    /// agent proves the secret it knew there, and reads no file.
    pub fn open_new(
        &self,
        session_id: &str,
        access: SandboxAccess,
        secret_of: Option<&str>,
    ) -> Result<Arc<AgentHub>, BackendError> {
        if let Some(owner) = secret_of {
            let file = self.secret_of_file(session_id);
            std::fs::write(&file, owner).map_err(|e| {
                BackendError::Setup(format!("cannot write {}: {e}", file.display()))
            })?;
        }
        let hub = self.bind(session_id, Some(access))?;
        self.lock()
            .insert(session_id.to_string(), Slot::Open(hub.clone()));
        Ok(hub)
    }

    /// Takes back a sandbox of the last run: its socket is bound again by
    /// [`AgentSockets::bind_taken_back`], or by the first [`AgentSockets::hub`] call for it.
    pub fn take_back(&self, session_id: &str) {
        self.lock()
            .entry(session_id.to_string())
            .or_insert(Slot::TakenBack);
    }

    /// Binds the sockets of the sandboxes taken back in the background, on a few threads,
    /// then calls their agents back all at once: an agent called while the others are still
    /// being bound takes the CPU from them, and a request waiting for one agent waits for
    /// its turn in the binding. Must be called inside a Tokio runtime.
    pub fn bind_taken_back(self: &Arc<Self>) {
        let sockets = self.clone();
        // The hubs' accept tasks are spawned on it from the binding threads.
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let taken_back: Vec<String> = sockets
                .lock()
                .iter()
                .filter(|(_, slot)| matches!(slot, Slot::TakenBack))
                .map(|(id, _)| id.clone())
                .collect();
            if taken_back.is_empty() {
                return;
            }
            let threads = std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .clamp(1, BINDING_THREADS);
            let share = taken_back.len().div_ceil(threads);
            let bound: Vec<Arc<AgentHub>> = std::thread::scope(|scope| {
                let binding: Vec<_> = taken_back
                    .chunks(share)
                    .map(|ids| {
                        scope.spawn(|| {
                            let _runtime = runtime.enter();
                            sockets.bind_unclaimed(ids)
                        })
                    })
                    .collect();
                binding
                    .into_iter()
                    .flat_map(|thread| {
                        thread.join().unwrap_or_else(|_| {
                            tracing::error!("a thread binding agent sockets taken back panicked");
                            Vec::new()
                        })
                    })
                    .collect()
            });
            for hub in &bound {
                wake_agent(hub.path());
            }
            tracing::info!(
                taken_back = taken_back.len(),
                bound_here = bound.len(),
                threads,
                millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                "bound the agent sockets of the sandboxes taken back, and called their agents"
            );
        });
    }

    /// Binds those of `ids` no call has claimed (a call that needed one bound it itself).
    fn bind_unclaimed(&self, ids: &[String]) -> Vec<Arc<AgentHub>> {
        ids.iter()
            .filter(|id| matches!(self.look(id), Found::ToBind))
            .filter_map(|id| self.bind_claimed(id).ok())
            .collect()
    }

    /// The session's hub: a socket taken back and not yet bound is bound first (and its agent
    /// called), one being bound is waited for. `None` when the session has none (closed, its
    /// directory gone, or never opened or taken back).
    pub async fn hub(&self, session_id: &str) -> Result<Option<Arc<AgentHub>>, BackendError> {
        loop {
            let settled = self.settled.notified();
            tokio::pin!(settled);
            // Registered before looking, so a binding ending in between wakes us.
            settled.as_mut().enable();
            match self.look(session_id) {
                Found::Open(hub) => return Ok(Some(hub)),
                Found::Nothing => return Ok(None),
                Found::ToBind => {
                    let hub = self.bind_claimed(session_id)?;
                    wake_agent(hub.path());
                    return Ok(Some(hub));
                }
                Found::Binding => settled.await,
            }
        }
    }

    /// Stops listening for the session's agent and removes its directory.
    pub fn close(&self, session_id: &str) {
        if let Some(Slot::Open(hub)) = self.lock().remove(session_id) {
            hub.close();
        }
        self.remove_dir(session_id);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().expect("agent socket slots lock")
    }

    /// The session's slot; one taken back is claimed for the caller to bind.
    fn look(&self, session_id: &str) -> Found {
        let mut slots = self.lock();
        match slots.get_mut(session_id) {
            Some(Slot::Open(hub)) => Found::Open(hub.clone()),
            Some(Slot::Binding) => Found::Binding,
            Some(slot @ Slot::TakenBack) => {
                *slot = Slot::Binding;
                Found::ToBind
            }
            None => Found::Nothing,
        }
    }

    /// Binds a socket the caller claimed and settles its slot: open, or gone when the binding
    /// failed or the session was closed meanwhile (whose directory this then removes again,
    /// since the binding may have come after the close removed it).
    fn bind_claimed(&self, session_id: &str) -> Result<Arc<AgentHub>, BackendError> {
        let claim = Claim {
            sockets: self,
            session_id,
        };
        let hub = self.bind(session_id, None)?;
        if claim.open(&hub) {
            return Ok(hub);
        }
        hub.close();
        self.remove_dir(session_id);
        Err(BackendError::SandboxGone(format!(
            "{session_id}: it was closed while its agent socket was bound again"
        )))
    }

    /// Listens for the session's agent in its directory. A new sandbox gets a fresh directory
    /// holding the secret file its agent reads at start, handed over with `new_with`; one
    /// taken back keeps the directory its container has mounted, since a new one would not be
    /// visible inside, and its agent still knows the secret; it keeps its access too.
    fn bind(
        &self,
        session_id: &str,
        new_with: Option<SandboxAccess>,
    ) -> Result<Arc<AgentHub>, BackendError> {
        let dir = self.dir(session_id);
        let socket = dir.join("agent.sock");
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(BackendError::Setup(format!(
                "the agent socket path {} is longer than a unix socket allows; use a shorter --state-dir",
                socket.display()
            )));
        }
        let setup = |e: std::io::Error| {
            BackendError::Setup(format!("cannot prepare {}: {e}", dir.display()))
        };
        let owner = self.secret_owner(session_id);
        let secret = self.key.secret_for(&owner);
        let access = if let Some(access) = new_with {
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(setup)?;
            }
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&dir)
                .map_err(setup)?;
            access.hand_over_dir(&dir).map_err(setup)?;
            if owner == session_id {
                access.write_secret(&dir, &secret).map_err(setup)?;
            }
            access.make_wake(&socket).map_err(setup)?;
            access
        } else if let Some(found) = std::fs::symlink_metadata(&dir).ok().filter(|m| m.is_dir()) {
            let access = SandboxAccess::of_last_run(&found, self.service_is_root);
            access.hand_back_dir(&dir, &found).map_err(setup)?;
            access
        } else {
            return Err(BackendError::SandboxGone(format!(
                "{session_id}: its agent socket directory {} is gone",
                dir.display()
            )));
        };
        let hub = AgentHub::bind(&socket, secret).map_err(setup)?;
        if let Err(e) = access.hand_over_socket(&socket) {
            hub.close();
            return Err(setup(e));
        }
        Ok(hub)
    }

    /// Removes the secret file once the agent has said hello: see [`access::remove_secret`].
    pub fn remove_secret(&self, session_id: &str) -> Result<(), BackendError> {
        let dir = self.dir(session_id);
        access::remove_secret(&dir).map_err(|e| {
            BackendError::Setup(format!(
                "cannot remove the agent secret file in {}: {e}",
                dir.display()
            ))
        })
    }

    fn remove_dir(&self, session_id: &str) {
        let _ = std::fs::remove_file(self.secret_of_file(session_id));
        let dir = self.dir(session_id);
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot remove agent socket directory");
            }
        }
    }
}

/// A slot claimed for binding, settled when dropped: gone unless [`Claim::open`] opened it, so
/// no call waits for it forever, whether the binding failed, panicked or succeeded.
struct Claim<'a> {
    sockets: &'a AgentSockets,
    session_id: &'a str,
}

impl Claim<'_> {
    /// Opens the slot with `hub`, unless the session was closed meanwhile.
    fn open(&self, hub: &Arc<AgentHub>) -> bool {
        match self.sockets.lock().get_mut(self.session_id) {
            Some(slot @ Slot::Binding) => {
                *slot = Slot::Open(hub.clone());
                true
            }
            _ => false,
        }
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        // Not `lock()`: a poisoned lock must not panic again while unwinding.
        if let Ok(mut slots) = self.sockets.slots.lock() {
            if matches!(slots.get(self.session_id), Some(Slot::Binding)) {
                slots.remove(self.session_id);
            }
        }
        self.sockets.settled.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandboxd_agent_proto::host::make_wake_fifo;
    use std::fs::OpenOptions;
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::time::Duration;

    /// A socket root with the directories of `sessions` as a killed service leaves them: a
    /// stale socket nobody listens on, and the wake FIFO, read here as the agent would.
    fn left_by_the_last_run(
        sessions: &[&str],
    ) -> (tempfile::TempDir, AgentSockets, Vec<std::fs::File>) {
        let root = tempfile::tempdir().unwrap();
        let key = AgentKey::load_or_create(root.path()).unwrap();
        let sockets = AgentSockets::new(root.path().to_path_buf(), key, false);
        let fifos = sessions
            .iter()
            .map(|id| {
                let dir = sockets.dir(id);
                std::fs::create_dir(&dir).unwrap();
                drop(UnixListener::bind(dir.join("agent.sock")).unwrap());
                let fifo = make_wake_fifo(&dir.join("agent.sock")).unwrap();
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(fifo)
                    .unwrap()
            })
            .collect();
        (root, sockets, fifos)
    }

    fn listens(sockets: &AgentSockets, id: &str) -> bool {
        UnixStream::connect(sockets.dir(id).join("agent.sock")).is_ok()
    }

    fn woken(fifo: &mut std::fs::File) -> usize {
        let mut bytes = [0; 8];
        fifo.read(&mut bytes).unwrap_or(0)
    }

    #[tokio::test]
    async fn a_socket_taken_back_is_bound_by_the_first_call_that_needs_it() {
        let (_root, sockets, mut fifos) = left_by_the_last_run(&["s1"]);
        sockets.take_back("s1");
        assert!(!listens(&sockets, "s1"), "taking back binds nothing");

        let hub = sockets.hub("s1").await.unwrap().expect("bound on demand");
        assert!(listens(&sockets, "s1"));
        assert_eq!(woken(&mut fifos[0]), 1, "its agent is called");
        let again = sockets.hub("s1").await.unwrap().unwrap();
        assert!(Arc::ptr_eq(&hub, &again), "bound once");
        assert_eq!(woken(&mut fifos[0]), 0);
        assert!(sockets.hub("never-opened").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn the_background_binding_binds_every_socket_taken_back_then_calls_their_agents() {
        let ids = ["s1", "s2", "s3"];
        let (_root, sockets, mut fifos) = left_by_the_last_run(&ids);
        let sockets = Arc::new(sockets);
        for id in ids {
            sockets.take_back(id);
        }
        sockets.bind_taken_back();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !ids.iter().all(|id| listens(&sockets, id)) {
            assert!(
                std::time::Instant::now() < deadline,
                "not all bound in 10 s"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut calls = vec![0; ids.len()];
        while calls.contains(&0) {
            assert!(
                std::time::Instant::now() < deadline,
                "not all called: {calls:?}"
            );
            for (fifo, calls) in fifos.iter_mut().zip(calls.iter_mut()) {
                *calls += woken(fifo);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(calls, [1, 1, 1], "each agent called once");
    }

    type HubCall = tokio::task::JoinHandle<Result<Option<Arc<AgentHub>>, BackendError>>;

    /// Session `s1` taken back and claimed for binding, and a call for its hub.
    fn claimed_with_a_call_waiting() -> (tempfile::TempDir, Arc<AgentSockets>, HubCall) {
        let (root, sockets, _fifos) = left_by_the_last_run(&["s1"]);
        let sockets = Arc::new(sockets);
        sockets.take_back("s1");
        assert!(matches!(sockets.look("s1"), Found::ToBind));
        let waiting = tokio::spawn({
            let sockets = sockets.clone();
            async move { sockets.hub("s1").await }
        });
        (root, sockets, waiting)
    }

    #[tokio::test]
    async fn a_call_waits_for_the_binding_under_way() {
        let (_root, sockets, waiting) = claimed_with_a_call_waiting();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiting.is_finished(),
            "a call does not bind what another binds"
        );
        let bound = sockets.bind_claimed("s1").unwrap();
        let got = waiting
            .await
            .unwrap()
            .unwrap()
            .expect("the hub bound meanwhile");
        assert!(Arc::ptr_eq(&bound, &got));
    }

    #[tokio::test]
    async fn a_binding_that_panics_leaves_no_call_waiting() {
        let (_root, sockets, waiting) = claimed_with_a_call_waiting();
        // Outside a Tokio runtime the hub cannot start accepting: the binding panics.
        let binding = std::thread::spawn({
            let sockets = sockets.clone();
            move || drop(sockets.bind_claimed("s1"))
        });
        assert!(binding.join().is_err(), "the binding panicked");
        let got = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the waiting call ended")
            .unwrap()
            .unwrap();
        assert!(got.is_none(), "the slot is gone");
    }

    #[tokio::test]
    async fn a_session_closed_while_its_socket_is_bound_again_stays_closed() {
        let (_root, sockets, _fifos) = left_by_the_last_run(&["s1"]);
        sockets.take_back("s1");
        assert!(matches!(sockets.look("s1"), Found::ToBind));
        sockets.close("s1");
        // The close removed the directory; the binding under way makes a new one's socket.
        std::fs::create_dir(sockets.dir("s1")).unwrap();

        let error = sockets.bind_claimed("s1").unwrap_err();
        assert!(matches!(error, BackendError::SandboxGone(_)), "{error}");
        assert!(!sockets.dir("s1").exists(), "removed again");
        assert!(sockets.hub("s1").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_session_taken_back_without_its_directory_has_no_hub() {
        let (_root, sockets, _fifos) = left_by_the_last_run(&[]);
        sockets.take_back("s1");
        let error = sockets.hub("s1").await.unwrap_err();
        assert!(error.to_string().contains("is gone"), "{error}");
        assert!(sockets.hub("s1").await.unwrap().is_none(), "forgotten");
    }
}
