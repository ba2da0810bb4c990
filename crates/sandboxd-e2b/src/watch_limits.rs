//! What polled watchers may hold, so that no tenant can take the service's memory: a watcher's
//! changes not yet polled are charged in bytes to its [`WatchSlot`], its tenant and the
//! service. How many watches a session, a tenant and the service hold is the core's to count
//! (`policy.max_watches_per_session`, `max_watches_per_tenant`), for every face alike.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use sandboxd_config::WatcherBytes;

/// Whose a watch is: the administrator's key is `None`.
type Tenant = Option<String>;

#[derive(Default)]
struct Held {
    bytes: usize,
    bytes_by_tenant: HashMap<Tenant, usize>,
}

/// What all polled watchers hold, within `e2b.watcher_bytes*` (the in-all bound is what the
/// service's memory grows by at most, however many tenants flood their watchers); cloned, it
/// is shared.
#[derive(Clone)]
pub struct WatchLimits {
    held: Arc<Mutex<Held>>,
    bounds: WatcherBytes,
}

/// One watcher's account of the bytes its queue holds; dropping it gives them back.
pub struct WatchSlot {
    limits: WatchLimits,
    tenant: Tenant,
    bytes: usize,
}

impl WatchLimits {
    pub fn new(bounds: WatcherBytes) -> WatchLimits {
        WatchLimits {
            held: Arc::default(),
            bounds,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An empty account for a watcher of `tenant`.
    pub fn open(&self, tenant: Option<&str>) -> WatchSlot {
        WatchSlot {
            limits: self.clone(),
            tenant: tenant.map(str::to_string),
            bytes: 0,
        }
    }
}

impl WatchSlot {
    /// Charges `bytes` more of queued changes to this watch, its tenant and the service; or,
    /// charging nothing, says which limit they would pass.
    pub fn charge(&mut self, bytes: usize) -> Result<(), String> {
        let bounds = self.limits.bounds;
        let bound = |limit: u64| usize::try_from(limit).unwrap_or(usize::MAX);
        let mut held = self.limits.lock();
        let of_tenant = held.bytes_by_tenant.get(&self.tenant).copied().unwrap_or(0);
        let mib = |limit: u64| limit >> 20;
        if self.bytes + bytes > bound(bounds.per_watcher) {
            return Err(format!(
                "more than {} MiB of changes waited to be polled (a watcher's limit, e2b.watcher_bytes)",
                mib(bounds.per_watcher)
            ));
        }
        if of_tenant + bytes > bound(bounds.per_tenant) {
            return Err(format!(
                "this tenant's watchers hold {} MiB of changes not yet polled (a tenant's limit, e2b.watcher_bytes_per_tenant)",
                mib(bounds.per_tenant)
            ));
        }
        if held.bytes + bytes > bound(bounds.in_all) {
            return Err(format!(
                "the service's watchers hold {} MiB of changes not yet polled (the service's limit, e2b.watcher_bytes_in_all)",
                mib(bounds.in_all)
            ));
        }
        self.bytes += bytes;
        held.bytes += bytes;
        *held.bytes_by_tenant.entry(self.tenant.clone()).or_default() += bytes;
        Ok(())
    }

    /// Gives back everything charged (the changes were polled).
    pub fn refund_all(&mut self) {
        let bytes = std::mem::take(&mut self.bytes);
        let mut held = self.limits.lock();
        held.bytes -= bytes;
        decrement(&mut held.bytes_by_tenant, &self.tenant, bytes);
    }
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        self.refund_all();
    }
}

/// Takes `by` off `key`'s count, forgetting the key at 0 (tenants come and go).
fn decrement<K: Eq + std::hash::Hash>(counts: &mut HashMap<K, usize>, key: &K, by: usize) {
    if let Some(count) = counts.get_mut(key) {
        *count -= by;
        if *count == 0 {
            counts.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PER_WATCHER: usize = 1000;
    const PER_TENANT: usize = 4000;
    const IN_ALL: usize = 12_000;

    #[test]
    fn queued_bytes_are_bounded_per_watcher_per_tenant_and_in_all() {
        let limits = WatchLimits::new(WatcherBytes {
            per_watcher: PER_WATCHER as u64,
            per_tenant: PER_TENANT as u64,
            in_all: IN_ALL as u64,
        });
        let mut one = limits.open(Some("a"));
        one.charge(PER_WATCHER).unwrap();
        let over = one.charge(1).unwrap_err();
        assert!(over.contains("a watcher's limit"), "{over}");
        one.refund_all();
        one.charge(PER_WATCHER).unwrap();

        let per_tenant = PER_TENANT / PER_WATCHER;
        let mut full: Vec<WatchSlot> = (1..per_tenant)
            .map(|_| {
                let mut slot = limits.open(Some("a"));
                slot.charge(PER_WATCHER).unwrap();
                slot
            })
            .collect();
        let mut last = limits.open(Some("a"));
        let over = last.charge(1).unwrap_err();
        assert!(over.contains("a tenant's limit"), "{over}");

        let tenants = IN_ALL / PER_TENANT;
        for t in 1..tenants {
            for _ in 0..per_tenant {
                let mut slot = limits.open(Some(&format!("t{t}")));
                slot.charge(PER_WATCHER).unwrap();
                full.push(slot);
            }
        }
        let mut other = limits.open(Some("other"));
        let over = other.charge(1).unwrap_err();
        assert!(over.contains("the service's limit"), "{over}");
        // Dropped watchers give their bytes back.
        drop(full);
        other.charge(PER_WATCHER).unwrap();
        drop((one, last, other));
        let held = limits.lock();
        assert_eq!(held.bytes, 0);
        assert!(held.bytes_by_tenant.is_empty());
    }
}
