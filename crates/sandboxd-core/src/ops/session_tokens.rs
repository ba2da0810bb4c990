//! Per-session access tokens: a credential for one session only, as the E2B face gives every
//! sandbox (`envdAccessToken`), so that knowing a session id is not enough to reach it.
//!
//! A token is an HMAC of the session id under the service token: nothing to store, the same
//! after a restart, and void once the service token changes. Presenting one acts as the
//! session's owner (its tenant, or the administrator for a session without one) on that
//! session alone; a wrong one counts as a failed authentication like a wrong bearer token.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::Caller;
use crate::state::auth::Principal;
use std::net::IpAddr;
use subtle::ConstantTimeEq;

/// What the HMAC is taken for, so the same key never signs two kinds of thing alike.
const CONTEXT: &str = "sandboxd session access token v1";

impl Core {
    /// The access token of a session the caller may reach.
    pub fn session_access_token(&self, caller: &Caller, id: &str) -> Result<String, Error> {
        self.session(caller, id, "session_token")?;
        Ok(self.derived_token(id))
    }

    /// Who presenting `token` for session `id` acts as: the session's owner. Answered like a
    /// wrong bearer token when it does not match (or the session is unknown), and counted.
    pub fn authenticate_session_token(
        &self,
        id: &str,
        token: &str,
        address: Option<IpAddr>,
    ) -> Result<Principal, Error> {
        let expected = self.derived_token(id);
        if !bool::from(expected.as_bytes().ct_eq(token.as_bytes())) {
            return Err(self.tokens().refuse(self.config(), address));
        }
        let session = self
            .sessions()
            .get(id)
            .map_err(|_| self.tokens().refuse(self.config(), address))?;
        Ok(session.tenant.map_or(Principal::Admin, Principal::Tenant))
    }

    /// Whose a request is, for sharing the service's capacity out: the principal its bearer
    /// token (or API key) names, else the owner of the open session whose access token it
    /// presents. Nothing is counted, nothing is let in: `None` is anyone else.
    pub fn claimant(
        &self,
        bearer: Option<&str>,
        session_token: Option<(&str, &str)>,
    ) -> Option<Principal> {
        if let Some(principal) =
            bearer.and_then(|token| self.tokens().identify(self.config(), token))
        {
            return Some(principal);
        }
        let (id, token) = session_token?;
        let expected = self.derived_token(id);
        if !bool::from(expected.as_bytes().ct_eq(token.as_bytes())) {
            return None;
        }
        // Only open sessions: a lookup of an ended one would read the store.
        let tenant = self.sessions().open_tenant(id)?;
        Some(tenant.map_or(Principal::Admin, Principal::Tenant))
    }

    /// The open session whose access token made a signature, as `signed_with` tells (E2B's
    /// signed file URLs, which need not name their sandbox): session `id` when given, else
    /// each open session in turn (at most `max_sessions`). Returns its id and the token,
    /// which then authenticates the request as the session's owner; none is refused and
    /// counted like a wrong token.
    pub fn session_that_signed(
        &self,
        id: Option<&str>,
        signed_with: impl Fn(&str) -> bool,
        address: Option<IpAddr>,
    ) -> Result<(String, String), Error> {
        let candidates = match id {
            Some(id) => vec![id.to_string()],
            None => self
                .sessions()
                .running()
                .into_iter()
                .map(|session| session.id)
                .collect(),
        };
        candidates
            .into_iter()
            .map(|id| {
                let token = self.derived_token(&id);
                (id, token)
            })
            .find(|(_, token)| signed_with(token))
            .ok_or_else(|| self.tokens().refuse(self.config(), address))
    }

    fn derived_token(&self, id: &str) -> String {
        let digest = self.tokens().derive(CONTEXT, id);
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}
