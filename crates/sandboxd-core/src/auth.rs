//! Who is calling. The service token is the administrator's; each tenant of the config has a
//! token of its own and sees, lists and touches only its own sessions (the core answers "not
//! found" for another tenant's, so ids cannot be probed). Failed authentication is answered
//! identically whatever was wrong, and rate-limited per client address.

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

/// Failed attempts per client address, in fixed windows.
#[derive(Default)]
struct FailedAttempts {
    by_address: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

impl FailedAttempts {
    /// How long the address must wait, if it made too many failed attempts.
    fn wait(&self, address: IpAddr, allowed: u32) -> Option<Duration> {
        let by_address = self.by_address.lock().expect("auth lock");
        let (failures, since) = by_address.get(&address)?;
        let remaining = FAILURE_WINDOW.checked_sub(since.elapsed())?;
        (*failures >= allowed).then_some(remaining)
    }

    fn note_failure(&self, address: IpAddr) {
        let mut by_address = self.by_address.lock().expect("auth lock");
        if by_address.len() >= MAX_TRACKED {
            by_address.retain(|_, (_, since)| since.elapsed() < FAILURE_WINDOW);
        }
        if by_address.len() >= MAX_TRACKED {
            return;
        }
        let entry = by_address.entry(address).or_insert((0, Instant::now()));
        if entry.1.elapsed() >= FAILURE_WINDOW {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
    }
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
    /// config. A wrong token counts against `address`; an address with too many failures in
    /// the window is refused whatever it presents.
    pub fn authenticate(
        &self,
        config: &Config,
        presented: &str,
        address: Option<IpAddr>,
    ) -> Result<Principal, Error> {
        let allowed = config.policy.auth_failures_per_minute;
        if let Some(wait) = address.and_then(|a| self.failed.wait(a, allowed)) {
            return Err(Error::LimitReached {
                code: "too_many_attempts",
                message: format!(
                    "too many failed authentication attempts from this address; try again in {} s",
                    wait.as_secs().max(1)
                ),
            });
        }
        // Compared in constant time so the answer's timing says nothing about the token.
        if bool::from(presented.as_bytes().ct_eq(self.service_token.as_bytes())) {
            return Ok(Principal::Admin);
        }
        match config.tenant_for(presented) {
            Some(tenant) => Ok(Principal::Tenant(tenant.name.clone())),
            None => {
                if let Some(address) = address {
                    self.failed.note_failure(address);
                }
                Err(Error::Unauthorized)
            }
        }
    }
}
