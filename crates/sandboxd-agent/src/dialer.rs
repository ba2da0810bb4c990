//! Keeps spare connections to the service open, each served by its own thread; a thread
//! whose connection closed waits for the next one rather than exiting.
//!
//! The service never waits for the agent to connect: it takes a connection that already said
//! hello, and the request arriving on it makes the dialer open a replacement. A connection
//! stays open after answering, idle again, since the service may send it another request.
//! When the service goes away (restart, or the sandbox's hub closed) the spares see
//! end-of-file and the dialer dials again once the service says it listens at the same path
//! again (see [`crate::wake`]): dialing at once reached the dying service's listener, which
//! still accepts until it is released, seconds later with thousands of sandboxes. A
//! connection the service closes by choice comes with a dismissal and is replaced at once.
//! Back, it dials one connection at once and the other spares a few seconds later: thousands
//! of agents come back together, and their first connections are what makes their sessions
//! answer.

use crate::serve;
use crate::sys::EventFd;
use crate::wake::{spread, Wake};
use sandboxd_agent_proto::{
    read_frame, write_json, AgentSecret, Event, FrameKind, ProtoError, PROTOCOL_VERSION,
};
use std::convert::Infallible;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// Idle connections (greeted, or done with a request) below which the dialer adds one.
const SPARES: usize = sandboxd_agent_proto::AGENT_SPARES;
/// Connections open at once, idle or busy; this bounds the agent's threads.
const MAX_CONNECTIONS: usize = 64;
const MIN_RETRY_DELAY: Duration = Duration::from_millis(5);
/// Without a wake FIFO, a restarted service sees its agents back within this long of binding
/// their sockets again.
const MAX_RETRY_DELAY: Duration = Duration::from_millis(250);
/// After the service came back, the other spares are dialed this long after the first, plus
/// up to [`REFILL_SPREAD`]: past the rush of every session's first requests, and not all at once.
const REFILL_AFTER: Duration = Duration::from_millis(1500);
const REFILL_SPREAD: Duration = Duration::from_millis(3000);
/// Threads kept for new connections after theirs closed: enough for every spare.
const PARKED_THREADS: usize = SPARES;
/// A connection that closes this soon after a word from the service is no sign of its going
/// away: a sandbox thawed after a restart of the service finds the new service's word and
/// its old connections closed at once, in either order.
const HEARD_LATELY: Duration = Duration::from_secs(1);
/// A connection thread needs little: buffers live on the heap.
const CONNECTION_STACK_SIZE: usize = 256 * 1024;

/// Dials `socket` forever, keeping [`SPARES`] idle connections, each opened with a hello
/// proving `secret`, and one more whenever the service asks through the wake FIFO (it may
/// still hold connections this agent counts as spares). Returns only if it cannot start.
pub fn run(socket: &Path, secret: &AgentSecret) -> Result<Infallible, String> {
    let pool = Pool::shared()?;
    let wake = Wake::open(socket);
    loop {
        if let Some(delay) = pool.wait_for_vacancy(&wake) {
            await_service(&wake, &pool, delay);
        }
        // A word written before this dial asked for a connection this dial makes.
        wake.forget_words();
        match dial(socket, secret) {
            Ok(connection) => serve_connection(connection, &pool),
            Err(_) => await_service(&wake, &pool, pool.next_retry_delay()),
        }
    }
}

/// Waits for the service's word that it listens (or `retry_delay` without a wake FIFO). If it
/// had to wait, keeps one spare for a while: the service is back, and so are thousands of
/// other agents. A word there already means the service is there (it spoke while the agent
/// was frozen, or asked for a connection).
fn await_service(wake: &Wake, pool: &Pool, retry_delay: Duration) {
    let was_away = wake.wait(|| retry_delay);
    pool.service_back(was_away.then(|| Instant::now() + REFILL_AFTER + spread(REFILL_SPREAD)));
}

