//! Keeping sessions and sandboxes in step: taking back the sessions of an earlier run at start,
//! expiring idle and old sessions, ending sessions whose sandbox vanished (a Docker engine
//! restart, a container removed by hand) and those whose agent stopped answering (killed or
//! frozen from inside). Every ending says why, in the session's record and in its activity log.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::Actor;
use crate::state::sessions::{session_count, Session};
use futures_util::{stream, StreamExt};
use sandboxd_agent_proto as proto;
use sandboxd_api::{IdleAction, PausedMemory, Policy};
use sandboxd_backend::ExistingSandbox;
use sandboxd_config::format_bytes;
use std::collections::HashMap;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::time::{Instant, MissedTickBehavior};

/// How often sessions are checked for expiry.
const EXPIRY_INTERVAL: Duration = Duration::from_secs(1);
/// How often the platform is asked which sandboxes still run when it gives no word of stops
/// ([`sandboxd_backend::Backend::watch_stops`]), or its watch is broken: often enough that a
/// sandbox removed outside is noticed (and its followers told) within a second.
const SANDBOX_CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// How often it is asked while its word of stops comes: only to catch what a watch may miss.
const SANDBOX_RECONCILE_INTERVAL: Duration = Duration::from_secs(30);
/// How often each running session's agent is pinged, at least.
const PING_INTERVAL: Duration = Duration::from_secs(4);
/// Why a session whose sandbox no longer runs ended.
const SANDBOX_STOPPED: &str = "its sandbox stopped: its agent exited, or the container was stopped or removed outside sandboxd (for example, the Docker engine restarted)";
/// Pings a second, at most: with thousands of sessions, rounds come further apart instead.
const PINGS_PER_SECOND: u32 = 100;
/// How long a ping may take, the wait for a connection to the agent included. An agent
/// answers at once from an idle connection; one that takes longer is frozen or starved.
const PING_TIMEOUT: Duration = Duration::from_secs(2);
/// Pings failed in a row that end a session: about 10 s without an answer.
const PING_FAILURES_TO_END: u32 = 3;
/// Sessions taken back at start whose agents are waited for at once. Waiting is cheap (an
/// agent that dialed back is seen at once); the bound keeps the work of ending those that do
/// not come back in step with the engine.
const ADOPT_CONCURRENCY: usize = 256;
/// Pings in flight at once, so a round stays bounded however many sessions run.
const PING_CONCURRENCY: usize = 16;

/// What [`Core::restore`] did, for the start-up message.
#[derive(Debug, Default)]
pub struct RestoreReport {
    /// Taken back; one whose agent then does not dial back is ended in the background.
    pub resumed: usize,
    pub ended: usize,
    pub orphans_removed: usize,
}

/// The sessions [`Core::take_back`] took from the store, for [`Core::reconcile`] to judge
/// against the engine.
pub struct TakenBack {
    sessions: Vec<Session>,
    /// Released once they are judged, or when the judging fails.
    _restoring: tokio::sync::OwnedRwLockWriteGuard<()>,
}

impl TakenBack {
    /// The sessions serving again.
    pub fn count(&self) -> usize {
        self.sessions.len()
    }
}

/// Taking back the sessions that were open when the service last stopped. It comes in two
/// steps so the service can serve between them: asking an engine that runs thousands of
/// containers which of them still run takes seconds, while taking them back is in memory
/// (the backend makes their agents reachable again in the background).
impl Core {
    /// [`Core::take_back`], then [`Core::reconcile`].
    pub async fn restore(&self) -> Result<RestoreReport, Error> {
        let taken = self.take_back().await?;
        self.reconcile(taken).await
    }

