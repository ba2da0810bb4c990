//! The wire pinned to its bytes: one value of every message of the connection itself (the
//! requests and events of `Request` and `Event` that belong to no topic), encoded and compared
//! with the exact JSON an agent or a service of this protocol version sends, then decoded back.
//! Each topic's messages (files, process, ports, kernel) are pinned the same way, through
//! `Request` and `Event`, in their own file under `src/message/`. A change to the protocol's
//! encoding (a renamed field, tag or code, a moved `serde` attribute) fails here or there, so
//! refactoring the message modules cannot change the wire.

use sandboxd_agent_proto::kernel::KernelOutcome;
use sandboxd_agent_proto::{
    write_json, AgentSecret, EntryKind, ErrorCode, Event, ExecRequest, ExitReport, Request,
};
use std::collections::{BTreeMap, BTreeSet};

fn exec() -> ExecRequest {
    ExecRequest {
        argv: vec!["sh".into(), "-c".into(), "true".into()],
        cwd: Some("/w".into()),
        env: BTreeMap::from([("A".into(), "1".into())]),
        stdin: true,
        timeout_ms: 1000,
        output_limit: 64,
    }
}

fn exit() -> ExitReport {
    ExitReport {
        exit_code: Some(3),
        signal: None,
        timed_out: true,
        oom_killed: false,
        stdout_bytes: 7,
        stderr_bytes: 8,
        duration_ms: 9,
    }
}

fn secret() -> AgentSecret {
    AgentSecret::from_bytes(&[0x5a; 32])
}

/// Every request, each with the bytes it travels as.
fn requests() -> Vec<(Request, &'static str)> {
    vec![
        (Request::Ping, r#"{"op":"ping"}"#),
        (Request::Dismiss, r#"{"op":"dismiss"}"#),
        (
            Request::Exec(exec()),
            r#"{"op":"exec","argv":["sh","-c","true"],"cwd":"/w","env":{"A":"1"},"stdin":true,"timeout_ms":1000,"output_limit":64}"#,
        ),
        (Request::Cancel, r#"{"op":"cancel"}"#),
        (
            Request::Claim { secret: secret() },
            r#"{"op":"claim","secret":"5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"}"#,
        ),
    ]
}

/// Every event, each with the bytes it travels as.
fn events() -> Vec<(Event, &'static str)> {
    vec![
        (
            Event::Hello {
                version: 2,
                pid: 7,
                secret: Some(secret()),
            },
            r#"{"type":"hello","version":2,"pid":7,"secret":"5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"}"#,
        ),
        (
            Event::Hello {
                version: 1,
                pid: 7,
                secret: None,
            },
            r#"{"type":"hello","version":1,"pid":7,"secret":null}"#,
        ),
        (Event::Pong, r#"{"type":"pong"}"#),
        (Event::Started { pid: 3 }, r#"{"type":"started","pid":3}"#),
        (
            Event::Exited(exit()),
            r#"{"type":"exited","exit_code":3,"signal":null,"timed_out":true,"oom_killed":false,"stdout_bytes":7,"stderr_bytes":8,"duration_ms":9}"#,
        ),
        (Event::WriteReady, r#"{"type":"write_ready"}"#),
        (
            Event::Error {
                code: ErrorCode::SpawnFailed,
                message: "no such file".into(),
            },
            r#"{"type":"error","code":"spawn_failed","message":"no such file"}"#,
        ),
        (
            // A code this build does not know is kept as sent, both ways.
            Event::Error {
                code: ErrorCode::Other("made_up".into()),
                message: "m".into(),
            },
            r#"{"type":"error","code":"made_up","message":"m"}"#,
        ),
        (
            Event::OutputOmitted {
                stderr: true,
                bytes: 13,
            },
            r#"{"type":"output_omitted","stderr":true,"bytes":13}"#,
        ),
    ]
}

/// Each request encodes to its bytes and decodes back to itself.
#[test]
fn every_request_is_the_same_bytes() {
    let mut mismatches = Vec::new();
    for (request, golden) in requests() {
        let encoded = serde_json::to_string(&request).unwrap();
        if encoded != golden {
            mismatches.push(format!(
                "{request:?}\n  encodes as {encoded}\n  pinned as  {golden}"
            ));
            continue;
        }
        assert_eq!(serde_json::from_str::<Request>(golden).unwrap(), request);
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Each event encodes to its bytes and decodes back to itself.
#[test]
fn every_event_is_the_same_bytes() {
    let mut mismatches = Vec::new();
    for (event, golden) in events() {
        let encoded = serde_json::to_string(&event).unwrap();
        if encoded != golden {
            mismatches.push(format!(
                "{event:?}\n  encodes as {encoded}\n  pinned as  {golden}"
            ));
            continue;
        }
        assert_eq!(serde_json::from_str::<Event>(golden).unwrap(), event);
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// No variant is left out: the values above carry every tag of the connection's own messages.
/// `Request` is matched exhaustively, so a new request does not compile until it is named
/// here and pinned above. The topics' requests and events are pinned in their files in
/// `src/message/`, each topic's enums matched exhaustively there.
#[test]
fn every_variant_is_pinned() {
    fn tag(json: &str, key: &str) -> String {
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        value[key].as_str().unwrap().to_string()
    }
    fn named(request: &Request) -> &'static str {
        match request {
            Request::Ping => "ping",
            Request::Dismiss => "dismiss",
            Request::Exec(_) => "exec",
            Request::Cancel => "cancel",
            Request::Claim { .. } => "claim",
            Request::Files(_) | Request::Process(_) | Request::Ports(_) | Request::Kernel(_) => {
                "a topic's, pinned in its file"
            }
        }
    }
    let request_tags: BTreeSet<String> = requests()
        .iter()
        .map(|(request, golden)| {
            assert_eq!(tag(golden, "op"), named(request));
            tag(golden, "op")
        })
        .collect();
    assert_eq!(request_tags.len(), 5, "{request_tags:?}");
    // `Event` is `#[non_exhaustive]`, so it cannot be matched exhaustively from here: count.
    let event_tags: BTreeSet<String> = events().iter().map(|(_, g)| tag(g, "type")).collect();
    assert_eq!(event_tags.len(), 7, "{event_tags:?}");
}

/// The enums inside messages, each value by its string.
#[test]
fn every_kind_and_outcome_is_the_same_string() {
    let kinds = [
        EntryKind::File,
        EntryKind::Dir,
        EntryKind::Symlink,
        EntryKind::Other,
    ]
    .map(|kind| serde_json::to_string(&kind).unwrap());
    assert_eq!(
        kinds,
        [r#""file""#, r#""dir""#, r#""symlink""#, r#""other""#]
    );
    let outcomes = [
        KernelOutcome::Ok,
        KernelOutcome::Error,
        KernelOutcome::TimedOut,
        KernelOutcome::KernelDied,
    ]
    .map(|outcome| serde_json::to_string(&outcome).unwrap());
    assert_eq!(
        outcomes,
        [
            r#""ok""#,
            r#""error""#,
            r#""timed_out""#,
            r#""kernel_died""#
        ]
    );
}

/// A JSON frame on the wire: kind byte 1, the big-endian length, the JSON.
#[test]
fn a_json_frame_is_the_same_bytes() {
    let mut bytes = Vec::new();
    write_json(&mut bytes, &Request::Ping).unwrap();
    assert_eq!(bytes, b"\x01\x00\x00\x00\x0d{\"op\":\"ping\"}");
}
