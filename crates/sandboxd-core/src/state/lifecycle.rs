//! The sessions' lifecycle as events for one follower (the webhooks' dispatcher): every
//! session opened, paused, resumed and ended, in order, through a bounded queue that never
//! holds up the session it tells of.

use super::sessions::Session;
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

impl LifecycleEvent {
    fn of(kind: LifecycleKind, session: &Session) -> LifecycleEvent {
        LifecycleEvent {
            kind,
            session_id: session.id.clone(),
            runtime: session.runtime.clone(),
            tenant: session.tenant.clone(),
            labels: session.labels.clone(),
            created_at: session.created_at,
            at: OffsetDateTime::now_utc(),
            reason: session.ended.as_ref().map(|(_, why)| why.clone()),
        }
    }
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

    /// Hands the event on when someone follows; a follower that has fallen `capacity` behind
    /// loses it (counted and logged) rather than slowing the session down.
    pub(crate) fn tell(&self, kind: LifecycleKind, session: &Session) {
        let Some(follower) = self.follower.get() else {
            return;
        };
        if follower
            .try_send(LifecycleEvent::of(kind, session))
            .is_err()
        {
            let given_up = self.given_up.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(
                session = %session.id,
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
    use sandboxd_backend::Sandbox;

    fn session() -> Session {
        Session::new(
            "s1".into(),
            "python".into(),
            Some("acme".into()),
            BTreeMap::from([("k".into(), "v".into())]),
            Sandbox {
                session_id: "s1".into(),
                backend_id: "b1".into(),
            },
        )
    }

    #[tokio::test]
    async fn events_reach_the_one_follower_and_a_full_queue_never_blocks() {
        let lifecycle = Lifecycle::default();
        lifecycle.tell(LifecycleKind::Created, &session());
        let mut events = lifecycle.follow(2).unwrap();
        assert!(lifecycle.follow(2).is_none());
        for kind in [
            LifecycleKind::Created,
            LifecycleKind::Paused,
            LifecycleKind::Resumed,
        ] {
            lifecycle.tell(kind, &session());
        }
        let first = events.recv().await.unwrap();
        assert_eq!(first.kind, LifecycleKind::Created);
        assert_eq!(
            (first.tenant.as_deref(), first.runtime.as_str()),
            (Some("acme"), "python")
        );
        assert_eq!(events.recv().await.unwrap().kind, LifecycleKind::Paused);
        assert!(
            events.try_recv().is_err(),
            "the third was past the capacity"
        );
        assert_eq!(lifecycle.given_up.load(Ordering::Relaxed), 1);
    }
}
