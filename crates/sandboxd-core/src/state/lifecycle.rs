//! The sessions' lifecycle as events for one follower (the webhooks' dispatcher): every
//! session opened, paused, resumed and ended, in order, through a bounded queue that never
//! holds up the session it tells of.

use sandboxd_api::LifecycleKind;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use time::OffsetDateTime;
use tokio::sync::mpsc;

/// One moment of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct LifecycleEvent {
    pub kind: LifecycleKind,
    pub session_id: String,
    pub runtime: String,
    pub tenant: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub created_at: OffsetDateTime,
    pub at: OffsetDateTime,
    /// Why it ended (`Killed` only).
    pub reason: Option<String>,
}

/// Where the events go once someone follows them; shared by every copy of the sessions' table.
#[derive(Clone, Default)]
pub(crate) struct Lifecycle {
    follower: Arc<OnceLock<mpsc::Sender<LifecycleEvent>>>,
    given_up: Arc<AtomicU64>,
}

impl Lifecycle {
    /// The events from now on, `capacity` of them waiting at most; only the first caller gets
    /// them (`None` after).
    pub(crate) fn follow(&self, capacity: usize) -> Option<mpsc::Receiver<LifecycleEvent>> {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        self.follower.set(sender).ok()?;
        Some(receiver)
    }

    /// Hands the event `make` makes on when someone follows (made only then); a follower that
    /// has fallen `capacity` behind loses it (counted and logged) rather than slowing the
    /// session down.
    pub(crate) fn tell(&self, make: impl FnOnce() -> LifecycleEvent) {
        let Some(follower) = self.follower.get() else {
            return;
        };
        let event = make();
        let (session, kind) = (event.session_id.clone(), event.kind);
        if follower.try_send(event).is_err() {
            let given_up = self.given_up.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(
                session = %session,
                event = kind.name(),
                given_up,
                "a lifecycle event was given up: its follower is too far behind"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: LifecycleKind) -> LifecycleEvent {
        LifecycleEvent {
            kind,
            session_id: "s1".into(),
            runtime: "python".into(),
            tenant: Some("acme".into()),
            labels: BTreeMap::from([("k".into(), "v".into())]),
            created_at: OffsetDateTime::now_utc(),
            at: OffsetDateTime::now_utc(),
            reason: None,
        }
    }

    #[tokio::test]
    async fn events_reach_the_one_follower_and_a_full_queue_never_blocks() {
        let lifecycle = Lifecycle::default();
        lifecycle.tell(|| panic!("made with nobody following"));
        let mut events = lifecycle.follow(2).unwrap();
        assert!(lifecycle.follow(2).is_none());
        for kind in [
            LifecycleKind::Created,
            LifecycleKind::Paused,
            LifecycleKind::Resumed,
        ] {
            lifecycle.tell(|| event(kind));
        }
        let first = events.recv().await.unwrap();
        assert_eq!(first.kind, LifecycleKind::Created);
        assert_eq!(first.tenant.as_deref(), Some("acme"));
        assert_eq!(events.recv().await.unwrap().kind, LifecycleKind::Paused);
        assert!(
            events.try_recv().is_err(),
            "the third was past the capacity"
        );
        assert_eq!(lifecycle.given_up.load(Ordering::Relaxed), 1);
    }
}
