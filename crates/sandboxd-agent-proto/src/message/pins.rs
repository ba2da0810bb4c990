//! The wire pins' check, shared by the topics' tests: each message, as it is and put in the top
//! enum it travels in, encodes to the exact bytes pinned and decodes back to itself. A change to
//! the encoding (a renamed field, tag or code, a moved `serde` attribute) fails there, so
//! refactoring the message modules cannot change the wire. The connection's own messages are
//! pinned in `mod.rs`.

use super::{Event, ExecRequest, ExitReport, Request};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

/// Checks every pin of a topic's requests; `named` matches the topic's enum exhaustively,
/// so a new request does not compile until it is named (and then counted, so pinned).
/// Returns the ops pinned.
pub(super) fn requests<M>(pins: Vec<(M, &str)>, named: fn(&M) -> &'static str) -> BTreeSet<String>
where
    M: Into<Request> + Serialize,
{
    check::<M, Request>(pins, "op", named)
}

/// As [`requests`], for a topic's events (by their `type`).
pub(super) fn events<M>(pins: Vec<(M, &str)>, named: fn(&M) -> &'static str) -> BTreeSet<String>
where
    M: Into<Event> + Serialize,
{
    check::<M, Event>(pins, "type", named)
}

fn check<M, W>(pins: Vec<(M, &str)>, key: &str, named: fn(&M) -> &'static str) -> BTreeSet<String>
where
    M: Into<W> + Serialize,
    W: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let mut mismatches = Vec::new();
    let mut tags = BTreeSet::new();
    for (message, golden) in pins {
        let name = named(&message);
        // A writer may send a topic's message as it is, without the top enum: the same bytes.
        assert_eq!(serde_json::to_string(&message).unwrap(), golden);
        let message: W = message.into();
        let encoded = serde_json::to_string(&message).unwrap();
        if encoded != golden {
            mismatches.push(format!(
                "{message:?}\n  encodes as {encoded}\n  pinned as  {golden}"
            ));
            continue;
        }
        assert_eq!(serde_json::from_str::<W>(golden).unwrap(), message);
        let value: serde_json::Value = serde_json::from_str(golden).unwrap();
        assert_eq!(value[key].as_str(), Some(name), "{golden}");
        tags.insert(name.to_string());
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    tags
}

pub(super) fn exec() -> ExecRequest {
    ExecRequest {
        argv: vec!["sh".into(), "-c".into(), "true".into()],
        cwd: Some("/w".into()),
        env: BTreeMap::from([("A".into(), "1".into())]),
        stdin: true,
        timeout_ms: 1000,
        output_limit: 64,
    }
}

pub(super) fn exit() -> ExitReport {
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
