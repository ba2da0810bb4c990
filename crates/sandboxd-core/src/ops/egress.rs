//! Sessions' egress allow-lists: a runtime's `egress` list, or a narrower one the session chose
//! at create (or later), never a wider one. The proxy asks here for the list in force at each
//! new connection, so a change applies to the next connection.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::{self, elapsed_ms, Actor, Caller, Outcome};
use sandboxd_api::{
    first_widening, EgressRule, NetworkMode, RuntimeInfo, SessionNetwork, MAX_EGRESS_RULES,
};
use std::sync::Arc;

/// The lists sessions narrowed to, kept in memory for the proxy's lookups (and in the store,
/// so they survive a restart). A session not in here has its runtime's list.
impl Core {
    /// The allow-list in force for a running `egress` session, for the proxy at each new
    /// connection; `None` (refuse everything) for any other session. A stored list that no
    /// longer parses allows nothing: the check fails closed.
    pub fn session_egress(&self, session_id: &str) -> Option<Arc<[EgressRule]>> {
        let session = self
            .sessions()
            .get(session_id)
            .ok()
            .filter(|s| s.is_running())?;
        let runtime = self.config().runtime(&session.runtime)?;
        if runtime.limits.network_mode != NetworkMode::Egress {
            return None;
        }
        if let Some(rules) = self.narrowed().get(session_id) {
            return Some(rules);
        }
        let rules: Arc<[EgressRule]> = match self.sessions().store().session_egress(session_id) {
            Ok(Some(texts)) => texts.iter().filter_map(|t| t.parse().ok()).collect(),
            Ok(None) => runtime.egress.clone().into(),
            Err(e) => {
                tracing::warn!(session = session_id, error = %e, "cannot read the session's egress list; refusing its connections");
                return None;
            }
        };
        self.narrowed().set(session_id, rules.clone());
        Some(rules)
    }

    /// The runtime of a running session, whose secrets its sandbox has.
    pub fn session_runtime(&self, session_id: &str) -> Option<String> {
        let session = self.sessions().get(session_id).ok()?;
        session.is_running().then(|| session.runtime.clone())
    }

    /// Keeps a session's own list (narrower than its runtime's, checked by [`narrow`]).
    pub(crate) fn set_session_egress(
        &self,
        session_id: &str,
        rules: Vec<EgressRule>,
    ) -> Result<(), Error> {
        let texts: Vec<String> = rules.iter().map(ToString::to_string).collect();
        self.sessions()
            .store()
            .set_session_egress(session_id, &texts)?;
        self.narrowed().set(session_id, rules.into());
        Ok(())
    }
}

impl Core {
    /// A running session's egress allow-list.
    pub fn session_network(&self, caller: &Caller, id: &str) -> Result<SessionNetwork, Error> {
        let session = self.running_session(caller, id, "get_network")?;
        let runtime = self.egress_runtime(&session.runtime)?;
        let egress = match self.session_egress(id) {
            Some(rules) => rules.to_vec(),
            None => runtime.egress.clone(),
        };
        Ok(SessionNetwork { egress })
    }

    /// Replaces a running session's allow-list with one its runtime's allows (never more);
    /// connections opened from now on are held to it, those open already are not cut.
    pub fn set_session_network(
        &self,
        caller: &Caller,
        id: &str,
        request: SessionNetwork,
    ) -> Result<SessionNetwork, Error> {
        let session = self.running_session(caller, id, "set_network")?;
        let started = std::time::Instant::now();
        let runtime = self.egress_runtime(&session.runtime)?;
        let result = narrow(runtime, Some(request.egress)).and_then(|rules| {
            let rules = rules.unwrap_or_default();
            self.set_session_egress(id, rules.clone())?;
            Ok(rules)
        });
        let elapsed = elapsed_ms(started);
        let (target, outcome) = match &result {
            Ok(rules) => (list(rules), Outcome::ok(elapsed)),
            Err(e) => (
                String::new(),
                Outcome::failed(elapsed, activity::error_text(e)),
            ),
        };
        activity::append(
            self.sessions(),
            id,
            &caller.actor(),
            "set_network",
            &target,
            outcome,
        );
        Ok(SessionNetwork { egress: result? })
    }

    fn egress_runtime(&self, name: &str) -> Result<&RuntimeInfo, Error> {
        let runtime = self.config().runtime(name).ok_or_else(|| {
            Error::NotFound(format!("runtime \"{name}\" is no longer configured"))
        })?;
        if runtime.limits.network_mode != NetworkMode::Egress {
            return Err(not_egress(runtime));
        }
        Ok(runtime)
    }
}

fn not_egress(runtime: &RuntimeInfo) -> Error {
    Error::bad_request(
        "egress_not_available",
        format!(
            "runtime \"{}\" has network mode \"{}\", not \"egress\": it has no allow-list to narrow",
            runtime.name,
            runtime.limits.network_mode.as_str()
        ),
    )
}

/// One connection through the egress proxy, as the activity log keeps it.
pub struct EgressEvent<'a> {
    /// How it came: `connect`, `http`, `tls` or `dns`.
    pub door: &'a str,
    pub host: &'a str,
    pub port: u16,
    /// Why it did not go through, and whether the policy refused it (rather than the
    /// network failing it).
    pub refusal: Option<(bool, String)>,
    pub bytes: u64,
    pub duration_ms: u64,
    /// The secret put in (door `secret`) or refused (door `secret_refused`): its name only.
    pub secret: Option<&'a str>,
}

