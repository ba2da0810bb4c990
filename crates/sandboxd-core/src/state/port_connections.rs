//! The open port connections of every session, counted per session and per tenant, and the
//! pace each session's share: leaf state the core's port operations use.

use crate::error::Error;
use sandboxd_api::Policy;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// Open port connections per session, and the pace they share; cloned, it is shared.
#[derive(Default, Clone)]
pub struct PortConnections {
    open: Arc<Mutex<Open>>,
}

/// Whose a connection is: `None` for the administrator's sessions, which count as one tenant.
type Tenant = Option<String>;

#[derive(Default)]
struct Open {
    by_session: HashMap<String, SessionPorts>,
    by_tenant: HashMap<Tenant, usize>,
}

/// A session's open port connections, and the pace they share.
type SessionPorts = (usize, Arc<Pace>);

/// How far ahead of its rate a pace may run before it waits: several of the timer's
/// milliseconds, so one sleep covers many chunks.
const PACE_SLACK: Duration = Duration::from_millis(5);

/// A rate limit: each chunk is sent no sooner than the bytes before it allow, give or take
/// [`PACE_SLACK`].
pub struct Pace {
    pub(crate) bytes_per_sec: u64,
    pub(crate) next_free: Mutex<Instant>,
}

impl Pace {
    pub(crate) fn new(bytes_per_sec: u64) -> Pace {
        Pace {
            bytes_per_sec: bytes_per_sec.max(1),
            next_free: Mutex::new(Instant::now()),
        }
    }

    /// Waits until `bytes` more may go; not at all while the bytes sent are no more than
    /// [`PACE_SLACK`] ahead of the rate. (Tokio's timer counts whole milliseconds: a pace that
    /// slept for each chunk's own share, 0.12 ms for 32 KB at 256 MB/s, slept a millisecond
    /// instead, and held a download to a fraction of the rate it allows.)
    pub(crate) async fn take(&self, bytes: usize) {
        let now = Instant::now();
        let start = {
            let mut next_free = self
                .next_free
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let start = (*next_free).max(now);
            *next_free = start + Duration::from_secs_f64(bytes as f64 / self.bytes_per_sec as f64);
            start
        };
        if let Some(wake) = start.checked_sub(PACE_SLACK).filter(|wake| *wake > now) {
            tokio::time::sleep_until(wake).await;
        }
    }
}

/// One of a session's connection slots; dropping it frees the slot.
pub(crate) struct Slot {
    connections: PortConnections,
    session_id: String,
    tenant: Tenant,
    pub(crate) pace: Arc<Pace>,
}

