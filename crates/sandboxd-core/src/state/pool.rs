//! Warm pools: per runtime, `pool_size` sandboxes started ahead and handed out on create, so
//! opening a session costs no container start. A pooled sandbox holds a slot under
//! `max_sessions` (the pool counts against it honestly); when the service is full, a request
//! for another runtime evicts a pooled sandbox rather than being refused.

use crate::state::sessions::Reservation;
use sandboxd_backend::Sandbox;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A started sandbox waiting for a session, with the slot it holds.
pub struct Pooled {
    pub sandbox: Sandbox,
    pub reservation: Reservation,
}

#[derive(Default)]
pub struct Pools {
    ready: Mutex<HashMap<String, VecDeque<Pooled>>>,
    /// Runtimes with a refill under way, so there is one filler per runtime at a time.
    filling: Mutex<HashSet<String>>,
    /// Set at shutdown by [`Pools::drain`]: nothing is pooled or filled any more.
    closed: AtomicBool,
}

impl Pools {
    pub fn take(&self, runtime: &str) -> Option<Pooled> {
        self.ready
            .lock()
            .expect("pool lock")
            .get_mut(runtime)?
            .pop_front()
    }

    pub fn count(&self) -> u32 {
        self.ready
            .lock()
            .expect("pool lock")
            .values()
            .map(|q| u32::try_from(q.len()).unwrap_or(u32::MAX))
            .sum()
    }

    pub fn count_for(&self, runtime: &str) -> usize {
        self.ready
            .lock()
            .expect("pool lock")
            .get(runtime)
            .map_or(0, VecDeque::len)
    }

    /// Takes one pooled sandbox from the largest pool, to free its slot.
    pub fn evict_one(&self) -> Option<Pooled> {
        let mut ready = self.ready.lock().expect("pool lock");
        let largest = ready.values_mut().max_by_key(|q| q.len())?;
        largest.pop_back()
    }

    /// Every pooled sandbox, leaving the pools empty and closed: a filler's sandbox that
    /// comes after is handed back by [`Pools::push`] for its filler to remove.
    pub fn drain(&self) -> Vec<Pooled> {
        self.closed.store(true, Ordering::SeqCst);
        let mut ready = self.ready.lock().expect("pool lock");
        ready.values_mut().flat_map(|q| q.drain(..)).collect()
    }

    /// Drops pooled sandboxes that the backend no longer runs.
    pub fn retain(&self, alive: impl Fn(&Sandbox) -> bool) {
        for queue in self.ready.lock().expect("pool lock").values_mut() {
            queue.retain(|p| alive(&p.sandbox));
        }
    }

    pub fn sandboxes(&self) -> Vec<Sandbox> {
        let ready = self.ready.lock().expect("pool lock");
        ready
            .values()
            .flatten()
            .map(|p| p.sandbox.clone())
            .collect()
    }

    /// Pools the sandbox; once the pools are drained it is handed back.
    pub fn push(&self, runtime: &str, pooled: Pooled) -> Result<(), Pooled> {
        let mut ready = self.ready.lock().expect("pool lock");
        // Read under the lock drain takes, so no push lands after its drain.
        if self.closed.load(Ordering::SeqCst) {
            return Err(pooled);
        }
        ready
            .entry(runtime.to_string())
            .or_default()
            .push_back(pooled);
        Ok(())
    }

    /// Marks the runtime's pool as being filled; false if a filler is already at it, or the
    /// pools are drained.
    pub fn start_filling(&self, runtime: &str) -> bool {
        !self.closed.load(Ordering::SeqCst)
            && self
                .filling
                .lock()
                .expect("pool lock")
                .insert(runtime.to_string())
    }

    /// Whether a filler is still at work.
    pub fn any_filling(&self) -> bool {
        !self.filling.lock().expect("pool lock").is_empty()
    }

    pub fn done_filling(&self, runtime: &str) {
        self.filling.lock().expect("pool lock").remove(runtime);
    }
}
