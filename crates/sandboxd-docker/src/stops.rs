//! The engine's event stream, watched for this instance's containers that stop or go, so
//! the service lists its sandboxes on word from the engine instead of every second (with
//! thousands of containers, each listing is the engine's JSON of all of them).

use crate::link::EngineLink;
use bollard::query_parameters::EventsOptionsBuilder;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Watches the engine's events for containers labelled `instance_label` (`KEY=VALUE`) that
/// died or were destroyed; see `Backend::watch_stops`.
pub(crate) fn watch(link: Arc<EngineLink>, instance_label: String) -> mpsc::Receiver<()> {
    // One waiting word is enough: the listing it leads to sees every stop before it.
    let (sender, receiver) = mpsc::channel(1);
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().saturating_sub(1));
    tokio::spawn(async move {
        let docker = match link.engine().await {
            Ok(engine) => &engine.docker,
            Err(e) => {
                tracing::debug!(error = %e, "no engine to watch the events of");
                return;
            }
        };
        let filters = HashMap::from([
            ("type", vec!["container".to_string()]),
            ("event", vec!["die".to_string(), "destroy".to_string()]),
            ("label", vec![instance_label]),
        ]);
        // From a second before the watch was asked for, so a stop between the listing that
        // follows and the stream's start is replayed rather than missed.
        let options = EventsOptionsBuilder::default()
            .since(&since.to_string())
            .filters(&filters)
            .build();
        let mut events = docker.events(Some(options));
        loop {
            tokio::select! {
                event = events.next() => match event {
                    Some(Ok(_)) => {
                        if let Err(mpsc::error::TrySendError::Closed(())) = sender.try_send(()) {
                            return;
                        }
                    }
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "the engine's event stream broke");
                        return;
                    }
                    None => return,
                },
                () = sender.closed() => return,
            }
        }
    });
    receiver
}
