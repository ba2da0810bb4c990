//! The DNS door under a flood from one sandbox: two sandboxes on loopback addresses of their
//! own, an upstream on loopback that never answers for one zone. Loopback only, no root.

mod support;

use hickory_proto::op::ResponseCode;
use sandboxd_egress::{ConnectionRecord, Door, Egress, Policy, Refusal, SessionRules, Settings};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::testnet::{a_query, answer_of, ask_from, dns_server_silent_under};
use tokio::net::UdpSocket;

/// The flooding sandbox, and the one that must keep being answered.
const FLOODER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
const NEIGHBOUR: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);
/// Names under this zone are allowed, and their upstream never answers.
const STALLED: &str = "stall.test";
/// A public address the answering names resolve to; never connected to.
const ANSWERED_ADDRESS: Ipv4Addr = Ipv4Addr::new(100, 128, 0, 1);

/// Each loopback address is a session of its own (named after it), with the same rules.
struct TwoSandboxes {
    rules: Arc<[sandboxd_api::EgressRule]>,
    records: Mutex<Vec<ConnectionRecord>>,
}

#[async_trait::async_trait]
impl Policy for TwoSandboxes {
    async fn session(&self, peer: IpAddr) -> Option<SessionRules> {
        [FLOODER, NEIGHBOUR]
            .contains(&match peer {
                IpAddr::V4(v4) => v4,
                IpAddr::V6(_) => return None,
            })
            .then(|| SessionRules {
                session_id: peer.to_string(),
                rules: self.rules.clone(),
                secrets: Arc::new([]),
            })
    }
    fn record(&self, record: ConnectionRecord) {
        self.records.lock().unwrap().push(record);
    }
}

/// The door's address and what it recorded.
async fn door(settings: impl FnOnce(&mut Settings)) -> (SocketAddr, Arc<TwoSandboxes>) {
    let table = (0..10)
        .map(|i| (format!("n{i}.answer.test"), ANSWERED_ADDRESS))
        .collect::<HashMap<_, _>>();
    let upstream = dns_server_silent_under(table, Some(STALLED)).await;
    let policy = Arc::new(TwoSandboxes {
        rules: ["*.stall.test", "*.answer.test"]
            .iter()
            .map(|rule| rule.parse().unwrap())
            .collect(),
        records: Mutex::default(),
    });
    let mut with = Settings::new(vec![upstream]);
    settings(&mut with);
    let egress = Egress::new(with, policy.clone()).unwrap();
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let address = socket.local_addr().unwrap();
    tokio::spawn(async move { egress.serve_dns(socket).await });
    (address, policy)
}

