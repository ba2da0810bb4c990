//! Tracked processes end to end: the real agent binary, started as a local child process,
//! dials an `AgentHub` in a temporary directory; the service side uses the host clients.

mod common;

use common::Spawning;

use sandboxd_agent_proto::host::{
    attach_process, list_processes, resize_process, signal_process, start_process,
    write_process_stdin, OutputEvent, ProcessInput, ProcessOutput,
};
use sandboxd_agent_proto::{
    AgentLease, ExecRequest, FrameKind, ProcessInfo, ProcessStartRequest, ProtoError, TermSize,
};
use std::time::{Duration, Instant};
use tokio::io::{ReadHalf, WriteHalf};

const TIMEOUT: Duration = Duration::from_secs(5);

/// The agent and the hub it dials, with the process requests these tests make.
struct Fixture(common::Fixture);

type Output = ProcessOutput<ReadHalf<AgentLease>>;
type Input = ProcessInput<WriteHalf<AgentLease>>;

impl Fixture {
    async fn start_with(spawning: Spawning) -> Self {
        Self(common::Fixture::start_with(spawning).await)
    }

    async fn connection(&self) -> AgentLease {
        self.0.hub.acquire(TIMEOUT).await.unwrap()
    }

    async fn start_process(
        &self,
        request: &ProcessStartRequest,
    ) -> Result<ProcessInfo, ProtoError> {
        start_process(&mut self.connection().await, request, TIMEOUT).await
    }

    async fn sh(&self, script: &str) -> ProcessInfo {
        self.start_process(&sh(script)).await.unwrap()
    }

    async fn attach(&self, id: &str, since: u64, interactive: bool) -> (Output, Input) {
        attach_process(self.connection().await, id, since, interactive, TIMEOUT)
            .await
            .unwrap()
    }

