//! Every session's code contexts, in memory: leaf state the core's context operations use.
//! The agent of each sandbox holds them too (with their kernels); a restarted service learns
//! them back from there.

use crate::error::Error;
use sandboxd_api::ContextInfo;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

/// Contexts a session may hold (the agent allows as many kernels).
pub const MAX_CONTEXTS: usize = 16;

/// Every session's contexts, by session id then context id.
#[derive(Default)]
pub struct Contexts {
    sessions: Mutex<HashMap<String, BTreeMap<String, ContextInfo>>>,
    /// Sessions taken back after a restart whose contexts are still to be learned from their
    /// agent, which holds them.
    unlearned: Mutex<HashSet<String>>,
}

impl Contexts {
    pub(crate) fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, BTreeMap<String, ContextInfo>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn get(&self, session: &str, context: &str) -> Option<ContextInfo> {
        self.lock().get(session)?.get(context).cloned()
    }

    /// Adds `info`, unless the session holds [`MAX_CONTEXTS`] already.
    pub(crate) fn insert(&self, session: &str, info: ContextInfo) -> Result<(), Error> {
        let mut sessions = self.lock();
        let contexts = sessions.entry(session.to_string()).or_default();
        if !contexts.contains_key(&info.id) && contexts.len() >= MAX_CONTEXTS {
            return Err(Error::LimitReached {
                code: "too_many_contexts",
                message: format!(
                    "the session holds {MAX_CONTEXTS} code contexts, the most it may; delete one first"
                ),
            });
        }
        contexts.insert(info.id.clone(), info);
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
            .and_then(|c| c.get_mut(context))
        {
            change(info);
        }
    }

    pub(crate) fn remove(&self, session: &str, context: &str) -> Option<ContextInfo> {
        self.lock().get_mut(session)?.remove(context)
    }

    pub(crate) fn list(&self, session: &str) -> Vec<ContextInfo> {
        self.lock()
            .get(session)
            .map(|c| c.values().cloned().collect())
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

    /// Adds the contexts learned from the session's agent (those not known already, within
    /// [`MAX_CONTEXTS`]); the session's contexts are then known.
    pub(crate) fn learned(&self, session: &str, found: Vec<ContextInfo>) {
        let mut unlearned = self.unlearned_sessions();
        if !unlearned.remove(session) {
            return;
        }
        let mut sessions = self.lock();
        let contexts = sessions.entry(session.to_string()).or_default();
        for info in found {
            if contexts.len() < MAX_CONTEXTS {
                contexts.entry(info.id.clone()).or_insert(info);
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

    #[test]
    fn what_is_learned_is_added_once_within_the_bound() {
        let table = Contexts::default();
        table
            .insert(
                "s",
                ContextInfo {
                    runs: 3,
                    ..context("known")
                },
            )
            .unwrap();
        // Not marked: nothing is taken.
        table.learned("s", vec![context("stray")]);
        assert_eq!(table.list("s").len(), 1);

        table.to_learn("s");
        assert!(table.is_unlearned("s"));
        let mut found: Vec<_> = (0..MAX_CONTEXTS + 4)
            .map(|n| context(&format!("c{n}")))
            .collect();
        found.push(context("known"));
        table.learned("s", found);
        assert!(!table.is_unlearned("s"));
        assert_eq!(table.list("s").len(), MAX_CONTEXTS);
        assert_eq!(
            table.get("s", "known").unwrap().runs,
            3,
            "what was known stays"
        );
        // A second answer (a race) changes nothing.
        table.learned("s", vec![context("late")]);
        assert!(table.get("s", "late").is_none());
    }
}