    /// Takes back every session the store holds as open, as the store left it (paused or
    /// not): it is reattached to the backend, whose requests to it wait for its agent from
    /// then on, and once all are the backend calls their agents back. [`Core::reconcile`]
    /// then ends those whose sandbox did not survive.
    pub async fn take_back(&self) -> Result<TakenBack, Error> {
        let mut taken = TakenBack {
            sessions: Vec::new(),
            _restoring: self.restoring().clone().write_owned().await,
        };
        // Volumes first: the sessions taken back and the next ones bind them.
        if let Err(e) = self.repair_volumes().await {
            tracing::error!(error = %e, "cannot repair the volumes");
        }
        for session in self.sessions().stored_open()? {
            self.backend().reattach(&session.sandbox);
            // As the store left it, paused or not.
            self.sessions().restore(session.clone());
            self.contexts().to_learn(&session.id);
            taken.sessions.push(session);
        }
        self.backend().call_agents_back();
        // Leftovers only take room: a failure to clean them must not keep the service down.
        match self.remove_unrecorded_snapshots() {
            Ok(0) => {}
            Ok(leftovers) => {
                tracing::info!(
                    leftovers,
                    "removed snapshot files a crash left without a record"
                )
            }
            Err(e) => tracing::warn!(error = %e, "cannot remove leftover snapshot files"),
        }
        Ok(taken)
    }

    /// Judges the sessions taken back against the engine's sandboxes: a session whose sandbox
    /// still runs keeps serving (paused if the engine says so: a crash may have come between a
    /// pause and its record) and its agent is awaited in the background; any other is ended
    /// with the reason; sandboxes of this instance that no open session owns are removed. A
    /// session closed meanwhile is left as it is.
    pub async fn reconcile(&self, taken: TakenBack) -> Result<RestoreReport, Error> {
        let mut existing: HashMap<String, ExistingSandbox> = self
            .backend()
            .list()
            .await?
            .into_iter()
            .map(|e| (e.sandbox.session_id.clone(), e))
            .collect();
        let mut report = RestoreReport::default();
        let mut waiting = Vec::new();
        for session in taken.sessions {
            let found = existing.remove(&session.id);
            if !self
                .sessions()
                .get(&session.id)
                .is_ok_and(|s| s.is_running())
            {
                continue;
            }
            match found {
                Some(found) if found.running && found.sandbox == session.sandbox => {
                    let paused_at = found
                        .paused
                        .then(|| session.paused_at.unwrap_or_else(OffsetDateTime::now_utc));
                    let memory = if found.memory_on_disk.is_some() {
                        PausedMemory::Disk
                    } else {
                        PausedMemory::Ram
                    };
                    self.sessions()
                        .set_paused(&session.id, paused_at.map(|at| (at, memory)));
                    if let Some(bytes) = found.memory_on_disk {
                        // On disk already: counted as it stands, whatever the quota says now.
                        self.sessions().count_image(&session.id, bytes);
                    }
                    report.resumed += 1;
                    waiting.push((session, paused_at));
                }
                Some(found) => {
                    self.end_for(
                        &session,
                        "end",
                        "its sandbox had stopped when the service restarted",
                    )
                    .await;
                    let _ = self.backend().destroy(&found.sandbox).await;
                    report.ended += 1;
                }
                None => {
                    self.end_for(
                        &session,
                        "end",
                        "its sandbox was gone when the service restarted",
                    )
                    .await;
                    report.ended += 1;
                }
            }
        }
        let core = self.clone();
        tokio::spawn(async move { core.await_agents(waiting).await });
        for orphan in existing.into_values() {
            self.backend().destroy(&orphan.sandbox).await?;
            report.orphans_removed += 1;
        }
        Ok(report)
    }

    /// Waits for the agents of the sessions taken back at start, [`ADOPT_CONCURRENCY`] at a
    /// time, and ends the sessions whose agent does not come back.
    async fn await_agents(&self, sessions: Vec<(Session, Option<OffsetDateTime>)>) {
        let listings = Listings::default();
        stream::iter(sessions)
            .for_each_concurrent(ADOPT_CONCURRENCY, |(session, paused_at)| {
                let listings = &listings;
                async move {
                    // A frozen agent cannot dial back: a paused sandbox is taken back as it is.
                    let result = match paused_at {
                        Some(_) => self.backend().adopt_paused(&session.sandbox).await,
                        None => self.backend().adopt(&session.sandbox).await,
                    };
                    if result.is_ok() && paused_at.is_none() {
                        self.learn_contexts(&session).await;
                    }
                    if let Err(e) = result {
                        tracing::warn!(session = %session.id, error = %e, "cannot resume a session");
                        // A sandbox removed while its agent was awaited is reported as removed,
                        // not as an agent that stayed silent.
                        let reason = match listings.runs(self, &session).await {
                            Some(false) => SANDBOX_STOPPED,
                            _ => "its sandbox's agent did not answer after the service restarted",
                        };
                        self.end_for(&session, "end", reason).await;
                    }
                }
            })
            .await;
    }

