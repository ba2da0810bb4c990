//! Short-lived, single-use connection tickets. A browser cannot set `Authorization` on a
//! WebSocket or an EventSource, so rather than handing the long-lived token to either, the
//! dashboard asks (with the token, in the header) for a ticket bound to one session and to
//! its own principal and interface, and presents that on the connection. A ticket opens one
//! connection: it is spent when presented, right or wrong, and expires after
//! [`TICKET_LIFETIME`]. Tickets are kept in memory only, by their SHA-256, so a lookup takes
//! the same path whatever was presented and a restart invalidates them all.

use crate::error::Error;
use crate::state::activity::Caller;
use rand::Rng;
use sandboxd_config::{to_hex, token_sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a ticket may wait to be presented.
pub const TICKET_LIFETIME: Duration = Duration::from_secs(30);
/// Tickets outstanding at most; beyond, issuing one is refused until some expire.
pub const MAX_OUTSTANDING: usize = 10_000;

/// What a ticket was issued for.
struct Outstanding {
    session: String,
    caller: Caller,
    expires: Instant,
}

struct State {
    lifetime: Duration,
    /// By the SHA-256 of the ticket.
    outstanding: HashMap<[u8; 32], Outstanding>,
}

pub(crate) struct Tickets {
    capacity: usize,
    state: Mutex<State>,
}

impl Tickets {
    pub(crate) fn new(lifetime: Duration, capacity: usize) -> Tickets {
        Tickets {
            capacity,
            state: Mutex::new(State {
                lifetime,
                outstanding: HashMap::new(),
            }),
        }
    }

    /// A new ticket for `caller` on `session`, and how long it lasts.
    pub(crate) fn issue(
        &self,
        session: &str,
        caller: &Caller,
    ) -> Result<(String, Duration), Error> {
        let mut state = self.state.lock().expect("tickets lock");
        if state.outstanding.len() >= self.capacity {
            let now = Instant::now();
            state.outstanding.retain(|_, ticket| ticket.expires > now);
        }
        if state.outstanding.len() >= self.capacity {
            return Err(Error::LimitReached {
                code: "too_many_tickets",
                message: format!(
                    "{} connection tickets are outstanding, the most the service keeps; try again in a few seconds",
                    self.capacity
                ),
            });
        }
        let bytes: [u8; 32] = rand::rng().random();
        let ticket = to_hex(&bytes);
        let lifetime = state.lifetime;
        state.outstanding.insert(
            token_sha256(&ticket),
            Outstanding {
                session: session.to_string(),
                caller: caller.clone(),
                expires: Instant::now() + lifetime,
            },
        );
        Ok((ticket, lifetime))
    }

    /// Spends `presented`: the caller it was issued to, if it is outstanding, unexpired and
    /// for `session`.
    pub(crate) fn redeem(&self, presented: &str, session: &str) -> Option<Caller> {
        let ticket = self
            .state
            .lock()
            .expect("tickets lock")
            .outstanding
            .remove(&token_sha256(presented))?;
        (ticket.expires > Instant::now() && ticket.session == session).then_some(ticket.caller)
    }

    #[cfg(feature = "fake")]
    pub(crate) fn set_lifetime(&self, lifetime: Duration) {
        self.state.lock().expect("tickets lock").lifetime = lifetime;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::activity::Interface;
    use crate::state::auth::Principal;

    fn caller(tenant: &str) -> Caller {
        Caller::new(Principal::Tenant(tenant.into()), Interface::Dashboard)
    }

    #[test]
    fn a_ticket_opens_one_connection_to_its_session_as_its_caller() {
        let tickets = Tickets::new(TICKET_LIFETIME, 10);
        let (ticket, lifetime) = tickets.issue("s1", &caller("a")).unwrap();
        assert_eq!(lifetime, TICKET_LIFETIME);
        assert_eq!(ticket.len(), 64);
        assert!(ticket.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(tickets.redeem(&ticket, "s1"), Some(caller("a")));
        assert_eq!(tickets.redeem(&ticket, "s1"), None, "spent");
        assert_eq!(tickets.redeem("", "s1"), None);

        // Presented for another session, it is refused and spent.
        let (ticket, _) = tickets.issue("s1", &caller("a")).unwrap();
        assert_eq!(tickets.redeem(&ticket, "s2"), None);
        assert_eq!(tickets.redeem(&ticket, "s1"), None);
    }

    #[test]
    fn tickets_expire() {
        let tickets = Tickets::new(Duration::from_millis(20), 10);
        let (ticket, _) = tickets.issue("s1", &caller("a")).unwrap();
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(tickets.redeem(&ticket, "s1"), None);
    }

    #[test]
    fn outstanding_tickets_are_bounded_and_expired_ones_make_room() {
        let tickets = Tickets::new(Duration::from_millis(50), 3);
        for _ in 0..3 {
            tickets.issue("s1", &caller("a")).unwrap();
        }
        let refused = tickets.issue("s1", &caller("a")).unwrap_err();
        assert_eq!(refused.code(), "too_many_tickets");
        std::thread::sleep(Duration::from_millis(80));
        let (ticket, _) = tickets.issue("s1", &caller("a")).unwrap();
        assert_eq!(tickets.state.lock().unwrap().outstanding.len(), 1);
        assert!(tickets.redeem(&ticket, "s1").is_some());
    }
}
