//! Every session's code contexts, in memory, counted per session and per tenant: leaf state the
//! core's context operations use.
//! The agent of each sandbox holds them too (with their kernels); a restarted service learns
//! them back from there.

use crate::error::Error;
use sandboxd_api::{ContextInfo, Policy};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

/// Contexts a session may hold at most, whatever the policy: the agent runs as many kernels.
pub const MAX_CONTEXTS: usize = 16;

/// A session's contexts by id, and whose the session is (`None`: the administrator's, which
/// count as one tenant).
#[derive(Default)]
pub(crate) struct SessionContexts {
    tenant: Option<String>,
    by_id: BTreeMap<String, ContextInfo>,
}

/// Every session's contexts, by session id then context id.
#[derive(Default)]
pub struct Contexts {
    sessions: Mutex<HashMap<String, SessionContexts>>,
    /// Sessions taken back after a restart whose contexts are still to be learned from their
    /// agent, which holds them.
    unlearned: Mutex<HashSet<String>>,
}

impl Contexts {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionContexts>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn get(&self, session: &str, context: &str) -> Option<ContextInfo> {
        self.lock().get(session)?.by_id.get(context).cloned()
    }

    /// Adds `info` to `session`, owned by `tenant`, unless the session or the tenant holds as
    /// many as the policy allows.
    pub(crate) fn insert(
        &self,
        session: &str,
        tenant: Option<&str>,
        policy: &Policy,
        info: ContextInfo,
    ) -> Result<(), Error> {
        let mut sessions = self.lock();
        let known = sessions
            .get(session)
            .is_some_and(|s| s.by_id.contains_key(&info.id));
        if !known {
            let of_session = sessions.get(session).map_or(0, |s| s.by_id.len());
            let most = (policy.max_contexts_per_session as usize).min(MAX_CONTEXTS);
            let of_tenant: usize = sessions
                .values()
                .filter(|s| s.tenant.as_deref() == tenant)
                .map(|s| s.by_id.len())
                .sum();
            let refusal = if of_session >= most {
                Some(format!(
                    "the session holds {of_session} code contexts, the most it may (policy.max_contexts_per_session); delete one first"
                ))
            } else if of_tenant >= policy.max_contexts_per_tenant as usize {
                let whose = tenant.map_or("the administrator".into(), |t| format!("tenant {t}"));
                Some(format!(
                    "{whose} holds {of_tenant} code contexts in its sessions, the most one tenant may (policy.max_contexts_per_tenant); delete one first"
                ))
            } else {
                None
            };
            if let Some(message) = refusal {
                return Err(Error::LimitReached {
                    code: "too_many_contexts",
                    message,
                });
            }
        }
        let contexts = sessions
            .entry(session.to_string())
            .or_insert_with(|| SessionContexts {
                tenant: tenant.map(str::to_string),
                by_id: BTreeMap::new(),
            });
        contexts.by_id.insert(info.id.clone(), info);
        Ok(())
    }

    pub(crate) fn update(
        &self,
        session: &str,
        context: &str,
        change: impl FnOnce(&mut ContextInfo),
    ) {
        if let Some(info) = self
            .lock()
            .get_mut(session)
            .and_then(|c| c.by_id.get_mut(context))
        {
            change(info);
        }
    }

    pub(crate) fn remove(&self, session: &str, context: &str) -> Option<ContextInfo> {
        self.lock().get_mut(session)?.by_id.remove(context)
    }

