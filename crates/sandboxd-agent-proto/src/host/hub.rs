//! The host end of the dial-in pool for one sandbox.
//!
//! The agent inside the sandbox connects to a socket the service owns and keeps a few idle
//! connections open. The hub accepts them, checks each one's hello and parks it until a
//! request takes it. Every process in the sandbox runs as the agent's uid and can dial this
//! socket, so everything here is bounded (handshakes in flight, their size and duration, the
//! parked connections, the log lines about refusals) and only a hello carrying the sandbox's
//! [`AgentSecret`] is parked: a dialer without it never sees a request.
//!
//! A connection whose request ended cleanly can be given back ([`AgentLease::give_back`]) and
//! serves a later request: the agent keeps answering on a connection until it closes.

use super::framing::read_frame_limited;
use super::wake::wake_agent;
use crate::error::ProtoError;
use crate::message::{Event, Request, PROTOCOL_VERSION};
use crate::secret::AgentSecret;
use std::collections::VecDeque;
use std::fs::{self, Permissions};
use std::io::{self, ErrorKind};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Notify;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::Instant;

/// Parked connections kept at most; the agent keeps fewer, so more means someone else dials.
pub const MAX_IDLE: usize = 8;
/// A connection given back is closed rather than parked once this many are parked: the agent
/// may have dialed a spare while the connection was busy, and a closed surplus is how its
/// count comes back down (it only ever closes idle connections the hub closed first).
const RETURNED_PARKED_AT_MOST: usize = crate::message::AGENT_SPARES + 2;
/// A new connection must send its hello within this time.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(2);
/// Connections accepted but not yet greeted; at this many the hub stops accepting for a while.
const MAX_PENDING_HELLOS: usize = 16;
/// A hello is a few dozen bytes; refusing big frames keeps a handshake's memory small.
const MAX_HELLO_LEN: usize = 1024;
/// Pause after a failed accept (e.g. out of file descriptors) so the loop does not spin.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);
/// Refused hellos are logged at most this often per hub: a sandbox can dial in a loop.
const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Accepts and parks the agent's connections; see the module documentation.
pub struct AgentHub {
    shared: Arc<Shared>,
    accept_task: AbortHandle,
}

struct Shared {
    idle: Mutex<VecDeque<UnixStream>>,
    /// Signalled when a connection is parked or the hub closes.
    changed: Notify,
    /// Set by the first hello.
    ready: AtomicBool,
    closed: AtomicBool,
    secret: AgentSecret,
    path: PathBuf,
    refusals: Mutex<RefusalLog>,
}

/// When a refused hello was last logged, and how many were refused since without a line.
#[derive(Default)]
struct RefusalLog {
    last: Option<Instant>,
    unlogged: u64,
}

impl AgentHub {
    /// Listens at `path` (replacing a stale socket there) for an agent that proves `secret`,
    /// and starts accepting. The socket is left to its owner only (mode 0600): the caller
    /// hands it to the agent's uid. Must be called inside a Tokio runtime. The accept task
    /// ends when the hub is closed or dropped.
    pub fn bind(path: impl AsRef<Path>, secret: AgentSecret) -> io::Result<Arc<Self>> {
        let path = path.as_ref().to_path_buf();
        remove_stale_socket(&path)?;
        let listener = UnixListener::bind(&path)?;
        if let Err(e) = fs::set_permissions(&path, Permissions::from_mode(0o600)) {
            let _ = fs::remove_file(&path);
            return Err(e);
        }
        let shared = Arc::new(Shared {
            idle: Mutex::new(VecDeque::new()),
            changed: Notify::new(),
            ready: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            secret,
            path,
            refusals: Mutex::new(RefusalLog::default()),
        });
        let accept_task = tokio::spawn(accept_loop(listener, shared.clone())).abort_handle();
        Ok(Arc::new(Self {
            shared,
            accept_task,
        }))
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Waits until an agent has said hello at least once.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<(), ProtoError> {
        self.wait_for(timeout, |shared| {
            shared.ready.load(Ordering::Acquire).then_some(())
        })
        .await
    }

    /// Takes an idle agent connection for one request, waiting up to `timeout` for one.
    /// Connections the agent has closed meanwhile are skipped. With none parked, the agent is
    /// asked for one more through its wake FIFO: it counts as spares the connections that
    /// answered their request, and some of those may still be held here.
    pub async fn acquire(&self, timeout: Duration) -> Result<AgentLease, ProtoError> {
        let stream = match self.shared.pop_usable() {
            Some(stream) => stream,
            None => {
                wake_agent(&self.shared.path);
                self.wait_for(timeout, Shared::pop_usable).await?
            }
        };
        Ok(AgentLease {
            stream: Some(stream),
            hub: Arc::downgrade(&self.shared),
        })
    }

    /// Connections parked right now.
    pub fn idle_count(&self) -> usize {
        self.shared.lock_idle().len()
    }

    /// Stops accepting, drops the parked connections and fails pending and future waits
    /// with [`ProtoError::Closed`]. Idempotent; dropping does the same.
    ///
    /// The socket file stays: a successor may already be listening at the same path (the
    /// socket's inode number can be reused, so it cannot be told apart reliably), and
    /// [`AgentHub::bind`] replaces a stale one. Its owner removes the directory.
    pub fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        self.accept_task.abort();
        self.shared.lock_idle().clear();
        self.shared.changed.notify_waiters();
    }

