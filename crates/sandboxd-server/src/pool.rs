//! Warm pools: per runtime, `pool_size` sandboxes started ahead and handed out on create, so
//! opening a session costs no container start. A pooled sandbox holds a slot under
//! `max_sessions` (the pool counts against it honestly); when the service is full, a request
//! for another runtime evicts a pooled sandbox rather than being refused.

use crate::sessions::{new_session_id, Reservation};
use crate::Service;
use sandboxd_backend::{Sandbox, SandboxSpec};
use std::collections::{HashMap, HashSet, VecDeque};
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
            .map(|q| q.len() as u32)
            .sum()
    }

    fn count_for(&self, runtime: &str) -> usize {
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

    /// Every pooled sandbox, leaving the pools empty.
    pub fn drain(&self) -> Vec<Pooled> {
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
}

/// Starts fillers for the runtimes whose pool is below its size.
pub fn refill(service: &Service) {
    for runtime in service.config().runtimes.values() {
        if runtime.pool_size == 0
            || service.pools().count_for(&runtime.name) >= runtime.pool_size as usize
            || !service
                .pools()
                .filling
                .lock()
                .expect("pool lock")
                .insert(runtime.name.clone())
        {
            continue;
        }
        let service = service.clone();
        let name = runtime.name.clone();
        tokio::spawn(async move {
            fill(&service, &name).await;
            service
                .pools()
                .filling
                .lock()
                .expect("pool lock")
                .remove(&name);
        });
    }
}

async fn fill(service: &Service, runtime_name: &str) {
    let Some(runtime) = service.config().runtime(runtime_name) else {
        return;
    };
    let Some(image) = runtime.image.clone() else {
        return;
    };
    while service.pools().count_for(runtime_name) < runtime.pool_size as usize {
        // A full service leaves the pool short until sessions close.
        let Ok(reservation) = service.sessions().reserve() else {
            return;
        };
        let spec = SandboxSpec {
            session_id: new_session_id(),
            runtime: runtime_name.to_string(),
            image: image.clone(),
            limits: runtime.limits.clone(),
        };
        match service.backend().create(&spec).await {
            Ok(sandbox) => service
                .pools()
                .ready
                .lock()
                .expect("pool lock")
                .entry(runtime_name.to_string())
                .or_default()
                .push_back(Pooled {
                    sandbox,
                    reservation,
                }),
            Err(e) => {
                tracing::warn!(runtime = runtime_name, error = %e, "cannot fill the warm pool; trying again later");
                return;
            }
        }
    }
}

/// Removes pooled sandboxes in the background (their slots are free at once).
pub fn discard(service: &Service, pooled: Vec<Pooled>) {
    for Pooled {
        sandbox,
        reservation,
    } in pooled
    {
        drop(reservation);
        let service = service.clone();
        tokio::spawn(async move {
            if let Err(e) = service.backend().destroy(&sandbox).await {
                tracing::warn!(sandbox = %sandbox.session_id, error = %e, "cannot remove a pooled sandbox");
            }
        });
    }
}
