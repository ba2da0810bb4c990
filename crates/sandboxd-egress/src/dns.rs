//! The sandboxes' name server: a name resolves only if the asking session may reach it, and
//! only to addresses the proxy would connect to. The sandbox has no IPv6, so AAAA answers are
//! empty; other record types are answered empty too.

use crate::{ConnectionRecord, Door, Refusal, Shared};
use hickory_proto::op::{Message, MessageType, Metadata, OpCode, ResponseCode};
use hickory_proto::rr::rdata::A;
use hickory_proto::rr::{DNSClass, RData, Record, RecordType};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UdpSocket;
use tokio::sync::Semaphore;

/// Queries answered at once; more wait (and, over UDP, are retried by the client).
const IN_FLIGHT: usize = 256;
/// A query larger than this is not one a resolver sends.
const MAX_QUERY: usize = 1232;
/// How long the answers the sandbox gets may be cached.
const TTL: u32 = 30;
const DNS_PORT: u16 = 53;

pub(crate) async fn serve(shared: Arc<Shared>, socket: UdpSocket) {
    let socket = Arc::new(socket);
    let in_flight = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut buffer = vec![0u8; MAX_QUERY];
    loop {
        let (n, peer) = match socket.recv_from(&mut buffer).await {
            Ok(received) => received,
            Err(e) => {
                tracing::debug!(error = %e, "egress DNS receive failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Ok(permit) = in_flight.clone().acquire_owned().await else {
            return;
        };
        let query = buffer[..n].to_vec();
        let (shared, socket) = (shared.clone(), socket.clone());
        tokio::spawn(async move {
            let _permit = permit;
            if let Some(answer) = answer(&shared, &query, peer).await {
                let _ = socket.send_to(&answer, peer).await;
            }
        });
    }
}

async fn answer(shared: &Shared, query: &[u8], peer: SocketAddr) -> Option<Vec<u8>> {
    let request = Message::from_vec(query).ok()?;
    if request.metadata.message_type != MessageType::Query {
        return None;
    }
    let mut response = Message::new(request.metadata.id, MessageType::Response, OpCode::Query);
    response.metadata = Metadata::response_from_request(&request.metadata);
    response.metadata.recursion_available = true;
    let code = respond(shared, &request, peer.ip(), &mut response).await;
    response.metadata.response_code = code;
    response.to_vec().ok()
}

async fn respond(
    shared: &Shared,
    request: &Message,
    peer: IpAddr,
    response: &mut Message,
) -> ResponseCode {
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
        shared.refused(&session, Door::Dns, &name, DNS_PORT, refusal);
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
            shared.policy.record(ConnectionRecord {
                outcome: Err(refusal),
                ..ConnectionRecord::allowed(&session, Door::Dns, &name, DNS_PORT)
            });
            match refusal_kind {
                _ if by_policy => ResponseCode::Refused,
                Kind::NoSuchName => ResponseCode::NXDomain,
                Kind::Failed => ResponseCode::ServFail,
            }
        }
    }
}

/// How a failed lookup is answered when the policy did not refuse it.
enum Kind {
    NoSuchName,
    Failed,
}
