//! Things open per session (connections) or per sandbox address (name lookups), bounded.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

type Open<K> = Arc<Mutex<HashMap<K, usize>>>;

pub(crate) struct PerKey<K> {
    max: usize,
    open: Open<K>,
}

/// A place under a key's bound, given back when dropped.
pub(crate) struct Permit<K: Eq + Hash> {
    key: K,
    open: Open<K>,
}

impl<K: Eq + Hash + Clone> PerKey<K> {
    pub fn new(max: usize) -> PerKey<K> {
        PerKey {
            max,
            open: Arc::default(),
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn acquire(&self, key: &K) -> Option<Permit<K>> {
        let mut open = self.open.lock().expect("egress limits lock");
        let count = open.entry(key.clone()).or_default();
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(Permit {
            key: key.clone(),
            open: self.open.clone(),
        })
    }
}

impl<K: Eq + Hash> Drop for Permit<K> {
    fn drop(&mut self) {
        let mut open = self.open.lock().expect("egress limits lock");
        if let Some(count) = open.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_gets_at_most_its_share() {
        let limits = PerKey::new(2);
        let (a, b) = ("a".to_string(), "b".to_string());
        let first = limits.acquire(&a).unwrap();
        let _second = limits.acquire(&a).unwrap();
        assert!(limits.acquire(&a).is_none());
        assert!(limits.acquire(&b).is_some());
        drop(first);
        assert!(limits.acquire(&a).is_some());
    }
}
