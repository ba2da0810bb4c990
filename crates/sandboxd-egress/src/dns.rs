//! The sandboxes' name server: a name resolves only if the asking session may reach it, and
//! only to addresses the proxy would connect to. The sandbox has no IPv6, so AAAA answers are
//! empty; other record types are answered empty too.
//!
//! One sandbox cannot take the door from the others: its lookups in flight are bounded (past
//! the bound a query is answered SERVFAIL at once, never queued), a lookup ends within
//! [`Settings::dns_timeout`](crate::Settings), and its refusals cost a count each, not an
//! entry each ([`Refusals`]).

use crate::limits::PerKey;
use crate::policy::Refusal;
use crate::policy::SessionRules;
use crate::refusals::Refusals;
use crate::state::Shared;
use hickory_proto::op::{Message, MessageType, Metadata, OpCode, ResponseCode};
use hickory_proto::rr::rdata::A;
use hickory_proto::rr::{DNSClass, RData, Record, RecordType};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UdpSocket;
use tokio::sync::Semaphore;

/// A query larger than this is not one a resolver sends.
const MAX_QUERY: usize = 1232;
/// How long the answers the sandbox gets may be cached.
const TTL: u32 = 30;
const DNS_PORT: u16 = 53;

struct Responder {
    shared: Arc<Shared>,
    in_flight: Arc<Semaphore>,
    per_sandbox: PerKey<IpAddr>,
    refusals: Refusals,
}

pub(crate) async fn serve(shared: Arc<Shared>, socket: UdpSocket) {
    let socket = Arc::new(socket);
    let every = shared.settings.refusals_counted_for;
    let responder = Arc::new(Responder {
        in_flight: Arc::new(Semaphore::new(shared.settings.max_lookups)),
        per_sandbox: PerKey::new(shared.settings.max_lookups_per_sandbox),
        refusals: Refusals::new(),
        shared,
    });
    let mut interval_ends = tokio::time::interval(every);
    interval_ends.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut buffer = vec![0u8; MAX_QUERY];
    loop {
        let received = tokio::select! {
            received = socket.recv_from(&mut buffer) => received,
            _ = interval_ends.tick() => {
                let responder = responder.clone();
                tokio::spawn(async move {
                    let policy = responder.shared.policy.as_ref();
                    responder.refusals.record_counted(policy, every).await
                });
                continue;
            }
        };
        let (n, peer) = match received {
            Ok(received) => received,
            Err(e) => {
                tracing::debug!(error = %e, "egress DNS receive failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let query = &buffer[..n];
        let permits = match responder.per_sandbox.acquire(&peer.ip()) {
            None => Err(responder.shared.settings.max_lookups_per_sandbox),
            Some(mine) => match responder.in_flight.clone().try_acquire_owned() {
                Ok(all) => Ok((mine, all)),
                Err(_) => Err(responder.shared.settings.max_lookups),
            },
        };
        let permits = match permits {
            Ok(permits) => permits,
            Err(bound) => {
                if let Some(answer) = responder.over_bound(query, peer.ip(), bound) {
                    // A full send buffer drops the answer rather than hold up the door.
                    let _ = socket.try_send_to(&answer, peer);
                }
                continue;
            }
        };
        let query = query.to_vec();
        let (responder, socket) = (responder.clone(), socket.clone());
        tokio::spawn(async move {
            let _permits = permits;
            if let Some(answer) = responder.answer(&query, peer.ip()).await {
                let _ = socket.send_to(&answer, peer).await;
            }
        });
    }
}

/// The query, and a response to it carrying its id and flags; `None` for anything but a query.
fn parse(query: &[u8]) -> Option<(Message, Message)> {
    let request = Message::from_vec(query).ok()?;
    if request.metadata.message_type != MessageType::Query {
        return None;
    }
    let mut response = Message::new(request.metadata.id, MessageType::Response, OpCode::Query);
    response.metadata = Metadata::response_from_request(&request.metadata);
    response.metadata.recursion_available = true;
    Some((request, response))
}

impl Responder {
    async fn answer(&self, query: &[u8], peer: IpAddr) -> Option<Vec<u8>> {
        let (request, mut response) = parse(query)?;
        let code = self.respond(&request, peer, &mut response).await;
        response.metadata.response_code = code;
        response.to_vec().ok()
    }

    /// A query past its sandbox's bound (or the door's): SERVFAIL, and counted.
    fn over_bound(&self, query: &[u8], peer: IpAddr, bound: usize) -> Option<Vec<u8>> {
        let (request, mut response) = parse(query)?;
        let asked = request.queries.first().map(|q| q.name().to_ascii());
        for question in request.queries {
            response.add_query(question);
        }
        response.metadata.response_code = ResponseCode::ServFail;
        let host = asked.as_deref().unwrap_or("").trim_end_matches('.');
        self.refused(peer, None, host, Refusal::TooManyLookups(bound));
        response.to_vec().ok()
    }

    /// Records a refused or failed lookup, or only counts it when its sandbox has had many.
    fn refused(&self, peer: IpAddr, session: Option<&SessionRules>, host: &str, why: Refusal) {
        if let Some(record) = self.refusals.note(peer, session, host, why) {
            self.shared.policy.record(record);
        }
    }

    async fn respond(
        &self,
        request: &Message,
        peer: IpAddr,
        response: &mut Message,
    ) -> ResponseCode {
        let shared = &self.shared;
        let [question] = request.queries.as_slice() else {
            return ResponseCode::FormErr;
        };
        response.add_query(question.clone());
        if request.metadata.op_code != OpCode::Query || question.query_class() != DNSClass::IN {
            return ResponseCode::NotImp;
        }
        let Some(session) = shared.policy.session(peer).await else {
            return ResponseCode::Refused;
        };
        let asked = question.name().to_ascii();
        let Some(name) = sandboxd_api::normalize_host(&asked) else {
            return ResponseCode::NXDomain;
        };
        let allowed = session
            .rules
            .iter()
            .any(|rule| rule.ports().iter().any(|port| rule.allows(&name, *port)));
        if !allowed {
            let refusal = Refusal::NotAllowed {
                host: name.clone(),
                port: DNS_PORT,
            };
            self.refused(peer, Some(&session), &name, refusal);
            return ResponseCode::NXDomain;
        }
        if question.query_type() != RecordType::A {
            return ResponseCode::NoError;
        }
        match shared.resolver.resolve(&name).await {
            Ok(addresses) => {
                for address in addresses {
                    if let IpAddr::V4(v4) = address {
                        response.add_answer(Record::from_rdata(
                            question.name().clone(),
                            TTL,
                            RData::A(A(v4)),
                        ));
                    }
                }
                ResponseCode::NoError
            }
            Err(refusal) => {
                let by_policy = refusal.by_policy();
                let refusal_kind = match &refusal {
                    Refusal::NotResolved { .. } => Kind::NoSuchName,
                    _ => Kind::Failed,
                };
                self.refused(peer, Some(&session), &name, refusal);
                match refusal_kind {
                    _ if by_policy => ResponseCode::Refused,
                    Kind::NoSuchName => ResponseCode::NXDomain,
                    Kind::Failed => ResponseCode::ServFail,
                }
            }
        }
    }
}

/// How a failed lookup is answered when the policy did not refuse it.
enum Kind {
    NoSuchName,
    Failed,
}
