//! Connections open per session, bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub(crate) struct PerSession {
    max: usize,
    open: Arc<Mutex<HashMap<String, usize>>>,
}

/// A place under a session's bound, given back when dropped.
pub(crate) struct Permit {
    session_id: String,
    open: Arc<Mutex<HashMap<String, usize>>>,
}

impl PerSession {
    pub fn new(max: usize) -> PerSession {
        PerSession {
            max,
            open: Arc::default(),
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn acquire(&self, session_id: &str) -> Option<Permit> {
        let mut open = self.open.lock().expect("egress limits lock");
        let count = open.entry(session_id.to_string()).or_default();
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(Permit {
            session_id: session_id.to_string(),
            open: self.open.clone(),
        })
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut open = self.open.lock().expect("egress limits lock");
        if let Some(count) = open.get_mut(&self.session_id) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.session_id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_gets_at_most_its_share() {
        let limits = PerSession::new(2);
        let first = limits.acquire("a").unwrap();
        let _second = limits.acquire("a").unwrap();
        assert!(limits.acquire("a").is_none());
        assert!(limits.acquire("b").is_some());
        drop(first);
        assert!(limits.acquire("a").is_some());
    }
}
