//! A sandbox's refused and failed name lookups, recorded at a bounded cost however many it
//! causes: the first few of each interval one by one (what a person looking at the activity
//! log wants to see), the rest only counted, and recorded as one entry when the interval ends.

use crate::policy::ConnectionRecord;
use crate::policy::Door;
use crate::policy::Policy;
use crate::policy::Refusal;
use crate::policy::SessionRules;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

/// Refusals of one sandbox recorded one by one in an interval.
pub(crate) const RECORDED_EACH_INTERVAL: usize = 5;
/// Sandboxes whose refusals are kept count of in an interval; others past it go uncounted
/// (only sources that can send to the DNS door are here, but memory stays bounded anyway).
const SANDBOXES_COUNTED: usize = 4096;
const DNS_PORT: u16 = 53;

pub(crate) struct Refusals {
    by_sandbox: Mutex<HashMap<IpAddr, Tally>>,
}

#[derive(Default)]
struct Tally {
    /// Known once one of its refusals came with its session.
    session_id: Option<String>,
    recorded: usize,
    counted: u64,
    /// The name and refusal of the last one counted.
    last: Option<(String, Refusal)>,
}

impl Refusals {
    pub fn new() -> Refusals {
        Refusals {
            by_sandbox: Mutex::default(),
        }
    }

    /// A refusal of `sandbox`'s lookup of `host`: the record to hand to the policy now, or
    /// `None` when it is only counted.
    pub fn note(
        &self,
        sandbox: IpAddr,
        session: Option<&SessionRules>,
        host: &str,
        refusal: Refusal,
    ) -> Option<ConnectionRecord> {
        let mut by_sandbox = self.by_sandbox.lock().expect("DNS refusals lock");
        if by_sandbox.len() >= SANDBOXES_COUNTED && !by_sandbox.contains_key(&sandbox) {
            return None;
        }
        let tally = by_sandbox.entry(sandbox).or_default();
        if let (None, Some(session)) = (&tally.session_id, session) {
            tally.session_id = Some(session.session_id.clone());
        }
        match (&tally.session_id, tally.recorded < RECORDED_EACH_INTERVAL) {
            (Some(session_id), true) => {
                tally.recorded += 1;
                Some(record(session_id.clone(), host, refusal))
            }
            _ => {
                tally.counted += 1;
                tally.last = Some((host.to_string(), refusal));
                None
            }
        }
    }

    /// Ends the interval: one entry for each sandbox with refusals only counted in it.
    pub async fn record_counted(&self, policy: &dyn Policy, interval: Duration) {
        let ended = std::mem::take(&mut *self.by_sandbox.lock().expect("DNS refusals lock"));
        for (sandbox, tally) in ended {
            let Some((host, last)) = tally.last else {
                continue;
            };
            let session_id = match tally.session_id {
                Some(session_id) => session_id,
                None => match policy.session(sandbox).await {
                    Some(session) => session.session_id,
                    None => continue,
                },
            };
            let counted = Refusal::Counted {
                count: tally.counted,
                seconds: interval.as_secs(),
                last: Box::new(last),
            };
            policy.record(record(session_id, &host, counted));
        }
    }
}

fn record(session_id: String, host: &str, refusal: Refusal) -> ConnectionRecord {
    ConnectionRecord {
        session_id,
        door: Door::Dns,
        host: host.to_string(),
        port: DNS_PORT,
        outcome: Err(refusal),
        bytes_sent: 0,
        bytes_received: 0,
        duration: Duration::ZERO,
    }
}
