//! Connection tickets as operations: issued to a caller for one session it may reach, and
//! spent by the connection that presents one (the table is [`crate::state::tickets`]).

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::Caller;
use crate::state::sessions;
use sandboxd_api::Ticket;
use time::OffsetDateTime;

impl Core {
    /// A ticket that opens one terminal or output stream of a session the caller may reach,
    /// as that caller, within [`TICKET_LIFETIME`](crate::state::tickets::TICKET_LIFETIME).
    pub fn issue_ticket(&self, caller: &Caller, session_id: &str) -> Result<Ticket, Error> {
        let session = self.running_session(caller, session_id, "ticket")?;
        let (ticket, lifetime) = self.tickets().issue(&session.id, caller)?;
        let expires_at = OffsetDateTime::now_utc() + lifetime;
        Ok(Ticket {
            ticket,
            expires_at: sessions::rfc3339(expires_at),
            expires_in_secs: lifetime.as_secs(),
        })
    }

    /// Spends a ticket presented for a connection to `session_id`: who it was issued to. A
    /// wrong, spent, expired or other session's ticket counts as a failed authentication
    /// against `address`, like a wrong token.
    pub fn redeem_ticket(
        &self,
        presented: &str,
        session_id: &str,
        address: Option<std::net::IpAddr>,
    ) -> Result<Caller, Error> {
        match self.tickets().redeem(presented, session_id) {
            Some(caller) => Ok(caller),
            None => Err(self.tokens().refuse(self.config(), address)),
        }
    }

    /// Makes tickets issued from now on last `lifetime`, so tests can see one expire.
    #[cfg(feature = "fake")]
    pub fn set_ticket_lifetime(&self, lifetime: std::time::Duration) {
        self.tickets().set_lifetime(lifetime);
    }
}