impl PortConnections {
    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for one more connection to a port of `session_id`, owned by `tenant`, or which
    /// limit it passes.
    pub(crate) fn take(
        &self,
        session_id: &str,
        tenant: Option<&str>,
        policy: &Policy,
    ) -> Result<Slot, Error> {
        let tenant: Tenant = tenant.map(str::to_string);
        let mut open = self.lock();
        let of_tenant = open.by_tenant.get(&tenant).copied().unwrap_or(0);
        let of_session = open
            .by_session
            .get(session_id)
            .map_or(0, |(count, _)| *count);
        let refusal = if of_session >= policy.max_port_connections as usize {
            Some(format!(
                "the session has {of_session} connections to its ports open, as many as it may (policy.max_port_connections); close some first"
            ))
        } else if of_tenant >= policy.max_port_connections_per_tenant as usize {
            let whose = match &tenant {
                Some(name) => format!("tenant {name}"),
                None => "the administrator".into(),
            };
            Some(format!(
                "{whose} has {of_tenant} connections to its sessions' ports open, as many as one tenant may (policy.max_port_connections_per_tenant); close some first"
            ))
        } else {
            None
        };
        if let Some(message) = refusal {
            return Err(Error::LimitReached {
                code: "too_many_port_connections",
                message,
            });
        }
        *open.by_tenant.entry(tenant.clone()).or_default() += 1;
        let (count, pace) = open
            .by_session
            .entry(session_id.to_string())
            .or_insert_with(|| (0, Arc::new(Pace::new(policy.port_bytes_per_sec))));
        *count += 1;
        Ok(Slot {
            connections: self.clone(),
            session_id: session_id.to_string(),
            tenant,
            pace: pace.clone(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.connections.lock();
        if let Some((count, _)) = open.by_session.get_mut(&self.session_id) {
            *count -= 1;
            if *count == 0 {
                open.by_session.remove(&self.session_id);
            }
        }
        if let Some(count) = open.by_tenant.get_mut(&self.tenant) {
            *count -= 1;
            if *count == 0 {
                open.by_tenant.remove(&self.tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::limit_tests;

    fn policy(per_session: u32, per_tenant: u32) -> Policy {
        let mut policy = limit_tests::policy();
        policy.max_port_connections = per_session;
        policy.max_port_connections_per_tenant = per_tenant;
        policy
    }

    fn refusal(result: Result<Slot, Error>) -> String {
        limit_tests::refusal(result, "too_many_port_connections")
    }

    #[test]
    fn a_session_and_a_tenant_hold_at_most_their_share_and_get_it_back() {
        let connections = PortConnections::default();
        let policy = policy(2, 3);
        let first = connections.take("s1", Some("a"), &policy).unwrap();
        let _second = connections.take("s1", Some("a"), &policy).unwrap();
        assert!(refusal(connections.take("s1", Some("a"), &policy))
            .contains("(policy.max_port_connections)"));
        let third = connections.take("s2", Some("a"), &policy).unwrap();
        let message = refusal(connections.take("s3", Some("a"), &policy));
        assert!(message.contains("tenant a has 3"), "{message}");
        // Another tenant, and the administrator, are not held by tenant a's connections.
        let _other = connections.take("s4", Some("b"), &policy).unwrap();
        let _admin = connections.take("s5", None, &policy).unwrap();
        // A closed connection gives its place back to its session and its tenant.
        drop(first);
        let _again = connections.take("s1", Some("a"), &policy).unwrap();
        drop(third);
        let _fresh = connections.take("s3", Some("a"), &policy).unwrap();
        assert!(!connections.lock().by_session.contains_key("s2"));
    }

    /// On a paused clock, which moves only to the next timer that is due: what a pace waits
    /// is exact.
    #[tokio::test(start_paused = true)]
    async fn a_pace_waits_only_for_bytes_over_its_rate() {
        // 1,000 chunks of 32 KB a microsecond apart, within a rate of 1 TB/s: none waits (a
        // timer tick each would be a second more).
        let fast = Pace::new(1 << 40);
        let started = Instant::now();
        for _ in 0..1000 {
            fast.take(32 << 10).await;
            tokio::time::advance(Duration::from_micros(1)).await;
        }
        assert_eq!(started.elapsed(), Duration::from_millis(1));
        // 1 MB/s: the second 100 KB waits for the first, about 0.1 s less the slack.
        let slow = Pace::new(1 << 20);
        let started = Instant::now();
        slow.take(100 << 10).await;
        assert_eq!(started.elapsed(), Duration::ZERO);
        slow.take(100 << 10).await;
        let waited = started.elapsed();
        assert!(
            (Duration::from_millis(92)..Duration::from_millis(96)).contains(&waited),
            "{waited:?} for 200 KB at 1 MB/s"
        );
        // 100 MB in 32 KB chunks, sent as fast as the pace lets them, at 256 MB/s: the pace
        // delivers its rate (sleeping for each chunk's own share, a timer tick each time, it took 1.6 s).
        let capped = Pace::new(256 << 20);
        let started = Instant::now();
        for _ in 0..3200 {
            capped.take(32 << 10).await;
        }
        let took = started.elapsed();
        assert!(
            (Duration::from_millis(380)..Duration::from_millis(392)).contains(&took),
            "{took:?} for 100 MB at 256 MB/s"
        );
    }
}
