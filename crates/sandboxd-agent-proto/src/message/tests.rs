//! Encoding details of single messages; every message is pinned to its bytes in its topic's
//! file or in `mod.rs` (see `pins.rs`).

use super::*;
use crate::error_code::ERROR_SPAWN_FAILED;
use crate::secret::AGENT_SECRET_LEN;
use serde_json::json;
use std::collections::BTreeMap;

#[test]
fn requests_are_tagged_by_op() {
    let exec = Request::Exec(ExecRequest {
        argv: vec!["echo".into(), "hi".into()],
        env: BTreeMap::from([("A".into(), "1".into())]),
        timeout_ms: 1000,
        output_limit: 10,
        ..ExecRequest::default()
    });
    assert_eq!(
        serde_json::to_value(&exec).unwrap(),
        json!({"op": "exec", "argv": ["echo", "hi"], "cwd": null, "env": {"A": "1"},
               "stdin": false, "timeout_ms": 1000, "output_limit": 10})
    );
    assert_eq!(
        serde_json::to_value(Request::Ping).unwrap(),
        json!({"op": "ping"})
    );
}

#[test]
fn optional_exec_fields_default_and_unknown_fields_are_ignored() {
    let request: Request = serde_json::from_value(json!({
        "op": "exec", "argv": ["true"], "timeout_ms": 5, "output_limit": 6, "added_later": 1
    }))
    .unwrap();
    let Request::Exec(exec) = request else {
        panic!("not an exec: {request:?}")
    };
    assert_eq!((exec.cwd, exec.env.len(), exec.stdin), (None, 0, false));
}

#[test]
fn process_start_carries_the_exec_fields_flat() {
    let start = Request::Process(ProcessRequest::ProcessStart(ProcessStartRequest {
        command: ExecRequest {
            argv: vec!["sh".into()],
            timeout_ms: 5,
            output_limit: 6,
            ..ExecRequest::default()
        },
        program: "sh".into(),
        pty: Some(TermSize { cols: 80, rows: 24 }),
        // Left out when false: an older agent reads the same request.
        paced: false,
    }));
    let encoded = serde_json::to_value(&start).unwrap();
    assert_eq!(
        encoded,
        json!({"op": "process_start", "argv": ["sh"], "cwd": null, "env": {}, "stdin": false,
               "timeout_ms": 5, "output_limit": 6, "program": "sh",
               "pty": {"cols": 80, "rows": 24}})
    );
    assert_eq!(serde_json::from_value::<Request>(encoded).unwrap(), start);
    let attach: Request =
        serde_json::from_value(json!({"op": "process_attach", "id": "p1"})).unwrap();
    assert_eq!(
        attach,
        Request::Process(ProcessRequest::ProcessAttach {
            id: "p1".into(),
            since: 0,
            interactive: false
        })
    );
}

#[test]
fn unknown_op_is_a_decode_error() {
    assert!(serde_json::from_value::<Request>(json!({"op": "format_disk"})).is_err());
    // A topic's op with a field missing is refused too, not taken for another variant.
    assert!(serde_json::from_value::<Request>(json!({"op": "process_signal", "id": "p"})).is_err());
    assert!(serde_json::from_value::<Event>(json!({"type": "made_up"})).is_err());
}

#[test]
fn events_are_tagged_by_type_with_flat_fields() {
    let exited = Event::Exited(ExitReport {
        exit_code: Some(3),
        stdout_bytes: 7,
        ..ExitReport::default()
    });
    assert_eq!(
        serde_json::to_value(&exited).unwrap(),
        json!({"type": "exited", "exit_code": 3, "signal": null, "timed_out": false,
               "oom_killed": false, "stdout_bytes": 7, "stderr_bytes": 0, "duration_ms": 0})
    );
    let hello: Event = serde_json::from_str(r#"{"type":"hello","version":1,"pid":7}"#).unwrap();
    assert_eq!(
        hello,
        Event::Hello {
            version: 1,
            pid: 7,
            secret: None
        }
    );
    let error = Event::Error {
        code: ERROR_SPAWN_FAILED.into(),
        message: "x".into(),
    };
    assert_eq!(
        serde_json::to_value(&error).unwrap(),
        json!({"type": "error", "code": "spawn_failed", "message": "x"})
    );
}

#[test]
fn the_secret_travels_in_the_hello_and_never_shows_in_debug() {
    let secret = AgentSecret::from_bytes(&[0xab; AGENT_SECRET_LEN]);
    assert_eq!(secret.expose(), "ab".repeat(AGENT_SECRET_LEN));
    let hello = Event::Hello {
        version: PROTOCOL_VERSION,
        pid: 7,
        secret: Some(secret.clone()),
    };
    let encoded = serde_json::to_value(&hello).unwrap();
    assert_eq!(encoded["secret"], secret.expose());
    assert_eq!(serde_json::from_value::<Event>(encoded).unwrap(), hello);
    assert!(!format!("{hello:?}").contains("abab"), "{hello:?}");
}
