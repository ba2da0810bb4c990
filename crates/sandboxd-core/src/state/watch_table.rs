//! The directory watches held, counted per session, per tenant and in all: leaf state that
//! [`crate::Core::watch`] takes a place from before it asks the agent, so a refused watch costs
//! no agent connection, and that every face's watches (REST and MCP streams, E2B's watchers)
//! share. A place is given back when its watch is dropped.

use crate::error::Error;
use sandboxd_api::Policy;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Whose a watch is: `None` for the administrator's sessions, which count as one tenant.
type Tenant = Option<String>;

#[derive(Default)]
struct Held {
    all: usize,
    by_session: HashMap<String, usize>,
    by_tenant: HashMap<Tenant, usize>,
}

/// The watches held; cloned, it is shared.
#[derive(Clone, Default)]
pub struct Watches {
    held: Arc<Mutex<Held>>,
}

/// One watch's place; dropping it gives the place back.
pub struct WatchPlace {
    watches: Watches,
    session: String,
    tenant: Tenant,
}

impl Watches {
    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for one more watch of `session`, owned by `tenant`, or which limit it passes.
    pub(crate) fn take(
        &self,
        policy: &Policy,
        session: &str,
        tenant: Option<&str>,
    ) -> Result<WatchPlace, Error> {
        let tenant: Tenant = tenant.map(str::to_string);
        let mut held = self.lock();
        let of_session = held.by_session.get(session).copied().unwrap_or(0);
        let of_tenant = held.by_tenant.get(&tenant).copied().unwrap_or(0);
        let refusal = if of_session >= policy.max_watches_per_session as usize {
            format!(
                "session {session} has {of_session} directory watches open, as many as one session may (policy.max_watches_per_session; each holds one of its agent's connections): stop one first"
            )
        } else if of_tenant >= policy.max_watches_per_tenant as usize {
            let whose = match &tenant {
                Some(name) => format!("tenant {name}"),
                None => "the administrator".into(),
            };
            format!(
                "{whose} has {of_tenant} directory watches open across its sessions (policy.max_watches_per_tenant): stop some, or close sessions no longer needed"
            )
        } else if held.all >= policy.max_watches as usize {
            format!(
                "the service has {} directory watches open, as many as it holds for all tenants together (policy.max_watches): try again later", held.all
            )
        } else {
            held.all += 1;
            *held.by_session.entry(session.to_string()).or_default() += 1;
            *held.by_tenant.entry(tenant.clone()).or_default() += 1;
            return Ok(WatchPlace {
                watches: self.clone(),
                session: session.to_string(),
                tenant,
            });
        };
        Err(Error::LimitReached {
            code: "too_many_watches",
            message: refusal,
        })
    }
}

impl Drop for WatchPlace {
    fn drop(&mut self) {
        let mut held = self.watches.lock();
        held.all -= 1;
        decrement(&mut held.by_session, &self.session);
        decrement(&mut held.by_tenant, &self.tenant);
    }
}

/// Takes one off `key`'s count, forgetting the key at 0 (sessions come and go).
fn decrement<K: Eq + std::hash::Hash>(counts: &mut HashMap<K, usize>, key: &K) {
    if let Some(count) = counts.get_mut(key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::limit_tests;

    fn policy(per_session: u32, per_tenant: u32) -> Policy {
        let mut policy = limit_tests::policy();
        policy.max_watches_per_session = per_session;
        policy.max_watches_per_tenant = per_tenant;
        policy
    }

    fn refusal(result: Result<WatchPlace, Error>) -> String {
        limit_tests::refusal(result, "too_many_watches")
    }

    #[test]
    fn a_session_and_a_tenant_hold_at_most_their_share_and_get_it_back() {
        let watches = Watches::default();
        let policy = policy(2, 3);
        let first = watches.take(&policy, "s1", Some("a")).unwrap();
        let _second = watches.take(&policy, "s1", Some("a")).unwrap();
        assert!(refusal(watches.take(&policy, "s1", Some("a")))
            .contains("policy.max_watches_per_session"));
        let _third = watches.take(&policy, "s2", Some("a")).unwrap();
        assert!(refusal(watches.take(&policy, "s3", Some("a"))).contains("tenant a has 3"));
        // Another tenant, and the administrator, are not counted with it.
        let _other = watches.take(&policy, "s4", Some("b")).unwrap();
        let _admin = watches.take(&policy, "s5", None).unwrap();
        drop(first);
        let _again = watches.take(&policy, "s1", Some("a")).unwrap();
    }

    #[test]
    fn the_service_holds_at_most_its_cap_of_watches() {
        let watches = Watches::default();
        let mut policy = policy(8, 256);
        policy.max_watches = 1024;
        let held: Vec<WatchPlace> = (0..1024)
            .map(|i| {
                let tenant = format!("t{}", i / 256);
                watches
                    .take(&policy, &format!("s{}", i / 8), Some(&tenant))
                    .unwrap()
            })
            .collect();
        assert!(refusal(watches.take(&policy, "new", Some("new"))).contains("for all tenants"));
        drop(held);
        assert_eq!(watches.lock().all, 0);
        assert!(watches.lock().by_session.is_empty() && watches.lock().by_tenant.is_empty());
    }
}
