//! Starting the webhooks: an outbox and a worker per `[webhooks.NAME]`, and the dispatcher
//! that hands each lifecycle event to the outboxes that want it.

use crate::client::new_client;
use crate::error::WebhooksError;
use crate::outbox::Outbox;
use sandboxd_core::Core;
use std::sync::Arc;

/// Lifecycle events the dispatcher may fall behind by before the core gives one up; it only
/// moves each into the outboxes, so this is reached only when the service itself stalls.
const EVENTS_WAITING: usize = 4096;

/// Starts delivering the core's lifecycle events to the config's webhooks (nothing when it
/// names none). Runs on the current Tokio runtime for as long as it does; events still
/// waiting when the service stops are not delivered.
pub fn start(core: &Core) -> Result<(), WebhooksError> {
    let hooks = core.config().webhooks.clone();
    if hooks.is_empty() {
        return Ok(());
    }
    let mut outboxes = Vec::with_capacity(hooks.len());
    for hook in hooks {
        let client =
            new_client(hook.ca_pem.as_deref()).map_err(|message| WebhooksError::Setup {
                name: hook.name.clone(),
                message,
            })?;
        let outbox = Arc::new(Outbox::new(hook));
        tokio::spawn(outbox.clone().run(core.clone(), client));
        outboxes.push(outbox);
    }
    let mut events = core
        .lifecycle_events(EVENTS_WAITING)
        .ok_or(WebhooksError::AlreadyFollowed)?;
    let core = core.clone();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            for outbox in outboxes.iter().filter(|outbox| outbox.wants(&event)) {
                outbox.push(&core, event.clone());
            }
        }
    });
    Ok(())
}