fn dial(socket: &Path, secret: &AgentSecret) -> Result<UnixStream, ProtoError> {
    let mut connection = UnixStream::connect(socket)?;
    let hello = Event::Hello {
        version: PROTOCOL_VERSION,
        pid: std::process::id(),
        secret: Some(secret.clone()),
    };
    write_json(&mut connection, &hello)?;
    Ok(connection)
}

/// Serves `connection` on a thread, counted in `pool`: one parked by a connection that closed
/// if there is one, else a new one.
pub(crate) fn serve_connection(connection: UnixStream, pool: &Arc<Pool>) {
    pool.update(|state| {
        state.idle += 1;
        state.open += 1;
    });
    let Err(connection) = pool.hand_to_parked(connection) else {
        return;
    };
    let thread_pool = pool.clone();
    let spawned = thread::Builder::new()
        .name("connection".into())
        .stack_size(CONNECTION_STACK_SIZE)
        .spawn(move || {
            let mut connection = connection;
            loop {
                let end = serve(connection, &thread_pool);
                thread_pool.connection_closed(end);
                match thread_pool.park() {
                    Some(next) => connection = next,
                    None => return,
                }
            }
        });
    if spawned.is_err() {
        // The connection was dropped with the closure; count it as a failed dial.
        pool.connection_closed(ConnectionEnd { idle: true });
    }
}

/// How a connection ended, for the pool's counts.
#[derive(Clone, Copy)]
struct ConnectionEnd {
    /// It was waiting for a request (counted as idle).
    idle: bool,
}

/// Reads requests on one connection until it closes, each answered by [`serve::answer`].
fn serve(mut connection: UnixStream, pool: &Pool) -> ConnectionEnd {
    let mut end = ConnectionEnd { idle: true };
    loop {
        let Ok(frame) = read_frame(&mut connection) else {
            return end;
        };
        match frame.kind {
            FrameKind::Json => {}
            // Input the service still sent after the process it was meant for exited.
            FrameKind::Stdin => continue,
            FrameKind::Stdout | FrameKind::Stderr => return end,
        }
        end.idle = false;
        pool.connection_taken();
        if serve::answer(&mut connection, &frame).is_break() {
            return end;
        }
        end.idle = true;
        pool.connection_idle_again();
    }
}

pub(crate) struct Pool {
    state: Mutex<PoolState>,
    /// Notified when a spare is missing (see [`PoolState::has_vacancy`]); the dialer polls it
    /// beside the wake FIFO.
    changed: EventFd,
    /// Signalled when a connection is handed to the parked threads.
    handed: Condvar,
}

struct PoolState {
    idle: usize,
    open: usize,
    /// Slept after the next failure; doubles per failure, reset once the service uses us.
    retry_delay: Duration,
    /// A connection closed while it waited for a request: the service is going away or
    /// turning us away, so the next dial waits for its word instead of spinning.
    backoff_due: bool,
    /// Until then one spare is enough (the service just came back).
    one_spare_until: Option<Instant>,
    /// The service asked for one more connection than the spares.
    asked: bool,
    /// When the dialer last took a word from the service.
    heard_at: Option<Instant>,
    /// Threads whose connection closed, waiting to serve a new one.
    parked: usize,
    /// New connections for the parked threads.
    handed_over: Vec<UnixStream>,
}

impl Pool {
    pub(crate) fn shared() -> Result<Arc<Pool>, String> {
        let changed =
            EventFd::new().map_err(|e| format!("cannot make the dialer's eventfd: {e}"))?;
        Ok(Arc::new(Self {
            state: Mutex::new(PoolState {
                idle: 0,
                open: 0,
                retry_delay: MIN_RETRY_DELAY,
                backoff_due: false,
                one_spare_until: None,
                asked: false,
                heard_at: None,
                parked: 0,
                handed_over: Vec::new(),
            }),
            changed,
            handed: Condvar::new(),
        }))
    }

    fn lock(&self) -> MutexGuard<'_, PoolState> {
        // Counters only: still meaningful after a panic elsewhere.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the counters and wakes the dialer only when that made room for a dial: a
    /// request taking one of several spares, as nearly every request does, wakes nobody.
    fn update(&self, change: impl FnOnce(&mut PoolState)) {
        let mut state = self.lock();
        change(&mut state);
        if state.has_vacancy() {
            self.changed.notify();
        }
    }

