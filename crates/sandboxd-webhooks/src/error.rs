//! Why the webhooks could not start.

#[derive(Debug, thiserror::Error)]
pub enum WebhooksError {
    #[error("webhook {name}: {message}")]
    Setup { name: String, message: String },
    #[error("the sessions' lifecycle is already followed by another dispatcher")]
    AlreadyFollowed,
}