    pub(crate) fn list(&self, session: &str) -> Vec<ContextInfo> {
        self.lock()
            .get(session)
            .map(|c| c.by_id.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Forgets an ended session's contexts.
    pub(crate) fn forget_session(&self, session: &str) {
        self.lock().remove(session);
        self.unlearned_sessions().remove(session);
    }

    /// The session's contexts are to be learned from its agent before they are used.
    pub(crate) fn to_learn(&self, session: &str) {
        self.unlearned_sessions().insert(session.to_string());
    }

    pub(crate) fn is_unlearned(&self, session: &str) -> bool {
        self.unlearned_sessions().contains(session)
    }

    /// Adds the contexts learned from the agent of `session`, owned by `tenant` (those not
    /// known already, within [`MAX_CONTEXTS`]: they run already, so no policy refuses them);
    /// the session's contexts are then known.
    pub(crate) fn learned(&self, session: &str, tenant: Option<&str>, found: Vec<ContextInfo>) {
        let mut unlearned = self.unlearned_sessions();
        if !unlearned.remove(session) {
            return;
        }
        let mut sessions = self.lock();
        let contexts = sessions
            .entry(session.to_string())
            .or_insert_with(|| SessionContexts {
                tenant: tenant.map(str::to_string),
                by_id: BTreeMap::new(),
            });
        for info in found {
            if contexts.by_id.len() < MAX_CONTEXTS {
                contexts.by_id.entry(info.id.clone()).or_insert(info);
            }
        }
    }

    fn unlearned_sessions(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.unlearned.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::limit_tests;

    fn context(id: &str) -> ContextInfo {
        ContextInfo {
            id: id.into(),
            language: "python".into(),
            cwd: None,
            created_at: String::new(),
            runs: 0,
            restarts: 0,
        }
    }

    fn policy(per_session: u32, per_tenant: u32) -> Policy {
        let mut policy = limit_tests::policy();
        policy.max_contexts_per_session = per_session;
        policy.max_contexts_per_tenant = per_tenant;
        policy
    }

    fn refusal(result: Result<(), Error>) -> String {
        limit_tests::refusal(result, "too_many_contexts")
    }

    #[test]
    fn a_session_and_a_tenant_hold_at_most_their_share_and_get_it_back() {
        let table = Contexts::default();
        let policy = policy(2, 3);
        let add = |session: &str, tenant: Option<&str>, id: &str| {
            table.insert(session, tenant, &policy, context(id))
        };
        add("s1", Some("a"), "c1").unwrap();
        add("s1", Some("a"), "c2").unwrap();
        // The same id again replaces, taking no place.
        add("s1", Some("a"), "c2").unwrap();
        assert!(refusal(add("s1", Some("a"), "c3")).contains("policy.max_contexts_per_session"));
        add("s2", Some("a"), "c1").unwrap();
        let message = refusal(add("s3", Some("a"), "c1"));
        assert!(message.contains("tenant a holds 3"), "{message}");
        // Another tenant, and the administrator, are not held by tenant a's contexts.
        add("s4", Some("b"), "c1").unwrap();
        add("s5", None, "c1").unwrap();
        // A deleted context, and a forgotten session, give their places back.
        table.remove("s1", "c1");
        add("s3", Some("a"), "c1").unwrap();
        table.forget_session("s2");
        add("s6", Some("a"), "c1").unwrap();
    }

    #[test]
    fn what_is_learned_is_added_once_within_the_bound() {
        let table = Contexts::default();
        table
            .insert(
                "s",
                None,
                &policy(16, 100),
                ContextInfo {
                    runs: 3,
                    ..context("known")
                },
            )
            .unwrap();
        // Not marked: nothing is taken.
        table.learned("s", None, vec![context("stray")]);
        assert_eq!(table.list("s").len(), 1);

        table.to_learn("s");
        assert!(table.is_unlearned("s"));
        let mut found: Vec<_> = (0..MAX_CONTEXTS + 4)
            .map(|n| context(&format!("c{n}")))
            .collect();
        found.push(context("known"));
        table.learned("s", None, found);
        assert!(!table.is_unlearned("s"));
        assert_eq!(table.list("s").len(), MAX_CONTEXTS);
        assert_eq!(
            table.get("s", "known").unwrap().runs,
            3,
            "what was known stays"
        );
        // A second answer (a race) changes nothing.
        table.learned("s", None, vec![context("late")]);
        assert!(table.get("s", "late").is_none());
    }
}
