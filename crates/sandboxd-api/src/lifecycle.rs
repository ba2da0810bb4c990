//! Lifecycle events: the moments of a session the operator's webhooks are told of.

use serde::{Deserialize, Serialize};

/// A moment in a session's life. Webhooks name them by E2B's event types
/// ([`LifecycleKind::event_type`]), so a receiver written for E2B reads them unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LifecycleKind {
    /// Opened (by any face, a fork included).
    Created,
    Paused,
    Resumed,
    /// Ended, for whatever reason: closed, expired, removed outside, failed.
    Killed,
}

impl LifecycleKind {
    pub const ALL: [LifecycleKind; 4] = [
        LifecycleKind::Created,
        LifecycleKind::Paused,
        LifecycleKind::Resumed,
        LifecycleKind::Killed,
    ];

    /// Its name in the config (`events = ["created", ...]`).
    pub fn name(self) -> &'static str {
        match self {
            LifecycleKind::Created => "created",
            LifecycleKind::Paused => "paused",
            LifecycleKind::Resumed => "resumed",
            LifecycleKind::Killed => "killed",
        }
    }

    /// E2B's type for it, the `type` of a webhook's payload.
    pub fn event_type(self) -> &'static str {
        match self {
            LifecycleKind::Created => "sandbox.lifecycle.created",
            LifecycleKind::Paused => "sandbox.lifecycle.paused",
            LifecycleKind::Resumed => "sandbox.lifecycle.resumed",
            LifecycleKind::Killed => "sandbox.lifecycle.killed",
        }
    }

    /// The kind a config names, by its name or E2B's type.
    pub fn parse(text: &str) -> Option<LifecycleKind> {
        LifecycleKind::ALL
            .into_iter()
            .find(|kind| kind.name() == text || kind.event_type() == text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_read_by_its_name_or_e2bs_type() {
        for kind in LifecycleKind::ALL {
            assert_eq!(LifecycleKind::parse(kind.name()), Some(kind));
            assert_eq!(LifecycleKind::parse(kind.event_type()), Some(kind));
        }
        assert_eq!(LifecycleKind::parse("sandbox.lifecycle.updated"), None);
    }
}