    async fn wait_for<T>(
        &self,
        timeout: Duration,
        mut check: impl FnMut(&Shared) -> Option<T>,
    ) -> Result<T, ProtoError> {
        let deadline = Instant::now() + timeout;
        loop {
            let changed = self.shared.changed.notified();
            tokio::pin!(changed);
            // Registered before checking, so a change between the check and the wait wakes us.
            changed.as_mut().enable();
            if let Some(found) = check(&self.shared) {
                return Ok(found);
            }
            if self.shared.closed.load(Ordering::Acquire) {
                return Err(ProtoError::Closed);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(ProtoError::Timeout(timeout));
            }
        }
    }
}

impl std::fmt::Debug for AgentHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentHub")
            .field("path", &self.shared.path)
            .field("idle", &self.idle_count())
            .field("closed", &self.shared.closed.load(Ordering::Acquire))
            .finish()
    }
}

impl Drop for AgentHub {
    fn drop(&mut self) {
        self.close();
    }
}

impl Shared {
    fn lock_idle(&self) -> MutexGuard<'_, VecDeque<UnixStream>> {
        // The queue stays consistent even if a holder panicked: every operation is one call.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The most recently parked usable connection: its agent thread is the one most likely
    /// still warm in the caches.
    fn pop_usable(&self) -> Option<UnixStream> {
        let mut idle = self.lock_idle();
        while let Some(stream) = idle.pop_back() {
            if awaits_request(&stream) {
                return Some(stream);
            }
        }
        None
    }

    /// Parks a connection unless `at_most` are parked already.
    fn park(&self, stream: UnixStream, at_most: usize) {
        {
            let mut idle = self.lock_idle();
            if self.closed.load(Ordering::Acquire) {
                return;
            }
            if idle.len() >= at_most {
                idle.retain(awaits_request);
            }
            if idle.len() >= at_most {
                dismiss(stream);
                return;
            }
            idle.push_back(stream);
        }
        self.ready.store(true, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// Logs a refused hello (never the secret it carried), at most once per
    /// [`REFUSAL_LOG_INTERVAL`], counting the ones in between.
    fn log_refusal(&self, stream: &UnixStream, why: &str) {
        let since_last = {
            let mut log = self.refusals.lock().unwrap_or_else(PoisonError::into_inner);
            if log
                .last
                .is_some_and(|at| at.elapsed() < REFUSAL_LOG_INTERVAL)
            {
                log.unlogged += 1;
                return;
            }
            log.last = Some(Instant::now());
            std::mem::take(&mut log.unlogged)
        };
        // Who dialed, as the kernel saw it: the hello's own pid is the dialer's word.
        let (uid, pid) = stream
            .peer_cred()
            .map(|c| (Some(c.uid()), c.pid()))
            .unwrap_or((None, None));
        tracing::warn!(
            socket = %self.path.display(),
            peer_uid = ?uid,
            peer_pid = ?pid,
            refused_since_last_report = since_last,
            "refused a connection to an agent socket: {why}"
        );
    }
}

/// An agent connection taken from the hub. Dropping it dismisses it (see [`dismiss`]);
/// [`AgentLease::give_back`] parks it for another request.
#[derive(Debug)]
pub struct AgentLease {
    /// Taken only by [`AgentLease::give_back`], which consumes the lease.
    stream: Option<UnixStream>,
    hub: Weak<Shared>,
}

impl AgentLease {
    /// Parks the connection again. Only for a connection whose last request ended cleanly:
    /// its answer read to the end and nothing half-written. Anything the agent sends before
    /// the next request makes the hub discard it (see [`awaits_request`]).
    pub fn give_back(mut self) {
        if let (Some(shared), Some(stream)) = (self.hub.upgrade(), self.stream.take()) {
            shared.park(stream, RETURNED_PARKED_AT_MOST);
        }
    }

    fn stream(self: Pin<&mut Self>) -> Pin<&mut UnixStream> {
        Pin::new(
            self.get_mut()
                .stream
                .as_mut()
                .expect("a lease has its stream until given back"),
        )
    }
}

impl Drop for AgentLease {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            dismiss(stream);
        }
    }
}

