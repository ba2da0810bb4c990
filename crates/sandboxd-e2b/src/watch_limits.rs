//! What directory watches may hold, so that no tenant or sandbox can take the service's memory
//! or the other tenants' watches: each watch (a polled watcher or a WatchDir stream) holds a
//! [`WatchSlot`], counted per sandbox, per tenant and in all; a polled watcher's changes not
//! yet polled are charged in bytes to its slot, its tenant and the service.

use crate::errors::{Code, E2bError};
use axum::http::StatusCode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Watches one sandbox may hold at once, polled and streamed together. Each holds one of the
/// sandbox agent's 64 connections; with `policy.max_port_connections` at its most (48), this
/// leaves 8 for its commands and file operations.
pub const MAX_WATCHES_PER_SANDBOX: usize = 8;
/// Watches one tenant's sandboxes may hold together (the administrator's key counts as one).
pub const MAX_WATCHES_PER_TENANT: usize = 256;
/// Watches the service holds at once, all tenants together.
pub const MAX_WATCHES: usize = 1024;
/// Bytes of changes one watcher may hold until polled; past it, it reports lost changes.
pub const MAX_QUEUED_BYTES: usize = 1 << 20;
/// Bytes of changes one tenant's watchers may hold together until polled.
pub const MAX_QUEUED_BYTES_PER_TENANT: usize = 16 << 20;
/// Bytes of changes all watchers may hold together until polled: what the service's memory
/// grows by at most, however many tenants flood their watchers.
pub const MAX_QUEUED_BYTES_IN_ALL: usize = 64 << 20;

/// Whose a watch is: the administrator's key is `None`.
type Tenant = Option<String>;

#[derive(Default)]
struct Held {
    watches: usize,
    watches_by_sandbox: HashMap<String, usize>,
    watches_by_tenant: HashMap<Tenant, usize>,
    bytes: usize,
    bytes_by_tenant: HashMap<Tenant, usize>,
}

/// What all watches hold; cloned, it is shared.
#[derive(Clone, Default)]
pub struct WatchLimits {
    held: Arc<Mutex<Held>>,
}

/// One watch's place under the limits, and the bytes its queue holds; dropping it gives both
/// back.
pub struct WatchSlot {
    limits: WatchLimits,
    sandbox: String,
    tenant: Tenant,
    bytes: usize,
}

impl WatchLimits {
    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for one more watch of `sandbox`, owned by `tenant`; or which limit it passes
    /// and what to do.
    pub fn take(&self, sandbox: &str, tenant: Option<&str>) -> Result<WatchSlot, E2bError> {
        let tenant = tenant.map(str::to_string);
        let mut held = self.lock();
        let of_sandbox = held.watches_by_sandbox.get(sandbox).copied().unwrap_or(0);
        let of_tenant = held.watches_by_tenant.get(&tenant).copied().unwrap_or(0);
        let refusal = if of_sandbox >= MAX_WATCHES_PER_SANDBOX {
            format!(
                "sandbox {sandbox} has {of_sandbox} watchers open, as many as one sandbox may (each holds one of its agent's connections): stop one (WatchHandle.stop) first"
            )
        } else if of_tenant >= MAX_WATCHES_PER_TENANT {
            let whose = match &tenant {
                Some(name) => format!("tenant \"{name}\""),
                None => "the administrator's key".into(),
            };
            format!(
                "{whose} has {of_tenant} watchers open across its sandboxes, as many as one tenant may: stop some (WatchHandle.stop) or kill the sandboxes no longer needed"
            )
        } else if held.watches >= MAX_WATCHES {
            format!(
                "the service has {} watchers open, as many as it holds for all tenants together: try again later",
                held.watches
            )
        } else {
            *held
                .watches_by_sandbox
                .entry(sandbox.to_string())
                .or_default() += 1;
            *held.watches_by_tenant.entry(tenant.clone()).or_default() += 1;
            held.watches += 1;
            return Ok(WatchSlot {
                limits: self.clone(),
                sandbox: sandbox.to_string(),
                tenant,
                bytes: 0,
            });
        };
        Err(E2bError::new(
            Code::ResourceExhausted,
            StatusCode::TOO_MANY_REQUESTS,
            refusal,
        ))
    }
}