    async fn wait_for_exit(&self, id: &str) -> ProcessInfo {
        let give_up = Instant::now() + TIMEOUT;
        loop {
            let info = self.info(id).await;
            if info.exit.is_some() {
                return info;
            }
            assert!(Instant::now() < give_up, "{id} did not exit");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Until signalling the process's group finds nobody (killed orphans may take a moment
    /// to be reaped by init).
    async fn wait_until_group_gone(&self, id: &str) {
        let give_up = Instant::now() + TIMEOUT;
        loop {
            let signalled =
                signal_process(&mut self.connection().await, id, libc::SIGCONT, TIMEOUT).await;
            match signalled {
                Err(ProtoError::Agent { code, .. }) if code == "process_exited" => return,
                Ok(_) => assert!(Instant::now() < give_up, "group of {id} still alive"),
                Err(e) => panic!("{e}"),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn info(&self, id: &str) -> ProcessInfo {
        let processes = list_processes(&mut self.connection().await, TIMEOUT)
            .await
            .unwrap();
        processes.into_iter().find(|p| p.id == id).unwrap()
    }
}

fn sh(script: &str) -> ProcessStartRequest {
    ProcessStartRequest {
        command: ExecRequest {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            timeout_ms: 30_000,
            output_limit: 1 << 20,
            ..ExecRequest::default()
        },
        program: "sh".into(),
        pty: None,
        paced: false,
    }
}

/// Everything up to the exit: the output as text with the kind of each piece, and the exit.
async fn read_to_exit(output: &mut Output) -> (Vec<(FrameKind, u64, String)>, ProcessInfo) {
    let mut pieces = Vec::new();
    loop {
        match tokio::time::timeout(TIMEOUT, output.next())
            .await
            .unwrap()
            .unwrap()
        {
            OutputEvent::Output { kind, offset, data } => {
                pieces.push((kind, offset, String::from_utf8(data).unwrap()))
            }
            OutputEvent::Dropped { offset, bytes } => panic!("dropped {bytes} at {offset}"),
            OutputEvent::Exited(info) => return (pieces, info),
        }
    }
}

fn joined(pieces: &[(FrameKind, u64, String)]) -> String {
    pieces.iter().map(|(_, _, text)| text.as_str()).collect()
}

/// Reads output until `text` has appeared, returning all of it.
///
/// Under a flood the agent may rightly report output as dropped (it left the ring before it
/// was sent) and then go on streaming; that is no failure. Every byte must still be accounted
/// for in order (sent or reported dropped), and `text` only counts when it appears in one
/// unbroken stretch of output, never pieced together across a gap: so wait for text that is
/// produced after a flood stops, not in the middle of it.
async fn read_until(output: &mut Output, text: &str) -> String {
    let needle = text.as_bytes();
    let mut seen = Vec::new();
    // Where the output after the last gap starts in `seen`.
    let mut unbroken_from = 0;
    let mut next_offset = None;
    loop {
        let event = tokio::time::timeout(TIMEOUT, output.next()).await;
        let (offset, length) = match &event {
            Ok(Ok(OutputEvent::Output { offset, data, .. })) => (*offset, data.len() as u64),
            Ok(Ok(OutputEvent::Dropped { offset, bytes })) => (*offset, *bytes),
            // The end of what came is enough to tell why (a flood may have brought megabytes).
            _ => panic!(
                "{event:?} before {text:?}; {} bytes came, ending {:?}",
                seen.len(),
                String::from_utf8_lossy(&seen[seen.len().saturating_sub(300)..])
            ),
        };
        if let Some(expected) = next_offset {
            assert_eq!(offset, expected, "a gap nothing reported: {event:?}");
        }
        next_offset = Some(offset + length);
        match event {
            Ok(Ok(OutputEvent::Output { data, .. })) => {
                // Only the new bytes and what a marker straddling into them could start with.
                let search_from = seen.len().saturating_sub(needle.len()).max(unbroken_from);
                seen.extend_from_slice(&data);
                if seen[search_from..]
                    .windows(needle.len())
                    .any(|window| window == needle)
                {
                    return String::from_utf8_lossy(&seen).into_owned();
                }
            }
            _ => unbroken_from = seen.len(),
        }
    }
}

async fn output_streams_live_and_replays_from_any_offset_after_the_exit(fixture: Fixture) {
    // The process goes on past its first lines only once the test opens the gate: the first
    // line arriving before that is output streamed live, whatever the machine's speed.
    let gate = tempfile::tempdir().unwrap();
    let open = gate.path().join("open");
    let info = fixture
        .sh(&format!(
            "echo first; echo oops >&2; until [ -e {} ]; do sleep 0.02; done; echo second; exit 3",
            open.display()
        ))
        .await;
    assert_eq!(info.exit, None);
    assert!(info.pid > 1);

    let (mut output, _) = fixture.attach(&info.id, 0, false).await;
    assert_eq!(read_until(&mut output, "first").await, "first\n");
    assert_eq!(fixture.info(&info.id).await.exit, None, "it still runs");
    std::fs::write(&open, "").unwrap();
    let (rest, exited) = read_to_exit(&mut output).await;
    assert_eq!(joined(&rest), "oops\nsecond\n");
    assert_eq!(rest[0].0, FrameKind::Stderr);
    let exit = exited.exit.unwrap();
    assert_eq!((exit.exit_code, exit.signal), (Some(3), None));
    assert_eq!((exit.stdout_bytes, exit.stderr_bytes), (13, 5));

    // The exit is kept, and the output can be replayed from any offset.
    assert_eq!(fixture.info(&info.id).await.exit, Some(exit));
    let (mut replay, _) = fixture.attach(&info.id, 6, false).await;
    let (pieces, _) = read_to_exit(&mut replay).await;
    assert_eq!(joined(&pieces), "oops\nsecond\n");
    assert_eq!(pieces[0].1, 6);

    let beyond = attach_process(fixture.connection().await, &info.id, 99, false, TIMEOUT).await;
    assert!(matches!(beyond, Err(ProtoError::Agent { code, .. }) if code == "bad_request"));
    let missing = attach_process(fixture.connection().await, "p999", 0, false, TIMEOUT).await;
    assert!(matches!(missing, Err(ProtoError::Agent { code, .. }) if code == "no_such_process"));
}

async fn output_beyond_the_ring_is_reported_dropped(fixture: Fixture) {
    let mut request = sh("head -c 100000 /dev/zero; echo; echo end");
    request.command.output_limit = 10_000;
    let info = fixture.start_process(&request).await.unwrap();
    // Once it has exited, its start (a quarter of the ring) and its newest bytes are left to
    // replay: the middle is reported dropped.
    let done = fixture.wait_for_exit(&info.id).await;
    assert_eq!((done.output_start, done.output_end), (0, 100_005));
    let (mut replay, _) = fixture.attach(&info.id, 0, false).await;
    let mut start = Vec::new();
    let dropped = loop {
        match replay.next().await.unwrap() {
            OutputEvent::Output { offset, data, .. } => {
                assert_eq!(offset, start.len() as u64);
                start.extend(data);
            }
            OutputEvent::Dropped { offset, bytes } => {
                assert_eq!(offset, start.len() as u64);
                break bytes;
            }
            other => panic!("{other:?}"),
        }
    };
    assert!(
        !start.is_empty() && start.len() <= 2_500 && start.iter().all(|b| *b == 0),
        "{} bytes of the start",
        start.len()
    );
    assert!(dropped > 90_000, "{dropped}");
    let (pieces, _) = read_to_exit(&mut replay).await;
    assert!(joined(&pieces).ends_with("\nend\n"));
    assert!(joined(&pieces).len() <= 7_500);
}

async fn a_paced_process_waits_for_its_slow_stream_and_loses_nothing(fixture: Fixture) {
    // Ten times the ring, written as fast as it goes.
    let mut request = sh("head -c 3000000 /dev/zero | tr '\\0' x; echo end");
    request.command.output_limit = 300_000;
    request.paced = true;
    let info = fixture.start_process(&request).await.unwrap();
    // Nothing attached yet: it waits once the ring is full.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let held = fixture.info(&info.id).await;
    assert!(held.exit.is_none() && held.output_end < 400_000, "{held:?}");
    let (mut output, _) = fixture.attach(&info.id, 0, false).await;
    let mut received = 0u64;
    loop {
        match tokio::time::timeout(TIMEOUT, output.next())
            .await
            .unwrap()
            .unwrap()
        {
            OutputEvent::Output { offset, data, .. } => {
                assert_eq!(offset, received, "a gap");
                received += data.len() as u64;
                // A slow reader.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            OutputEvent::Dropped { bytes, .. } => panic!("{bytes} bytes dropped"),
            OutputEvent::Exited(info) => {
                assert_eq!(info.exit.unwrap().exit_code, Some(0));
                break;
            }
        }
    }
    assert_eq!(received, 3_000_004);
}

async fn stdin_is_written_then_closed(fixture: Fixture) {
    let mut request = sh("cat; echo done");
    request.command.stdin = true;
    let info = fixture.start_process(&request).await.unwrap();
    assert!(info.stdin_open);
    let (mut output, _) = fixture.attach(&info.id, 0, false).await;
    let mut connection = fixture.connection().await;
    let written = write_process_stdin(&mut connection, &info.id, b"hello\n", false, TIMEOUT)
        .await
        .unwrap();
    assert_eq!(written, 6);
    assert_eq!(read_until(&mut output, "hello").await, "hello\n");
    // The same connection takes the next request.
    write_process_stdin(&mut connection, &info.id, b"bye", true, TIMEOUT)
        .await
        .unwrap();
    let (rest, exited) = read_to_exit(&mut output).await;
    assert_eq!(joined(&rest), "byedone\n");
    assert_eq!(exited.exit.unwrap().exit_code, Some(0));
    assert!(!exited.stdin_open);

    let closed = write_process_stdin(&mut connection, &info.id, b"late", false, TIMEOUT).await;
    assert!(matches!(closed, Err(ProtoError::Agent { code, .. }) if code == "stdin_unavailable"));
    let no_stdin = fixture.sh("sleep 5").await;
    let refused = write_process_stdin(&mut connection, &no_stdin.id, b"x", false, TIMEOUT).await;
    assert!(matches!(refused, Err(ProtoError::Agent { code, .. }) if code == "stdin_unavailable"));
    signal_process(&mut connection, &no_stdin.id, libc::SIGKILL, TIMEOUT)
        .await
        .unwrap();
}

async fn a_process_that_does_not_read_fails_the_write_and_the_connection_stays_in_step(
    fixture: Fixture,
) {
    let mut request = sh("sleep 30");
    request.command.stdin = true;
    let info = fixture.start_process(&request).await.unwrap();
    let mut connection = fixture.connection().await;
    let big = vec![b'x'; 1 << 20];
    let started = Instant::now();
    let stalled = write_process_stdin(&mut connection, &info.id, &big, false, TIMEOUT * 3).await;
    assert!(
        matches!(&stalled, Err(ProtoError::Agent { code, message }) if code == "stdin_unavailable" && message.contains("did not read")),
        "{stalled:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    let signalled = signal_process(&mut connection, &info.id, libc::SIGTERM, TIMEOUT)
        .await
        .unwrap();
    assert_eq!(signalled.id, info.id);
}

async fn signals_reach_the_whole_group_and_the_exit_says_which(fixture: Fixture) {
    let info = fixture.sh("sleep 1000 & sleep 1000").await;
    let (mut output, _) = fixture.attach(&info.id, 0, false).await;
    let mut connection = fixture.connection().await;
    signal_process(&mut connection, &info.id, libc::SIGTERM, TIMEOUT)
        .await
        .unwrap();
    let (_, exited) = read_to_exit(&mut output).await;
    let exit = exited.exit.unwrap();
    assert_eq!((exit.exit_code, exit.signal), (None, Some(libc::SIGTERM)));
    // The background sleep got it too.
    fixture.wait_until_group_gone(&info.id).await;
    let invalid = signal_process(&mut connection, &info.id, 0, TIMEOUT).await;
    assert!(matches!(invalid, Err(ProtoError::Agent { code, .. }) if code == "bad_request"));
}

async fn the_timeout_kills_the_group(fixture: Fixture) {
    let mut request = sh("sleep 1000 & sleep 1000");
    request.command.timeout_ms = 300;
    let info = fixture.start_process(&request).await.unwrap();
    let (mut output, _) = fixture.attach(&info.id, 0, false).await;
    let (_, exited) = read_to_exit(&mut output).await;
    let exit = exited.exit.unwrap();
    assert!(exit.timed_out);
    assert_eq!(exit.signal, Some(libc::SIGKILL));
    fixture.wait_until_group_gone(&info.id).await;
}

async fn terminal_runs_an_interactive_shell_that_resizes_and_hangs_up(fixture: Fixture) {
    let mut request = sh("");
    request.command.argv = vec!["sh".into()];
    request.command.env.insert("PS1".into(), "$ ".into());
    request.pty = Some(TermSize { cols: 90, rows: 30 });
    let info = fixture.start_process(&request).await.unwrap();
    assert!(info.pty && info.stdin_open);
    let (mut output, mut input) = fixture.attach(&info.id, 0, true).await;
    input.send(b"stty size; tty\n").await.unwrap();
    let seen = read_until(&mut output, "/dev/pts/").await;
    assert!(seen.contains("30 90"), "{seen:?}");

    input
        .resize(TermSize {
            cols: 120,
            rows: 40,
        })
        .await
        .unwrap();
    input.send(b"stty size\n").await.unwrap();
    read_until(&mut output, "40 120").await;
    // Input still gets through while output floods: Ctrl-C stops it. A reader slower than
    // the flood may be told of output that left the ring unsent; the stream goes on, and the
    // marker comes after the flood (the echo of the command line does not contain it).
    input.send(b"yes\n").await.unwrap();
    read_until(&mut output, "y\r\ny\r\ny\r\n").await;
    input.send(b"\x03").await.unwrap();
    input.send(b"echo after-$((20+22))\n").await.unwrap();
    read_until(&mut output, "after-42").await;
    // Resizing through a control connection works as well.
    let resized = resize_process(
        &mut fixture.connection().await,
        &info.id,
        TermSize { cols: 50, rows: 10 },
        TIMEOUT,
    )
    .await
    .unwrap();
    assert_eq!(resized.id, info.id);
    input.send(b"stty size; exit 7\n").await.unwrap();
    let (rest, exited) = read_to_exit(&mut output).await;
    assert!(joined(&rest).contains("10 50"), "{rest:?}");
    assert_eq!(exited.exit.unwrap().exit_code, Some(7));

    // Closing an interactive attachment hangs the shell up.
    let info = fixture.start_process(&request).await.unwrap();
    let (output, input) = fixture.attach(&info.id, 0, true).await;
    drop((output, input));
    let exit = fixture.wait_for_exit(&info.id).await.exit.unwrap();
    assert_eq!(exit.signal, Some(libc::SIGHUP));

    let not_a_terminal = fixture.sh("sleep 5").await;
    let refused = resize_process(
        &mut fixture.connection().await,
        &not_a_terminal.id,
        TermSize { cols: 1, rows: 1 },
        TIMEOUT,
    )
    .await;
    assert!(matches!(refused, Err(ProtoError::Agent { code, .. }) if code == "not_a_terminal"));
}

async fn at_most_64_are_tracked_and_exited_ones_make_room(fixture: Fixture) {
    let first = fixture.sh("exit 0").await;
    let mut running = Vec::new();
    for _ in 0..63 {
        running.push(fixture.sh("sleep 1000").await);
    }
    fixture.wait_for_exit(&first.id).await;
    // The exited one is forgotten for the next.
    let last = fixture.sh("sleep 1000").await;
    let processes = list_processes(&mut fixture.connection().await, TIMEOUT)
        .await
        .unwrap();
    assert_eq!(processes.len(), 64);
    assert!(processes.iter().all(|p| p.id != first.id));
    assert_eq!(processes.last().unwrap().id, last.id);
    let refused = fixture.start_process(&sh("true")).await;
    assert!(matches!(refused, Err(ProtoError::Agent { code, .. }) if code == "too_many_processes"));
    for process in running.iter().chain([&last]) {
        signal_process(&mut fixture.connection().await, &process.id, 9, TIMEOUT)
            .await
            .unwrap();
    }
}

async fn spawn_failures_are_answered(fixture: Fixture) {
    let mut request = sh("");
    request.command.argv = vec!["/no/such/program".into()];
    let failed = fixture.start_process(&request).await;
    assert!(
        matches!(failed, Err(ProtoError::Agent { code, message }) if code == "spawn_failed" && message.contains("/no/such/program"))
    );
    request.command.argv = vec![];
    let empty = fixture.start_process(&request).await;
    assert!(matches!(empty, Err(ProtoError::Agent { code, .. }) if code == "bad_request"));
}

crate::on_both_spawns!(
    Fixture:
    output_streams_live_and_replays_from_any_offset_after_the_exit,
    output_beyond_the_ring_is_reported_dropped,
    a_paced_process_waits_for_its_slow_stream_and_loses_nothing,
    stdin_is_written_then_closed,
    a_process_that_does_not_read_fails_the_write_and_the_connection_stays_in_step,
    signals_reach_the_whole_group_and_the_exit_says_which,
    the_timeout_kills_the_group,
    terminal_runs_an_interactive_shell_that_resizes_and_hangs_up,
    at_most_64_are_tracked_and_exited_ones_make_room,
    spawn_failures_are_answered,
);