    /// Expires sessions and ends those whose sandbox vanished or whose agent stopped
    /// answering, until the task is aborted.
    pub async fn maintain(self) {
        // Side by side, so waiting on silent agents never delays an expiry.
        tokio::join!(self.keep_in_step(), self.watch_agents());
    }

    async fn keep_in_step(&self) {
        let mut expiry = tokio::time::interval(EXPIRY_INTERVAL);
        let mut stops = self.backend().watch_stops();
        let mut next_check = Instant::now();
        loop {
            tokio::select! {
                _ = expiry.tick() => {
                    self.expire().await;
                    self.refill_pools();
                }
                () = tokio::time::sleep_until(next_check) => {
                    if stops.is_none() {
                        stops = self.backend().watch_stops();
                    }
                    let listed = self.end_vanished().await;
                    let interval = if listed && stops.is_some() {
                        SANDBOX_RECONCILE_INTERVAL
                    } else {
                        SANDBOX_CHECK_INTERVAL
                    };
                    next_check = Instant::now() + interval;
                }
                word = next_stop(&mut stops) => {
                    if word.is_none() {
                        // The watch broke (the engine may be restarting): list every second
                        // again, and watch anew at the next listing.
                        stops = None;
                        next_check = Instant::now() + SANDBOX_CHECK_INTERVAL;
                    } else if !self.end_vanished().await {
                        next_check = Instant::now() + SANDBOX_CHECK_INTERVAL;
                    }
                }
            }
        }
    }

    /// Ends sessions past their lifetime, paused ones past the paused limit, and closes or
    /// pauses (`policy.idle_action`) idle ones; see [`crate::ops::pause`] for the clocks.
    async fn expire(&self) {
        let policy = &self.config().policy;
        let now = OffsetDateTime::now_utc();
        let due = self
            .sessions()
            .running_picked(|s| Expiry::of(policy, s, now).map(|e| (s.clone(), e)));
        for (session, expiry) in due {
            let reason = match expiry {
                Expiry::Lifetime => format!(
                    "expired: it reached the maximum lifetime of {} s (policy.max_lifetime_secs)",
                    policy.max_lifetime_secs
                ),
                Expiry::Paused => format!(
                    "expired: paused for more than {} s (policy.paused_timeout_secs)",
                    policy.paused_timeout_secs
                ),
                Expiry::OwnIdle { secs, pause: true } => {
                    let why = format!("idle for more than its own timeout of {secs} s");
                    self.pause_when_idle(&session, &format!("{why} (auto-pause)"), &why)
                        .await;
                    continue;
                }
                Expiry::OwnIdle { secs, pause: false } => {
                    format!("expired: idle for more than its own timeout of {secs} s")
                }
                Expiry::Idle { pause: true } => {
                    let why = format!(
                        "idle for more than {} s (policy.idle_timeout_secs)",
                        policy.idle_timeout_secs
                    );
                    let target = format!(
                        "idle for more than {} s (policy.idle_action = \"pause\")",
                        policy.idle_timeout_secs
                    );
                    self.pause_when_idle(&session, &target, &why).await;
                    continue;
                }
                Expiry::Idle { pause: false } => format!(
                    "expired: idle for more than {} s (policy.idle_timeout_secs)",
                    policy.idle_timeout_secs
                ),
            };
            self.end_for(&session, "expire", &reason).await;
        }
    }

    /// Pauses an idle session (`idle_action = "pause"`, or its own auto-pause), the entry
    /// naming `target`; one that cannot be paused is closed, as it would have been otherwise.
    async fn pause_when_idle(&self, session: &Session, target: &str, why: &str) {
        if let Err(e) = self.pause_as(session, Actor::service(), target).await {
            let reason = format!("expired: {why}, and pausing it failed: {e}");
            self.end_for(session, "expire", &reason).await;
        }
    }