impl Core {
    /// Records a connection of a session's sandbox: host, port, outcome and bytes, never what
    /// was sent. The actor is the sandbox itself.
    pub fn record_egress(&self, session_id: &str, event: EgressEvent<'_>) {
        let actor = Actor {
            principal: "sandbox".into(),
            interface: "egress".into(),
        };
        let outcome = match event.refusal {
            None => Outcome::ok(event.duration_ms),
            Some((by_policy, why)) => {
                let mut outcome = Outcome::failed(event.duration_ms, why);
                if by_policy {
                    outcome.status = "refused".into();
                }
                outcome
            }
        };
        let outcome = Outcome {
            bytes: Some(event.bytes),
            ..outcome
        };
        let mut target = if event.host.is_empty() {
            format!("port {}", event.port)
        } else {
            format!("{}:{}", event.host, event.port)
        };
        if let Some(secret) = event.secret {
            target.push_str(&format!(" secret {secret}"));
        }
        activity::append(
            self.sessions(),
            session_id,
            &actor,
            &format!("egress.{}", event.door),
            &target,
            outcome,
        );
    }
}

/// `requested` checked against the runtime's list: `None` keeps the runtime's, a list is taken
/// only if it allows nothing the runtime's does not.
pub(crate) fn narrow(
    runtime: &RuntimeInfo,
    requested: Option<Vec<EgressRule>>,
) -> Result<Option<Vec<EgressRule>>, Error> {
    let Some(mut requested) = requested else {
        return Ok(None);
    };
    if runtime.limits.network_mode != NetworkMode::Egress {
        return Err(not_egress(runtime));
    }
    if requested.len() > MAX_EGRESS_RULES {
        return Err(Error::bad_request(
            "invalid_request",
            format!("`egress` holds at most {MAX_EGRESS_RULES} rules"),
        ));
    }
    if let Some(rule) = first_widening(&runtime.egress, &requested) {
        return Err(Error::bad_request(
            "egress_widened",
            format!(
                "\"{rule}\" is not allowed by runtime \"{}\", whose egress list is: {}; a session may only narrow it",
                runtime.name,
                list(&runtime.egress)
            ),
        ));
    }
    let mut seen = Vec::with_capacity(requested.len());
    requested.retain(|rule| {
        let new = !seen.contains(rule);
        if new {
            seen.push(rule.clone());
        }
        new
    });
    Ok(Some(requested))
}

fn list(rules: &[EgressRule]) -> String {
    rules
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::narrowed_lists::NarrowedLists;
    use sandboxd_api::Limits;

    fn runtime(mode: NetworkMode, egress: &[&str]) -> RuntimeInfo {
        RuntimeInfo {
            name: "py".into(),
            description: String::new(),
            image: Some("python:3".into()),
            recipe: None,
            recipe_image: None,
            limits: Limits {
                mem_limit_bytes: 1 << 30,
                cpus: 1.0,
                pids_limit: 64,
                network_mode: mode,
                tmpfs_size_bytes: 1 << 20,
                isolation: Default::default(),
            },
            interpreter: vec![],
            pool_size: 0,
            kernels: Default::default(),
            egress: rules(egress),
        }
    }

    fn rules(texts: &[&str]) -> Vec<EgressRule> {
        texts.iter().map(|t| t.parse().unwrap()).collect()
    }

    #[test]
    fn a_session_narrows_but_never_widens() {
        let runtime = runtime(NetworkMode::Egress, &["pypi.org", "*.github.com"]);
        assert_eq!(narrow(&runtime, None).unwrap(), None);
        assert_eq!(
            narrow(&runtime, Some(rules(&["api.github.com", "api.github.com"]))).unwrap(),
            Some(rules(&["api.github.com"]))
        );
        assert_eq!(narrow(&runtime, Some(vec![])).unwrap(), Some(vec![]));
        let Error::BadRequest { code, message } =
            narrow(&runtime, Some(rules(&["pypi.org", "evil.com"]))).unwrap_err()
        else {
            panic!("not a bad request");
        };
        assert_eq!(code, "egress_widened");
        assert!(message.contains("\"evil.com\""), "{message}");
        assert!(message.contains("pypi.org, *.github.com"), "{message}");
    }

    #[test]
    fn only_an_egress_runtime_has_a_list_to_narrow() {
        let runtime = runtime(NetworkMode::Bridge, &[]);
        let Error::BadRequest { code, .. } =
            narrow(&runtime, Some(rules(&["pypi.org"]))).unwrap_err()
        else {
            panic!("not a bad request");
        };
        assert_eq!(code, "egress_not_available");
    }

    #[test]
    fn lists_are_looked_up_by_session() {
        let lists = NarrowedLists::default();
        assert!(lists.get("s1").is_none());
        lists.set("s1", rules(&["pypi.org"]).into());
        assert_eq!(lists.get("s1").unwrap().len(), 1);
        lists.remove("s1");
        assert!(lists.get("s1").is_none());
    }
}
