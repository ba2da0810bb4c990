//! The wire pinned to its bytes: one value of every request, event and wire struct, encoded
//! and compared with the exact JSON an agent or a service of this protocol version sends, then
//! decoded back. A change to the protocol's encoding (a renamed field, tag or code, a moved
//! `serde` attribute) fails here, so refactoring the message modules cannot change the wire.

use sandboxd_agent_proto::kernel::{
    KernelContext, KernelError, KernelOutcome, KernelResult, KernelRunEnd, KernelRunRequest,
};
use sandboxd_agent_proto::{
    write_json, AgentSecret, ArchiveSummary, ChangeKind, DirEntry, EntryKind, ErrorCode, Event,
    ExecRequest, ExitReport, FileChange, FileStat, ListeningPort, ProcessInfo, ProcessStartRequest,
    Request, TermSize,
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

fn process() -> ProcessInfo {
    ProcessInfo {
        id: "p1".into(),
        pid: 42,
        program: "sh".into(),
        pty: true,
        stdin_open: false,
        started_at_ms: 1_700_000_000_000,
        timeout_ms: 5,
        output_start: 1,
        output_end: 2,
        exit: Some(exit()),
    }
}

fn entry(name: &str, kind: EntryKind, target_kind: Option<EntryKind>) -> DirEntry {
    DirEntry {
        name: name.into(),
        kind,
        size: 12,
        mode: 0o4755,
        modified_secs: -1,
        modified_nanos: 500,
        target_kind,
    }
}

fn summary() -> ArchiveSummary {
    ArchiveSummary {
        files: 1,
        dirs: 2,
        symlinks: 3,
        bytes: 4,
        skipped: 5,
    }
}

fn secret() -> AgentSecret {
    AgentSecret::from_bytes(&[0x5a; 32])
}

fn context() -> KernelContext {
    KernelContext {
        context: "ctx-1".into(),
        language: "python".into(),
        cwd: Some("/w".into()),
    }
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
        (
            Request::ListDir {
                path: "/d".into(),
                max_entries: 10,
            },
            r#"{"op":"list_dir","path":"/d","max_entries":10}"#,
        ),
        (
            Request::ReadFile {
                path: "/f".into(),
                unsized_limit: 1,
                max_size: None,
                max_unallocated: None,
            },
            r#"{"op":"read_file","path":"/f","unsized_limit":1}"#,
        ),
        (
            Request::ReadFile {
                path: "/f".into(),
                unsized_limit: 1,
                max_size: Some(2),
                max_unallocated: Some(3),
            },
            r#"{"op":"read_file","path":"/f","unsized_limit":1,"max_size":2,"max_unallocated":3}"#,
        ),
        (
            Request::WriteFile {
                path: "/f".into(),
                max_bytes: 4,
                mode: None,
            },
            r#"{"op":"write_file","path":"/f","max_bytes":4}"#,
        ),
        (
            Request::WriteFile {
                path: "/f".into(),
                max_bytes: 4,
                mode: Some(0o755),
            },
            r#"{"op":"write_file","path":"/f","max_bytes":4,"mode":493}"#,
        ),
        (
            Request::Delete {
                path: "/f".into(),
                recursive: true,
            },
            r#"{"op":"delete","path":"/f","recursive":true}"#,
        ),
        (Request::Cancel, r#"{"op":"cancel"}"#),
        (
            Request::ProcessStart(ProcessStartRequest {
                command: exec(),
                program: "sh".into(),
                pty: Some(TermSize { cols: 80, rows: 24 }),
                paced: true,
            }),
            r#"{"op":"process_start","argv":["sh","-c","true"],"cwd":"/w","env":{"A":"1"},"stdin":true,"timeout_ms":1000,"output_limit":64,"program":"sh","pty":{"cols":80,"rows":24},"paced":true}"#,
        ),
        (
            Request::ProcessStart(ProcessStartRequest {
                command: ExecRequest::default(),
                program: "x".into(),
                pty: None,
                paced: false,
            }),
            r#"{"op":"process_start","argv":[],"cwd":null,"env":{},"stdin":false,"timeout_ms":0,"output_limit":0,"program":"x","pty":null}"#,
        ),
        (Request::ProcessList, r#"{"op":"process_list"}"#),
        (
            Request::ProcessAttach {
                id: "p1".into(),
                since: 5,
                interactive: true,
            },
            r#"{"op":"process_attach","id":"p1","since":5,"interactive":true}"#,
        ),
        (
            Request::ProcessSignal {
                id: "p1".into(),
                signal: 9,
            },
            r#"{"op":"process_signal","id":"p1","signal":9}"#,
        ),
        (
            Request::ProcessStdin {
                id: "p1".into(),
                len: 3,
                close: true,
            },
            r#"{"op":"process_stdin","id":"p1","len":3,"close":true}"#,
        ),
        (
            Request::ProcessResize {
                id: "p1".into(),
                size: TermSize { cols: 1, rows: 2 },
            },
            r#"{"op":"process_resize","id":"p1","size":{"cols":1,"rows":2}}"#,
        ),
        (Request::KillAll, r#"{"op":"kill_all"}"#),
        (
            Request::Stat { path: "/s".into() },
            r#"{"op":"stat","path":"/s"}"#,
        ),
        (
            Request::MakeDir {
                path: "/m".into(),
                parents: true,
            },
            r#"{"op":"make_dir","path":"/m","parents":true}"#,
        ),
        (
            Request::Move {
                from: "/a".into(),
                to: "/b".into(),
                overwrite: true,
            },
            r#"{"op":"move","from":"/a","to":"/b","overwrite":true}"#,
        ),
        (
            Request::Watch {
                path: "/w".into(),
                recursive: true,
                max_watches: 7,
            },
            r#"{"op":"watch","path":"/w","recursive":true,"max_watches":7}"#,
        ),
        (
            Request::PortConnect { port: 8080 },
            r#"{"op":"port_connect","port":8080}"#,
        ),
        (
            Request::ListPorts { max_ports: 6 },
            r#"{"op":"list_ports","max_ports":6}"#,
        ),
        (
            Request::Claim { secret: secret() },
            r#"{"op":"claim","secret":"5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"}"#,
        ),
        (
            Request::ReadArchive {
                path: "/t".into(),
                max_bytes: 100,
            },
            r#"{"op":"read_archive","path":"/t","max_bytes":100}"#,
        ),
        (
            Request::WriteArchive {
                path: "/t".into(),
                max_bytes: 100,
            },
            r#"{"op":"write_archive","path":"/t","max_bytes":100}"#,
        ),
        (
            Request::KernelRun(KernelRunRequest {
                context: "ctx-1".into(),
                language: "python".into(),
                kernel: vec!["k".into(), "{connection_file}".into()],
                cwd: None,
                env: BTreeMap::from([("B".into(), "2".into())]),
                code: "1+1".into(),
                timeout_ms: 10,
                output_limit: 20,
            }),
            r#"{"op":"kernel_run","context":"ctx-1","language":"python","kernel":["k","{connection_file}"],"cwd":null,"env":{"B":"2"},"code":"1+1","timeout_ms":10,"output_limit":20}"#,
        ),
        (
            Request::KernelShutdown {
                context: "ctx-1".into(),
            },
            r#"{"op":"kernel_shutdown","context":"ctx-1"}"#,
        ),
        (Request::KernelList, r#"{"op":"kernel_list"}"#),
        (
            Request::KernelDeclare(context()),
            r#"{"op":"kernel_declare","context":"ctx-1","language":"python","cwd":"/w"}"#,
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
        (
            Event::DirEntries {
                entries: vec![
                    entry("f", EntryKind::File, None),
                    entry("d", EntryKind::Dir, None),
                    entry("l", EntryKind::Symlink, Some(EntryKind::Other)),
                ],
            },
            r#"{"type":"dir_entries","entries":[{"name":"f","kind":"file","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500},{"name":"d","kind":"dir","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500},{"name":"l","kind":"symlink","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500,"target_kind":"other"}]}"#,
        ),
        (
            Event::DirEnd { truncated: true },
            r#"{"type":"dir_end","truncated":true}"#,
        ),
        (
            Event::FileOpened { size: Some(5) },
            r#"{"type":"file_opened","size":5}"#,
        ),
        (
            Event::FileOpened { size: None },
            r#"{"type":"file_opened","size":null}"#,
        ),
        (
            Event::FileEnd { bytes: 5 },
            r#"{"type":"file_end","bytes":5}"#,
        ),
        (Event::WriteReady, r#"{"type":"write_ready"}"#),
        (
            Event::FileWritten { bytes: 6 },
            r#"{"type":"file_written","bytes":6}"#,
        ),
        (Event::Deleted, r#"{"type":"deleted"}"#),
        (
            Event::Process(process()),
            r#"{"type":"process","id":"p1","pid":42,"program":"sh","pty":true,"stdin_open":false,"started_at_ms":1700000000000,"timeout_ms":5,"output_start":1,"output_end":2,"exit":{"exit_code":3,"signal":null,"timed_out":true,"oom_killed":false,"stdout_bytes":7,"stderr_bytes":8,"duration_ms":9}}"#,
        ),
        (
            Event::ProcessList {
                processes: vec![ProcessInfo::default()],
            },
            r#"{"type":"process_list","processes":[{"id":"","pid":0,"program":"","pty":false,"stdin_open":false,"started_at_ms":0,"timeout_ms":0,"output_start":0,"output_end":0,"exit":null}]}"#,
        ),
        (
            Event::OutputFrom { offset: 11 },
            r#"{"type":"output_from","offset":11}"#,
        ),
        (
            Event::StdinWritten { bytes: 12 },
            r#"{"type":"stdin_written","bytes":12}"#,
        ),
        (
            Event::KilledAll {
                killed: 2,
                remaining: 1,
            },
            r#"{"type":"killed_all","killed":2,"remaining":1}"#,
        ),
        (
            Event::ArchiveOpened {
                entries: 3,
                bytes: 4,
            },
            r#"{"type":"archive_opened","entries":3,"bytes":4}"#,
        ),
        (
            Event::ArchiveEnd(summary()),
            r#"{"type":"archive_end","files":1,"dirs":2,"symlinks":3,"bytes":4,"skipped":5}"#,
        ),
        (
            Event::ArchiveWritten(summary()),
            r#"{"type":"archive_written","files":1,"dirs":2,"symlinks":3,"bytes":4,"skipped":5}"#,
        ),
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
            Event::Stat(FileStat {
                entry: entry("l", EntryKind::Symlink, Some(EntryKind::Dir)),
                symlink_target: Some("../x".into()),
                resolved_target: Some("/x".into()),
            }),
            r#"{"type":"stat","name":"l","kind":"symlink","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500,"target_kind":"dir","symlink_target":"../x","resolved_target":"/x"}"#,
        ),
        (
            Event::Stat(FileStat {
                entry: entry("f", EntryKind::File, None),
                symlink_target: None,
                resolved_target: None,
            }),
            r#"{"type":"stat","name":"f","kind":"file","size":12,"mode":2541,"modified_secs":-1,"modified_nanos":500}"#,
        ),
        (
            Event::DirMade { created: true },
            r#"{"type":"dir_made","created":true}"#,
        ),
        (Event::Watching, r#"{"type":"watching"}"#),
        (
            Event::FileChanges {
                changes: [
                    ChangeKind::Create,
                    ChangeKind::Write,
                    ChangeKind::Remove,
                    ChangeKind::Rename,
                    ChangeKind::Chmod,
                    ChangeKind::Overflow,
                ]
                .into_iter()
                .map(|kind| FileChange {
                    kind,
                    path: "/w/a".into(),
                })
                .collect(),
            },
            r#"{"type":"file_changes","changes":[{"type":"create","path":"/w/a"},{"type":"write","path":"/w/a"},{"type":"remove","path":"/w/a"},{"type":"rename","path":"/w/a"},{"type":"chmod","path":"/w/a"},{"type":"overflow","path":"/w/a"}]}"#,
        ),
        (Event::WatchEnd, r#"{"type":"watch_end"}"#),
        (Event::PortConnected, r#"{"type":"port_connected"}"#),
        (
            Event::Ports {
                ports: vec![
                    ListeningPort {
                        port: 80,
                        address: "0.0.0.0".into(),
                        pid: Some(9),
                        program: Some("nginx".into()),
                    },
                    ListeningPort {
                        port: 81,
                        address: "::".into(),
                        pid: None,
                        program: None,
                    },
                ],
            },
            r#"{"type":"ports","ports":[{"port":80,"address":"0.0.0.0","pid":9,"program":"nginx"},{"port":81,"address":"::"}]}"#,
        ),
        (
            Event::OutputOmitted {
                stderr: true,
                bytes: 13,
            },
            r#"{"type":"output_omitted","stderr":true,"bytes":13}"#,
        ),
        (
            Event::KernelStream {
                name: "stdout".into(),
                text: "hi\n".into(),
            },
            r#"{"type":"kernel_stream","name":"stdout","text":"hi\n"}"#,
        ),
        (
            Event::KernelResult(KernelResult {
                data: BTreeMap::from([
                    ("text/plain".into(), serde_json::json!("2")),
                    ("application/json".into(), serde_json::json!({"a": [1]})),
                ]),
                metadata: serde_json::Map::from_iter([("m".into(), serde_json::json!(true))]),
                is_main_result: true,
            }),
            r#"{"type":"kernel_result","data":{"application/json":{"a":[1]},"text/plain":"2"},"metadata":{"m":true},"is_main_result":true}"#,
        ),
        (
            Event::KernelError(KernelError {
                name: "ValueError".into(),
                value: "bad".into(),
                traceback: vec!["line 1".into()],
            }),
            r#"{"type":"kernel_error","name":"ValueError","value":"bad","traceback":["line 1"]}"#,
        ),
        (
            Event::KernelEnd(KernelRunEnd {
                outcome: KernelOutcome::KernelDied,
                execution_count: Some(4),
                started: true,
                restarted: true,
                exit_code: None,
                signal: Some(9),
                dropped_bytes: 14,
                duration_ms: 15,
            }),
            r#"{"type":"kernel_end","outcome":"kernel_died","execution_count":4,"started":true,"restarted":true,"exit_code":null,"signal":9,"dropped_bytes":14,"duration_ms":15}"#,
        ),
        (
            Event::KernelStopped { existed: true },
            r#"{"type":"kernel_stopped","existed":true}"#,
        ),
        (
            Event::Kernels {
                kernels: vec![context()],
            },
            r#"{"type":"kernels","kernels":[{"context":"ctx-1","language":"python","cwd":"/w"}]}"#,
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

/// No variant is left out: the values above carry every tag. `Request` is matched
/// exhaustively, so a new request does not compile until it is named here and pinned above.
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
            Request::ListDir { .. } => "list_dir",
            Request::ReadFile { .. } => "read_file",
            Request::WriteFile { .. } => "write_file",
            Request::Delete { .. } => "delete",
            Request::Cancel => "cancel",
            Request::ProcessStart(_) => "process_start",
            Request::ProcessList => "process_list",
            Request::ProcessAttach { .. } => "process_attach",
            Request::ProcessSignal { .. } => "process_signal",
            Request::ProcessStdin { .. } => "process_stdin",
            Request::ProcessResize { .. } => "process_resize",
            Request::KillAll => "kill_all",
            Request::Stat { .. } => "stat",
            Request::MakeDir { .. } => "make_dir",
            Request::Move { .. } => "move",
            Request::Watch { .. } => "watch",
            Request::PortConnect { .. } => "port_connect",
            Request::ListPorts { .. } => "list_ports",
            Request::Claim { .. } => "claim",
            Request::ReadArchive { .. } => "read_archive",
            Request::WriteArchive { .. } => "write_archive",
            Request::KernelRun(_) => "kernel_run",
            Request::KernelShutdown { .. } => "kernel_shutdown",
            Request::KernelList => "kernel_list",
            Request::KernelDeclare(_) => "kernel_declare",
        }
    }
    let request_tags: BTreeSet<String> = requests()
        .iter()
        .map(|(request, golden)| {
            assert_eq!(tag(golden, "op"), named(request));
            tag(golden, "op")
        })
        .collect();
    assert_eq!(request_tags.len(), 28, "{request_tags:?}");
    // `Event` is `#[non_exhaustive]`, so it cannot be matched exhaustively from here: count.
    let event_tags: BTreeSet<String> = events().iter().map(|(_, g)| tag(g, "type")).collect();
    assert_eq!(event_tags.len(), 34, "{event_tags:?}");
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