    /// Blocks until a spare is missing or the service asks for a connection through `wake`;
    /// returns how long to back off first, if at all.
    fn wait_for_vacancy(&self, wake: &Wake) -> Option<Duration> {
        loop {
            let rationed_until = {
                let mut state = self.lock();
                if state.has_vacancy() || (state.asked && state.open < MAX_CONNECTIONS) {
                    state.asked = false;
                    let heard_lately = state.heard_at.is_some_and(|at| at.elapsed() < HEARD_LATELY);
                    let backoff_due = std::mem::take(&mut state.backoff_due);
                    return (backoff_due && !heard_lately).then(|| state.bump_retry_delay());
                }
                // The rest of the spares are missing from then on.
                state.rationed_until()
            };
            let asked = wake.wait_beside(&self.changed, rationed_until);
            // Before the counters are looked at again, so a change after this wakes the poll.
            self.changed.clear();
            if asked {
                let mut state = self.lock();
                state.asked = true;
                state.heard_at = Some(Instant::now());
            }
        }
    }

    /// The service said it is there: forgets the connections that closed as it went away
    /// (they close over seconds, also during the wait), and keeps one spare only until
    /// `ration_until`, if given.
    fn service_back(&self, ration_until: Option<Instant>) {
        let mut state = self.lock();
        state.backoff_due = false;
        if ration_until.is_some() {
            state.one_spare_until = ration_until;
        }
    }

    fn next_retry_delay(&self) -> Duration {
        self.lock().bump_retry_delay()
    }

    fn connection_taken(&self) {
        self.update(|state| {
            state.idle -= 1;
            state.retry_delay = MIN_RETRY_DELAY;
        });
    }

    fn connection_idle_again(&self) {
        // One more spare never makes room for a dial, so the dialer is not woken: this runs
        // after every request.
        self.lock().idle += 1;
    }

    /// Gives `connection` to a parked thread; hands it back if none is waiting for one.
    fn hand_to_parked(&self, connection: UnixStream) -> Result<(), UnixStream> {
        let mut state = self.lock();
        if state.handed_over.len() >= state.parked {
            return Err(connection);
        }
        state.handed_over.push(connection);
        self.handed.notify_one();
        Ok(())
    }

    /// Parks the calling thread, whose connection closed, until a new connection is handed
    /// to it; `None` (the thread ends) when [`PARKED_THREADS`] already wait. When the service
    /// goes away every spare's connection closes at once: across thousands of sandboxes,
    /// their threads exiting and being made again when it is back took seconds of CPU.
    fn park(&self) -> Option<UnixStream> {
        let mut state = self.lock();
        if state.parked >= PARKED_THREADS {
            return None;
        }
        state.parked += 1;
        loop {
            if let Some(connection) = state.handed_over.pop() {
                state.parked -= 1;
                return Some(connection);
            }
            state = self
                .handed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn connection_closed(&self, end: ConnectionEnd) {
        self.update(|state| {
            state.open -= 1;
            // Closed while waiting for a request, without a dismissal: the service is
            // going away. One that closed during a request was ended by its requester.
            if end.idle {
                state.idle -= 1;
                state.backoff_due = true;
            }
        });
    }
}

impl PoolState {
    /// A spare is missing and there is room for another connection.
    fn has_vacancy(&self) -> bool {
        let spares = if self.rationed_until().is_some() {
            1
        } else {
            SPARES
        };
        self.idle < spares && self.open < MAX_CONNECTIONS
    }

    /// When the one-spare ration ends, while it lasts.
    fn rationed_until(&self) -> Option<Instant> {
        self.one_spare_until.filter(|until| Instant::now() < *until)
    }

    fn bump_retry_delay(&mut self) -> Duration {
        let delay = self.retry_delay;
        self.retry_delay = (delay * 2).min(MAX_RETRY_DELAY);
        delay
    }
}
