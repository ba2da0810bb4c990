//! One webhook's outbox: the events waiting for it, in order, at most its `queue` of them,
//! and the worker that delivers them one at a time, each tried up to its `attempts` with a
//! growing pause between tries. Each event's outcome goes into its session's activity log.

use crate::client::HttpClient;
use crate::payload;
use bytes::Bytes;
use http_body_util::Full;
use sandboxd_config::Webhook;
use sandboxd_core::{Core, LifecycleEvent, Outcome};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// The longest pause between two tries.
const MAX_PAUSE: Duration = Duration::from_secs(30);

pub(crate) struct Outbox {
    hook: Webhook,
    waiting: Mutex<VecDeque<LifecycleEvent>>,
    ready: Notify,
}

impl Outbox {
    pub(crate) fn new(hook: Webhook) -> Outbox {
        Outbox {
            hook,
            waiting: Mutex::default(),
            ready: Notify::new(),
        }
    }

    pub(crate) fn wants(&self, event: &LifecycleEvent) -> bool {
        self.hook.wants(event.kind, event.tenant.as_deref())
    }

    /// Queues `event`; when the queue is full its oldest event is given up, and its session's
    /// log says so.
    pub(crate) fn push(&self, core: &Core, event: LifecycleEvent) {
        let given_up = {
            let mut waiting = self.waiting.lock().expect("outbox lock");
            let oldest = (waiting.len() >= self.hook.queue)
                .then(|| waiting.pop_front())
                .flatten();
            waiting.push_back(event);
            oldest
        };
        self.ready.notify_one();
        if let Some(event) = given_up {
            tracing::warn!(webhook = %self.hook.name, session = %event.session_id, "a webhook's queue is full: its oldest event was given up");
            let why = format!(
                "given up: {} events were already waiting for this webhook (webhooks.{}.queue)",
                self.hook.queue, self.hook.name
            );
            core.record_webhook(
                &event.session_id,
                &self.hook.name,
                event.kind.event_type(),
                Outcome::failed(0, why),
            );
        }
    }

    /// Delivers the queued events one after the other, for as long as the service runs.
    pub(crate) async fn run(self: Arc<Self>, core: Core, client: HttpClient) {
        loop {
            let next = self.waiting.lock().expect("outbox lock").pop_front();
            let Some(event) = next else {
                self.ready.notified().await;
                continue;
            };
            let started = Instant::now();
            let result = self.deliver(&core, &client, &event).await;
            let took = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let outcome = match result {
                Ok(()) => Outcome::ok(took),
                Err(why) => {
                    tracing::warn!(webhook = %self.hook.name, session = %event.session_id, error = %why, "a webhook was not told of an event");
                    Outcome::failed(took, why)
                }
            };
            core.record_webhook(
                &event.session_id,
                &self.hook.name,
                event.kind.event_type(),
                outcome,
            );
        }
    }

    /// Tries the event until the receiver answers 2xx or the tries run out; the error says
    /// how the last try failed.
    async fn deliver(
        &self,
        core: &Core,
        client: &HttpClient,
        event: &LifecycleEvent,
    ) -> Result<(), String> {
        let limits = core
            .config()
            .runtimes
            .get(&event.runtime)
            .map(|runtime| &runtime.limits);
        let body = Bytes::from(payload::body(event, &payload::new_id(), limits));
        let signature = payload::signature(self.hook.secret.expose(), &body);
        let mut pause = Duration::from_secs(1);
        let mut last_failure = String::new();
        for attempt in 1..=self.hook.attempts {
            if attempt > 1 {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
            match self.try_once(client, &body, &signature).await {
                Ok(()) => return Ok(()),
                Err(why) => last_failure = why,
            }
        }
        Err(format!(
            "not delivered in {} tries; the last: {last_failure}",
            self.hook.attempts
        ))
    }

    async fn try_once(
        &self,
        client: &HttpClient,
        body: &Bytes,
        signature: &str,
    ) -> Result<(), String> {
        let request = http::Request::post(&self.hook.url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(
                http::header::USER_AGENT,
                concat!("sandboxd/", env!("CARGO_PKG_VERSION")),
            )
            .header("e2b-webhook-id", &self.hook.name)
            .header("e2b-delivery-id", payload::new_id())
            .header("e2b-signature-version", payload::SIGNATURE_VERSION)
            .header("e2b-signature", signature)
            .body(Full::new(body.clone()))
            .map_err(|e| format!("cannot make the request: {e}"))?;
        // The answer's body is never read: only its status counts.
        match tokio::time::timeout(self.hook.timeout, client.request(request)).await {
            Err(_) => Err(format!(
                "no answer within {} s (webhooks.{}.timeout_secs)",
                self.hook.timeout.as_secs(),
                self.hook.name
            )),
            Ok(Err(e)) => Err(error_chain(&e)),
            Ok(Ok(response)) if response.status().is_success() => Ok(()),
            Ok(Ok(response)) => Err(format!("the receiver answered {}", response.status())),
        }
    }
}

/// An error and its causes, one line: the client's own says only "client error (Connect)".
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