/// Sends `count` queries from `socket` for names made by `name`, without waiting for answers;
/// a pause every 50 lets the door read them (a socket's buffer holds about 150 datagrams).
async fn burst(socket: &UdpSocket, door: SocketAddr, count: u16, name: impl Fn(u16) -> String) {
    for id in 0..count {
        socket.send_to(&a_query(&name(id), id), door).await.unwrap();
        if id % 50 == 49 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// The response codes of the answers `socket` gets until `until`, at most `max`.
async fn answers(socket: &UdpSocket, until: tokio::time::Instant, max: usize) -> Vec<ResponseCode> {
    let mut codes = Vec::new();
    let mut buffer = vec![0u8; 1500];
    while codes.len() < max {
        match tokio::time::timeout_at(until, socket.recv(&mut buffer)).await {
            Ok(Ok(n)) => codes.push(answer_of(&buffer[..n]).0),
            _ => break,
        }
    }
    codes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sandbox_stalling_the_upstream_leaves_anothers_lookups_answered() {
    let (door, _policy) = door(|_| {}).await;
    let started = tokio::time::Instant::now();
    // 300 lookups at once into the silent zone, then (from another port of the same sandbox)
    // 100 more every 200 ms while the neighbour asks: more than the door ever had in flight
    // for everyone.
    let stalled = Arc::new(UdpSocket::bind((FLOODER, 0)).await.unwrap());
    // The answers read as they come (a socket's buffer holds fewer), with when they came.
    let answered = tokio::spawn({
        let stalled = stalled.clone();
        async move {
            let mut answered = Vec::new();
            let until = started + Duration::from_secs(8);
            while let Some(code) = answers(&stalled, until, 1).await.pop() {
                answered.push((code, started.elapsed()));
                if answered.len() == 300 {
                    break;
                }
            }
            answered
        }
    });
    burst(&stalled, door, 300, |i| format!("n{i}.{STALLED}")).await;
    let flooding = tokio::spawn(async move {
        let flooder = UdpSocket::bind((FLOODER, 0)).await.unwrap();
        for round in 1..=50u16 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            burst(&flooder, door, 100, |i| format!("r{round}-{i}.{STALLED}")).await;
        }
    });
    for i in 0..10 {
        let name = format!("n{i}.answer.test");
        let answer = tokio::time::timeout(Duration::from_secs(2), ask_from(NEIGHBOUR, door, &name))
            .await
            .unwrap_or_else(|_| panic!("{name} not answered within 2 s during the flood"));
        assert_eq!(
            answer,
            (ResponseCode::NoError, vec![ANSWERED_ADDRESS]),
            "{name}"
        );
    }
    let answered = answered.await.unwrap();
    flooding.abort();
    // Past its bound the flooder is answered at once, not queued behind its own stalled ones;
    // the stalled ones end with the upstream timeout (2 s; the resolver's default took 10 s
    // and more). All of them SERVFAIL.
    let bound = Settings::new(vec![]).max_lookups_per_sandbox;
    let at_once = answered
        .iter()
        .filter(|(_, after)| *after < Duration::from_secs(2))
        .count();
    assert!(
        at_once >= 300 - bound,
        "{at_once} of 300 answered within 2 s"
    );
    assert_eq!(answered.len(), 300, "answered within 8 s: {answered:?}");
    assert!(
        answered
            .iter()
            .all(|(code, _)| *code == ResponseCode::ServFail),
        "{answered:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_refused_lookups_is_recorded_as_a_count() {
    let (door, policy) = door(|settings| {
        settings.refusals_counted_for = Duration::from_secs(1);
    })
    .await;
    let flooder = UdpSocket::bind((FLOODER, 0)).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut codes = Vec::new();
    // 2,000 refused in rounds of 100, each answered before the next (no buffer overflows).
    for round in 0..20 {
        burst(&flooder, door, 100, |i| {
            format!("r{round}-{i}.not-allowed.test")
        })
        .await;
        codes.extend(answers(&flooder, deadline, 100).await);
    }
    assert_eq!(codes.len(), 2000);
    // Every query is refused: by the rules (NXDOMAIN) or, past its bound, SERVFAIL.
    assert!(
        codes
            .iter()
            .all(|code| [ResponseCode::NXDomain, ResponseCode::ServFail].contains(code)),
        "{codes:?}"
    );
    // All of them counted, in a few entries: the first ones of an interval one by one, the
    // rest as one entry when it ends.
    let flooder_records = || -> Vec<ConnectionRecord> {
        let records = policy.records.lock().unwrap();
        records
            .iter()
            .filter(|r| r.session_id == FLOODER.to_string() && r.door == Door::Dns)
            .cloned()
            .collect()
    };
    let counted = |records: &[ConnectionRecord]| -> u64 {
        records
            .iter()
            .map(|r| match &r.outcome {
                Err(Refusal::Counted { count, .. }) => *count,
                _ => 1,
            })
            .sum()
    };
    let mut records = flooder_records();
    while counted(&records) < codes.len() as u64 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        records = flooder_records();
    }
    assert_eq!(counted(&records), codes.len() as u64, "{records:#?}");
    assert!(
        records.len() <= 30,
        "{} entries for {} refusals",
        records.len(),
        codes.len()
    );
    assert!(
        records
            .iter()
            .any(|r| matches!(&r.outcome, Err(Refusal::Counted { last, .. }) if last.by_policy())),
        "{records:#?}"
    );
}
