//! The wire pinned to its bytes, for what is not a message: the enums inside messages, each by
//! its string, and a frame's bytes. Every message is pinned in `src/message/`: the
//! connection's own in `mod.rs`, each topic's in its file, each encoded through `Request` or
//! `Event` and compared with the exact JSON an agent or a service of this protocol version
//! sends, then decoded back (see `src/message/pins.rs`).

use sandboxd_agent_proto::kernel::KernelOutcome;
use sandboxd_agent_proto::{write_json, EntryKind, Request};

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
