//! Lifecycle webhooks: each `[webhooks.NAME]` of the config is told, by an HTTP `POST`, of
//! every session opened, paused, resumed and ended (with the reason), in order. The payload,
//! its headers and its signature (`e2b-signature`: SHA-256 of the secret and the body) are
//! E2B's. A receiver that fails is tried again with a growing pause; nothing waits on it:
//! each webhook's queue is bounded and gives up its oldest event when full. What became of
//! each event is in its session's activity log (action `webhook`).

mod client;
mod dispatch;
mod error;
mod outbox;
mod payload;

pub use dispatch::start;
pub use error::WebhooksError;