    /// Ends the sessions (and drops the pooled sandboxes) whose sandbox no longer runs;
    /// false when the platform could not say.
    async fn end_vanished(&self) -> bool {
        let _judged = self.restoring().read().await;
        let running = self.sessions().running();
        let pooled = self.pools().sandboxes();
        if running.is_empty() && pooled.is_empty() {
            return true;
        }
        let Some(live) = self.running_sandboxes().await else {
            return false;
        };
        self.pools().retain(|sandbox| is_listed(&live, sandbox));
        let missing: Vec<Session> = running
            .into_iter()
            .filter(|session| !is_listed(&live, &session.sandbox))
            .collect();
        if missing.is_empty() {
            return true;
        }
        // A pause to disk stops its container and the resume starts it again: one may have
        // ended between the listing and now. Those missing are judged again against a second
        // listing, each with its pause and resume held off until it is judged.
        let mut held = Vec::with_capacity(missing.len());
        for session in &missing {
            held.push(session.transition.clone().lock_owned().await);
        }
        let Some(live) = self.running_sandboxes().await else {
            return false;
        };
        for session in missing {
            if !is_listed(&live, &session.sandbox) {
                let reason = self.why_stopped(&session).await;
                self.end_for(&session, "end", &reason).await;
            }
        }
        drop(held);
        true
    }

    /// The platform's running sandboxes by id, or `None` (logged) when it cannot say.
    async fn running_sandboxes(&self) -> Option<HashMap<String, sandboxd_backend::Sandbox>> {
        match self.backend().list().await {
            // By container id: thousands of sessions against thousands of containers a second.
            Ok(list) => Some(
                list.into_iter()
                    .filter(|e| e.running)
                    .map(|e| (e.sandbox.backend_id.clone(), e.sandbox))
                    .collect(),
            ),
            // The engine may be restarting; its sandboxes are judged once it answers again.
            Err(e) => {
                tracing::debug!(error = %e, "cannot list sandboxes");
                None
            }
        }
    }
}

/// Whether `sandbox` is among the running ones, as itself (not another with its id).
fn is_listed(
    live: &HashMap<String, sandboxd_backend::Sandbox>,
    sandbox: &sandboxd_backend::Sandbox,
) -> bool {
    live.get(&sandbox.backend_id) == Some(sandbox)
}

impl Core {
    /// Why a session's sandbox stopped: out of memory, in words naming its limits, when the
    /// platform saw the kernel kill for it (the agent last, so it was at the end too).
    async fn why_stopped(&self, session: &Session) -> String {
        let limits = self.config().runtime(&session.runtime).map(|r| &r.limits);
        match limits {
            Some(limits) if self.backend().ran_out_of_memory(&session.sandbox).await => format!(
                "its sandbox ran out of memory: the kernel killed its processes, its agent last, at its mem_limit of {} (files in /tmp, /workspace and /dev/shm, tmpfs_size {} each, count against it and are not freed by the kills)",
                format_bytes(limits.mem_limit_bytes),
                format_bytes(limits.tmpfs_size_bytes)
            ),
            _ => SANDBOX_STOPPED.to_string(),
        }
    }
}

/// The platform's sandboxes as last listed, shared by the agents that did not come back after
/// a restart: however many fail at once, the engine is asked one listing at a time, each
/// taken after the failures it answers.
#[derive(Default)]
struct Listings(tokio::sync::Mutex<Option<(Instant, Vec<ExistingSandbox>)>>);

impl Listings {
    /// Whether the session's sandbox runs, by a listing taken after this call; `None` when
    /// the platform cannot say.
    async fn runs(&self, core: &Core, session: &Session) -> Option<bool> {
        let since = Instant::now();
        let mut last = self.0.lock().await;
        let fresh = matches!(&*last, Some((at, _)) if *at >= since);
        if !fresh {
            let at = Instant::now();
            *last = Some((at, core.backend().list().await.ok()?));
        }
        let (_, live) = last.as_ref()?;
        Some(
            live.iter()
                .any(|e| e.running && e.sandbox == session.sandbox),
        )
    }
}