impl WatchSlot {
    /// Charges `bytes` more of queued changes to this watch, its tenant and the service; or,
    /// charging nothing, says which limit they would pass.
    pub fn charge(&mut self, bytes: usize) -> Result<(), String> {
        let mut held = self.limits.lock();
        let of_tenant = held.bytes_by_tenant.get(&self.tenant).copied().unwrap_or(0);
        let mib = |limit: usize| limit >> 20;
        if self.bytes + bytes > MAX_QUEUED_BYTES {
            return Err(format!(
                "more than {} MiB of changes waited to be polled (a watcher's limit)",
                mib(MAX_QUEUED_BYTES)
            ));
        }
        if of_tenant + bytes > MAX_QUEUED_BYTES_PER_TENANT {
            return Err(format!(
                "this tenant's watchers hold {} MiB of changes not yet polled (a tenant's limit)",
                mib(MAX_QUEUED_BYTES_PER_TENANT)
            ));
        }
        if held.bytes + bytes > MAX_QUEUED_BYTES_IN_ALL {
            return Err(format!(
                "the service's watchers hold {} MiB of changes not yet polled (the service's limit)",
                mib(MAX_QUEUED_BYTES_IN_ALL)
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
        let mut held = self.limits.lock();
        held.watches -= 1;
        decrement(&mut held.watches_by_sandbox, &self.sandbox, 1);
        decrement(&mut held.watches_by_tenant, &self.tenant, 1);
    }
}

/// Takes `by` off `key`'s count, forgetting the key at 0 (sandboxes come and go).
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

    fn refused(result: Result<WatchSlot, E2bError>) -> E2bError {
        let error = result.err().expect("refused");
        assert_eq!(error.code, Code::ResourceExhausted);
        assert_eq!(error.status, StatusCode::TOO_MANY_REQUESTS);
        error
    }

    #[test]
    fn a_sandbox_and_a_tenant_hold_at_most_their_share_and_get_it_back() {
        let limits = WatchLimits::default();
        let mut slots: Vec<WatchSlot> = (0..MAX_WATCHES_PER_SANDBOX)
            .map(|_| limits.take("s1", Some("a")).unwrap())
            .collect();
        let error = refused(limits.take("s1", Some("a")));
        assert!(error.message.contains("as many as one sandbox may"));
        // The tenant's other sandboxes, up to the tenant's limit.
        for i in 0..(MAX_WATCHES_PER_TENANT - MAX_WATCHES_PER_SANDBOX) {
            let sandbox = format!("s{}", 2 + i / MAX_WATCHES_PER_SANDBOX);
            slots.push(limits.take(&sandbox, Some("a")).unwrap());
        }
        let error = refused(limits.take("s-new", Some("a")));
        assert!(error.message.contains("tenant \"a\""), "{}", error.message);
        // Another tenant is not held up by tenant a.
        let theirs = limits.take("t1", Some("b")).unwrap();
        slots.pop();
        limits.take("s-new", Some("a")).unwrap();
        drop(theirs);
        drop(slots);
        let held = limits.lock();
        assert_eq!(held.watches, 0);
        assert!(held.watches_by_sandbox.is_empty() && held.watches_by_tenant.is_empty());
    }

    #[test]
    fn the_service_holds_at_most_its_cap_of_watches() {
        let limits = WatchLimits::default();
        let tenants = MAX_WATCHES / MAX_WATCHES_PER_TENANT;
        let _slots: Vec<WatchSlot> = (0..MAX_WATCHES)
            .map(|i| {
                let tenant = format!("t{}", i % tenants);
                limits
                    .take(&format!("s{}", i / MAX_WATCHES_PER_SANDBOX), Some(&tenant))
                    .unwrap()
            })
            .collect();
        let error = refused(limits.take("another", Some("another")));
        assert!(error.message.contains("for all tenants together"));
    }

    #[test]
    fn queued_bytes_are_bounded_per_watcher_per_tenant_and_in_all() {
        let limits = WatchLimits::default();
        let mut one = limits.take("s1", Some("a")).unwrap();
        one.charge(MAX_QUEUED_BYTES).unwrap();
        let over = one.charge(1).unwrap_err();
        assert!(over.contains("a watcher's limit"), "{over}");
        one.refund_all();
        one.charge(MAX_QUEUED_BYTES).unwrap();

        let per_tenant = MAX_QUEUED_BYTES_PER_TENANT / MAX_QUEUED_BYTES;
        let mut full: Vec<WatchSlot> = (1..per_tenant)
            .map(|i| {
                let mut slot = limits.take(&format!("s{i}"), Some("a")).unwrap();
                slot.charge(MAX_QUEUED_BYTES).unwrap();
                slot
            })
            .collect();
        let mut last = limits.take("s-last", Some("a")).unwrap();
        let over = last.charge(1).unwrap_err();
        assert!(over.contains("a tenant's limit"), "{over}");

        let tenants = MAX_QUEUED_BYTES_IN_ALL / MAX_QUEUED_BYTES_PER_TENANT;
        for t in 1..tenants {
            for i in 0..per_tenant {
                let mut slot = limits
                    .take(&format!("t{t}-{i}"), Some(&format!("t{t}")))
                    .unwrap();
                slot.charge(MAX_QUEUED_BYTES).unwrap();
                full.push(slot);
            }
        }
        let mut other = limits.take("other", Some("other")).unwrap();
        let over = other.charge(1).unwrap_err();
        assert!(over.contains("the service's limit"), "{over}");
        // Dropped watchers give their bytes back.
        drop(full);
        other.charge(MAX_QUEUED_BYTES).unwrap();
        drop((one, last, other));
        let held = limits.lock();
        assert_eq!(held.bytes, 0);
        assert!(held.bytes_by_tenant.is_empty());
    }
}
