//! What the webhooks' dispatcher needs of the core: the sessions' lifecycle, and a place in
//! each session's activity log for what became of telling a webhook about it.

use crate::core::Core;
use crate::state::activity::{self, Actor, Outcome};
use crate::state::lifecycle::LifecycleEvent;
use tokio::sync::mpsc;

impl Core {
    /// Every session opened, paused, resumed and ended from now on, in order; see
    /// [`Sessions::lifecycle`](crate::sessions::Sessions::lifecycle).
    pub fn lifecycle_events(&self, capacity: usize) -> Option<mpsc::Receiver<LifecycleEvent>> {
        self.sessions().lifecycle(capacity)
    }

    /// Records in the session's log that webhook `name` was told of `event_type` (or why not):
    /// the webhook's name and the event, never the payload or the URL's secret parts.
    pub fn record_webhook(&self, session_id: &str, name: &str, event_type: &str, outcome: Outcome) {
        activity::append(
            self.sessions(),
            session_id,
            &Actor::service(),
            "webhook",
            &format!("{name} {event_type}"),
            outcome,
        );
    }
}