/// Why a session is due for expiry: decided for every session each second, without a copy
/// or an allocation, so only the due ones are copied out of the session table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    Lifetime,
    Paused,
    /// Past its own idle timeout; `pause` when it pauses then instead of closing.
    OwnIdle {
        secs: u64,
        pause: bool,
    },
    /// Past `policy.idle_timeout_secs`; `pause` with `idle_action = "pause"`.
    Idle {
        pause: bool,
    },
}

impl Expiry {
    fn of(policy: &Policy, session: &Session, now: OffsetDateTime) -> Option<Expiry> {
        let seconds = |secs: u64| time::Duration::seconds(secs as i64);
        if session.age(now) >= seconds(policy.max_lifetime_secs) {
            return Some(Expiry::Lifetime);
        }
        if let Some(paused_at) = session.paused_at {
            return (now - paused_at >= seconds(policy.paused_timeout_secs))
                .then_some(Expiry::Paused);
        }
        let idle = session.idle(now);
        if let Some(secs) = session
            .idle_timeout_secs
            .filter(|secs| idle >= seconds(*secs))
        {
            return Some(Expiry::OwnIdle {
                secs,
                pause: session.pause_at_own_timeout,
            });
        }
        (idle >= seconds(policy.idle_timeout_secs)).then_some(Expiry::Idle {
            pause: policy.idle_action == IdleAction::Pause,
        })
    }
}

/// The next word of stops, or `None` once the watch broke; never, without a watch.
async fn next_stop(stops: &mut Option<tokio::sync::mpsc::Receiver<()>>) -> Option<()> {
    match stops {
        Some(stops) => stops.recv().await,
        None => std::future::pending().await,
    }
}

impl Core {
    /// Pings every running session's agent each [`PING_INTERVAL`] (or, with more sessions than
    /// [`PINGS_PER_SECOND`] pings in that time, as often as that rate allows) and ends the session after
    /// [`PING_FAILURES_TO_END`] failures in a row: its agent was killed or frozen from inside
    /// (the sandbox runs as the agent's uid), or the sandbox is too starved to serve anything.
    async fn watch_agents(&self) {
        let mut ticks = tokio::time::interval(PING_INTERVAL);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        // Failures in a row, by session id; only sessions that failed their last ping.
        let mut failures: HashMap<String, u32> = HashMap::new();
        loop {
            ticks.tick().await;
            // A paused session's agent is frozen on purpose; it is pinged again once resumed.
            let unpaused = self.sessions().running_where(|s| s.paused_at.is_none());
            // Spread over the round, so thousands of agents never wake at once.
            let spacing = Duration::from_secs(1) / PINGS_PER_SECOND;
            let apart = PING_INTERVAL.max(spacing.saturating_mul(session_count(unpaused.len())));
            let round = Instant::now();
            let silent: Vec<Session> = stream::iter(unpaused.into_iter().enumerate())
                .map(|(index, session)| async move {
                    tokio::time::sleep_until(round + spacing.saturating_mul(session_count(index)))
                        .await;
                    (!self.agent_answers(&session).await).then_some(session)
                })
                .buffer_unordered(PING_CONCURRENCY)
                .filter_map(std::future::ready)
                .collect()
                .await;
            let mut still_failing = HashMap::new();
            let counted: Vec<(Session, u32)> = silent
                .into_iter()
                .map(|s| {
                    let count = failures.get(&s.id).map_or(1, |n| n + 1);
                    (s, count)
                })
                .collect();
            // A sandbox that stopped is ended for that, the truer reason; an engine that does
            // not answer is likely restarting, and its sandboxes are judged once it answers.
            let to_end = counted.iter().any(|(_, n)| *n >= PING_FAILURES_TO_END);
            let engine_answered = !to_end || self.end_vanished().await;
            for (session, count) in counted {
                if count < PING_FAILURES_TO_END || !engine_answered {
                    still_failing.insert(session.id, count);
                } else if self
                    .sessions()
                    .get(&session.id)
                    .is_ok_and(|s| s.is_running() && s.paused_at.is_none())
                {
                    let reason = format!(
                        "its agent stopped answering: {count} pings in a row, {} s apart, got no answer within {} s (the agent was killed or frozen from inside the sandbox, or the sandbox is too overloaded to serve requests)",
                        apart.as_secs(),
                        PING_TIMEOUT.as_secs()
                    );
                    self.end_for(&session, "end", &reason).await;
                }
            }
            failures = still_failing;
        }
    }