/// Closes an agent connection the service chose not to keep, saying so first if the socket
/// takes the few bytes at once: an agent whose idle connection just closes takes it for the
/// service going away and waits for its word before dialing again. On a connection in the
/// middle of a request the agent is not waiting for one and dials again anyway.
fn dismiss(stream: UnixStream) {
    if let Ok(frame) = crate::frame::json_frame(&Request::Dismiss) {
        let _ = stream.try_write(&frame);
    }
}

impl AsyncRead for AgentLease {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.stream().poll_read(cx, buf)
    }
}

impl AsyncWrite for AgentLease {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.stream().poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.stream().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.stream().poll_shutdown(cx)
    }
}

/// Whether a parked connection is still usable: the agent on it neither closed it nor sent
/// anything after its hello, it just waits for a request. A non-blocking peek tells.
fn awaits_request(stream: &UnixStream) -> bool {
    let mut byte = 0u8;
    // SAFETY: the descriptor is open for the borrow of `stream`, and the buffer is one
    // writable byte.
    let peeked = unsafe {
        libc::recv(
            stream.as_raw_fd(),
            (&mut byte as *mut u8).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    peeked < 0 && io::Error::last_os_error().kind() == ErrorKind::WouldBlock
}

fn remove_stale_socket(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => fs::remove_file(path),
        Ok(_) => Err(io::Error::new(
            ErrorKind::AlreadyExists,
            format!("{} exists and is not a socket", path.display()),
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

async fn accept_loop(listener: UnixListener, shared: Arc<Shared>) {
    // Owned by this task, so aborting it aborts the handshakes too.
    let mut greetings = JoinSet::new();
    loop {
        if greetings.len() >= MAX_PENDING_HELLOS {
            // New dialers wait in the listen backlog until a handshake ends.
            greetings.join_next().await;
            continue;
        }
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    greetings.spawn(greet(stream, shared.clone()));
                }
                Err(_) => tokio::time::sleep(ACCEPT_ERROR_PAUSE).await,
            },
            Some(_) = greetings.join_next(), if !greetings.is_empty() => {}
        }
    }
}

/// Parks the connection if its first frame, within [`HELLO_TIMEOUT`], is a hello carrying
/// the sandbox's secret. A hello without it is logged; anything else is dropped quietly.
async fn greet(mut stream: UnixStream, shared: Arc<Shared>) {
    let first = tokio::time::timeout(
        HELLO_TIMEOUT,
        read_frame_limited(&mut stream, MAX_HELLO_LEN),
    );
    let frame = match first.await {
        Ok(Ok(frame)) => frame,
        Ok(Err(_)) => return,
        // A starved host can make a hello late; the agent is told to dial again.
        Err(_) => {
            dismiss(stream);
            return;
        }
    };
    let Ok(Event::Hello {
        version, secret, ..
    }) = frame.parse_json()
    else {
        return;
    };
    match secret {
        Some(secret) if secret == shared.secret => shared.park(stream, MAX_IDLE),
        Some(_) => shared.log_refusal(
            &stream,
            "its hello carries a wrong secret; something other than the sandbox's agent dialed it",
        ),
        None => shared.log_refusal(
            &stream,
            &format!(
                "its hello carries no secret (protocol version {version}; agents before version {PROTOCOL_VERSION} send none): a sandbox started by an older sandboxd cannot be served, open a new session"
            ),
        ),
    }
}
