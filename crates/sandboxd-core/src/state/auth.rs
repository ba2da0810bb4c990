//! Who is calling. The service token is the administrator's; each tenant of the config has a
//! token of its own and sees, lists and touches only its own sessions (the core answers "not
//! found" for another tenant's, so ids cannot be probed). Failed authentication is answered
//! identically whatever was wrong, and rate-limited per client address and across all of them;
//! a right token is always served, so no one is locked out by another's failures.

use crate::error::Error;
use sandboxd_config::Config;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Failed attempts are counted per address in windows of this length
/// (`policy.auth_failures_per_minute` per window).
const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// Addresses tracked at most; the oldest windows are dropped first.
const MAX_TRACKED: usize = 10_000;
/// The budget of failures across all addresses, in addresses' worth.
const OVERALL_BUDGET_ADDRESSES: u32 = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    Admin,
    Tenant(String),
}

impl Principal {
    /// How the activity log names it.
    pub fn name(&self) -> String {
        match self {
            Principal::Admin => "admin".into(),
            Principal::Tenant(name) => format!("tenant:{name}"),
        }
    }

    pub fn tenant(&self) -> Option<&str> {
        match self {
            Principal::Admin => None,
            Principal::Tenant(name) => Some(name),
        }
    }

    /// Refuses what only the administrator may see or do.
    pub fn require_admin(&self, what: &str) -> Result<(), Error> {
        match self {
            Principal::Admin => Ok(()),
            Principal::Tenant(_) => Err(Error::Forbidden {
                code: "admin_only",
                message: format!("{what} needs the service token; a tenant token cannot use it"),
            }),
        }
    }
}

/// Failures counted in one fixed window.
#[derive(Clone, Copy)]
struct Window {
    failures: u32,
    since: Instant,
}

impl Window {
    fn new() -> Window {
        Window {
            failures: 0,
            since: Instant::now(),
        }
    }

    /// How long until the window ends, if `allowed` failures were made in it.
    fn wait(&self, allowed: u32) -> Option<Duration> {
        let remaining = FAILURE_WINDOW.checked_sub(self.since.elapsed())?;
        (self.failures >= allowed).then_some(remaining)
    }

    /// Counts one failure (in a new window if this one is over); true when it reaches `allowed`.
    fn count(&mut self, allowed: u32) -> bool {
        if self.since.elapsed() >= FAILURE_WINDOW {
            *self = Window::new();
        }
        self.failures += 1;
        self.failures == allowed
    }
}

/// Failed attempts per client address and across all of them, in fixed windows: a client that
/// rotates its address still meets the overall budget.
struct FailedAttempts {
    by_address: Mutex<HashMap<IpAddr, Window>>,
    all: Mutex<Window>,
}

impl Default for FailedAttempts {
    fn default() -> FailedAttempts {
        FailedAttempts {
            by_address: Mutex::default(),
            all: Mutex::new(Window::new()),
        }
    }
}

impl FailedAttempts {
    /// How long failures from the address must wait, if it or everyone made too many.
    fn wait(&self, address: Option<IpAddr>, allowed: u32) -> Option<Duration> {
        let overall = self
            .all
            .lock()
            .expect("auth lock")
            .wait(overall_budget(allowed));
        let own = address.and_then(|address| {
            let by_address = self.by_address.lock().expect("auth lock");
            by_address.get(&address)?.wait(allowed)
        });
        own.max(overall)
    }

    fn note_failure(&self, address: Option<IpAddr>, allowed: u32) {
        if self
            .all
            .lock()
            .expect("auth lock")
            .count(overall_budget(allowed))
        {
            tracing::warn!(
                budget = overall_budget(allowed),
                "failed authentication across all addresses reached its budget; wrong tokens are refused for the rest of the minute"
            );
        }
        let Some(address) = address else { return };
        let mut by_address = self.by_address.lock().expect("auth lock");
        if by_address.len() >= MAX_TRACKED {
            by_address.retain(|_, window| window.since.elapsed() < FAILURE_WINDOW);
        }
        if by_address.len() >= MAX_TRACKED {
            return;
        }
        if by_address
            .entry(address)
            .or_insert_with(Window::new)
            .count(allowed)
        {
            tracing::warn!(%address, allowed, "too many failed authentication attempts from this address; its wrong tokens are refused for the rest of the minute");
        }
    }
}

/// Failures allowed across all addresses in a window: this many addresses' worth.
fn overall_budget(per_address: u32) -> u32 {
    per_address.saturating_mul(OVERALL_BUDGET_ADDRESSES)
}

/// The service token and the failed attempts to present one.
pub struct Tokens {
    service_token: String,
    failed: FailedAttempts,
}

impl Tokens {
    pub fn new(service_token: String) -> Tokens {
        Tokens {
            service_token,
            failed: FailedAttempts::default(),
        }
    }

    /// Who `presented` belongs to: the administrator (the service token) or a tenant of the
    /// config. A right token is always served. A wrong one counts against `address` and
    /// against all addresses together; past either budget it is answered `too_many_attempts`
    /// rather than `unauthorized` for the rest of the minute.
    pub fn authenticate(
        &self,
        config: &Config,
        presented: &str,
        address: Option<IpAddr>,
    ) -> Result<Principal, Error> {
        self.identify(config, presented)
            .ok_or_else(|| self.refuse(config, address))
    }

    /// Who `presented` belongs to, if anyone, without counting a miss: for sharing the
    /// service's capacity out, never for letting a request in.
    pub fn identify(&self, config: &Config, presented: &str) -> Option<Principal> {
        // Compared in constant time so the answer's timing says nothing about the token.
        if bool::from(presented.as_bytes().ct_eq(self.service_token.as_bytes())) {
            return Some(Principal::Admin);
        }
        config
            .tenant_for(presented)
            .map(|tenant| Principal::Tenant(tenant.name.clone()))
    }

    /// HMAC-SHA256 of `data` under the service token, for `context`: credentials derived from
    /// the administrator's, so they survive a restart and change with the token.
    pub(crate) fn derive(&self, context: &str, data: &str) -> [u8; 32] {
        use hmac::{KeyInit, Mac};
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(self.service_token.as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(context.as_bytes());
        mac.update(&[0]);
        mac.update(data.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// The answer to a failed authentication (a wrong token or ticket) from `address`:
    /// counted, and `too_many_attempts` past either budget.
    pub(crate) fn refuse(&self, config: &Config, address: Option<IpAddr>) -> Error {
        let allowed = config.policy.auth_failures_per_minute;
        if let Some(wait) = self.failed.wait(address, allowed) {
            return Error::LimitReached {
                code: "too_many_attempts",
                message: format!(
                    "too many failed authentication attempts; try again in {} s",
                    wait.as_secs().max(1)
                ),
            };
        }
        self.failed.note_failure(address, allowed);
        Error::Unauthorized
    }
}