    /// Whether the session's agent answers a ping within [`PING_TIMEOUT`]. The connection is
    /// given back after a pong, so a healthy agent costs one round trip and no new dial.
    async fn agent_answers(&self, session: &Session) -> bool {
        let ping = async {
            // Straight to the backend: a ping must never resume a paused session.
            let mut agent = self.backend().agent(&session.sandbox).await?;
            proto::ping(&mut agent, PING_TIMEOUT)
                .await
                .map_err(|e| Error::Agent(e.to_string()))?;
            agent.reuse();
            Ok::<_, Error>(())
        };
        match tokio::time::timeout(PING_TIMEOUT, ping).await {
            Ok(Ok(())) => true,
            Ok(Err(e)) => {
                tracing::debug!(session = %session.id, error = %e, "agent ping failed");
                false
            }
            Err(_) => {
                tracing::debug!(session = %session.id, "agent ping timed out");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandboxd_backend::Sandbox;
    use std::collections::BTreeMap;

    fn policy(idle_action: &str) -> Policy {
        let config = sandboxd_config::Config::parse(&format!(
            "[runtimes.rt]\nimage = \"busybox\"\n[policy]\nidle_timeout_secs = 100\nmax_lifetime_secs = 1000\npaused_timeout_secs = 500\nidle_action = \"{idle_action}\"\n"
        ))
        .unwrap();
        config.policy
    }

    /// A session opened `age` seconds before `now`, idle for `idle` of them.
    fn session(now: OffsetDateTime, age: i64, idle: i64) -> Session {
        let sandbox = Sandbox {
            session_id: "s".into(),
            backend_id: "c".into(),
        };
        let mut session = Session::new("s".into(), "rt".into(), None, BTreeMap::new(), sandbox);
        session.created_at = now - time::Duration::seconds(age);
        session.last_activity_at = now - time::Duration::seconds(idle);
        session
    }

    #[test]
    fn expiry_is_decided_in_the_order_of_the_clocks() {
        let (close, pause) = (policy("close"), policy("pause"));
        let now = OffsetDateTime::now_utc();
        let of = |policy: &Policy, session: &Session| Expiry::of(policy, session, now);

        assert_eq!(
            of(&close, &session(now, 99, 99)),
            None,
            "not idle long enough"
        );
        assert_eq!(
            of(&close, &session(now, 100, 100)),
            Some(Expiry::Idle { pause: false })
        );
        assert_eq!(
            of(&pause, &session(now, 100, 100)),
            Some(Expiry::Idle { pause: true })
        );
        assert_eq!(
            of(&pause, &session(now, 1000, 0)),
            Some(Expiry::Lifetime),
            "busy, but old"
        );

        let mut paused = session(now, 900, 900);
        paused.paused_at = Some(now - time::Duration::seconds(499));
        assert_eq!(
            of(&close, &paused),
            None,
            "a paused session is not idle-expired"
        );
        paused.paused_at = Some(now - time::Duration::seconds(500));
        assert_eq!(of(&close, &paused), Some(Expiry::Paused));
        paused.created_at = now - time::Duration::seconds(1000);
        assert_eq!(
            of(&close, &paused),
            Some(Expiry::Lifetime),
            "the lifetime comes first"
        );

        let mut own = session(now, 10, 10);
        own.idle_timeout_secs = Some(10);
        assert_eq!(
            of(&close, &own),
            Some(Expiry::OwnIdle {
                secs: 10,
                pause: false
            })
        );
        own.pause_at_own_timeout = true;
        assert_eq!(
            of(&close, &own),
            Some(Expiry::OwnIdle {
                secs: 10,
                pause: true
            })
        );
        own.idle_timeout_secs = Some(11);
        assert_eq!(
            of(&close, &own),
            None,
            "under its own timeout, under the policy's"
        );
    }
}
