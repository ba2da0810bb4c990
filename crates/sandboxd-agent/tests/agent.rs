//! End-to-end tests: the real agent binary, started as a local child process, dials an
//! `AgentHub` in a temporary directory and runs real commands.

use sandboxd_agent_proto::host::{make_wake_fifo, read_frame, wake_agent, write_frame, write_json};
use sandboxd_agent_proto::{
    ping, run_exec, AgentHub, AgentLease, AgentSecret, Event, ExecRequest, ExecResult, FrameKind,
    ProtoError, Request, AGENT_SECRET_FILE, AGENT_SECRET_LEN, AGENT_SPARES, ERROR_BAD_REQUEST,
    ERROR_SPAWN_FAILED, MAX_IDLE,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

const READY_TIMEOUT: Duration = Duration::from_secs(10);
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// What the service adds to a command's timeout for the agent to report.
const REPORT_GRACE: Duration = Duration::from_secs(5);

/// The hub's secret, written beside the socket where the agent reads it at start.
fn secret_beside(socket: &Path) -> AgentSecret {
    let secret = AgentSecret::from_bytes(&[7; AGENT_SECRET_LEN]);
    std::fs::write(socket.with_file_name(AGENT_SECRET_FILE), secret.expose()).unwrap();
    secret
}

/// The agent process; killed when dropped.
struct Agent(Child);

impl Agent {
    fn spawn(socket: &Path) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_sandboxd-agent"))
            .arg("--connect")
            .arg(socket)
            .env("SANDBOXD_AGENT_TOKEN", "must not leak")
            .env("FROM_AGENT", "agent")
            .stdin(Stdio::null())
            .spawn()
            .expect("start the agent");
        Self(child)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Fields drop in order: the agent first, then the hub, then its directory.
struct Fixture {
    _agent: Agent,
    hub: Arc<AgentHub>,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Fixture {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("agent.sock");
        let hub = AgentHub::bind(&socket, secret_beside(&socket)).unwrap();
        make_wake_fifo(&socket).unwrap();
        let agent = Agent::spawn(&socket);
        hub.wait_ready(READY_TIMEOUT)
            .await
            .expect("the agent says hello");
        Self {
            _agent: agent,
            hub,
            socket,
            _dir: dir,
        }
    }

    /// Waits until the agent holds all its spares open, for at most `within`.
    async fn await_spares(&self, within: Duration) {
        let give_up = Instant::now() + within;
        while self.hub.idle_count() < AGENT_SPARES {
            assert!(
                Instant::now() < give_up,
                "only {} spares",
                self.hub.idle_count()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Closes the hub, lets the agent's dial fail and its wait begin, and binds a new hub at
    /// the same path: a service restart, without its word to the agent.
    async fn restart_hub(&mut self) {
        self.hub.close();
        tokio::time::sleep(Duration::from_millis(500)).await;
        self.hub = AgentHub::bind(&self.socket, secret_beside(&self.socket)).unwrap();
    }

    async fn connection(&self) -> AgentLease {
        self.hub
            .acquire(ACQUIRE_TIMEOUT)
            .await
            .expect("an idle connection")
    }

    async fn exec(
        &self,
        request: &ExecRequest,
        stdin: Option<Vec<u8>>,
    ) -> Result<ExecResult, ProtoError> {
        exec_on(&self.hub, request, stdin).await
    }
}

async fn exec_on(
    hub: &AgentHub,
    request: &ExecRequest,
    stdin: Option<Vec<u8>>,
) -> Result<ExecResult, ProtoError> {
    let connection = hub.acquire(ACQUIRE_TIMEOUT).await?;
    let deadline = Duration::from_millis(request.timeout_ms) + REPORT_GRACE;
    run_exec(connection, request, stdin, deadline).await
}

fn request(argv: &[&str]) -> ExecRequest {
    ExecRequest {
        argv: argv.iter().map(|arg| arg.to_string()).collect(),
        timeout_ms: 20_000,
        output_limit: 1 << 20,
        ..ExecRequest::default()
    }
}

fn sh(script: &str) -> ExecRequest {
    request(&["sh", "-c", script])
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

/// Processes of group `pgid` that are still alive (zombies waiting for a reaper are dead).
fn live_group_members(pgid: u32) -> Vec<u32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the parenthesised command name: state, ppid, pgrp.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .collect();
        if fields[2] == pgid.to_string() && fields[0] != "Z" {
            live.push(pid);
        }
    }
    live
}

async fn wait_until_group_dead(pgid: u32) {
    let give_up = Instant::now() + Duration::from_secs(5);
    while !live_group_members(pgid).is_empty() {
        assert!(
            Instant::now() < give_up,
            "group {pgid} still has {:?}",
            live_group_members(pgid)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn kill_group(pgid: u32) {
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(-(pgid as libc::pid_t), libc::SIGKILL) };
}

#[tokio::test]
async fn says_hello_and_answers_pings() {
    let fixture = Fixture::start().await;
    let mut connection = fixture.connection().await;
    ping(&mut connection, Duration::from_secs(2)).await.unwrap();
    ping(&mut connection, Duration::from_secs(2)).await.unwrap();
    // Once it answered, a connection counts as a spare again; closed, it is replaced.
    drop(connection);
    fixture.await_spares(Duration::from_secs(2)).await;
}

#[tokio::test]
async fn with_no_spare_left_in_the_hub_the_agent_dials_one_more_when_asked() {
    let fixture = Fixture::start().await;
    fixture.await_spares(READY_TIMEOUT).await;
    // Connections that answered and are still held, as a request's lease is until it is
    // given back: the agent counts them as spares, so it dials no replacement by itself.
    let mut held = Vec::new();
    while fixture.hub.idle_count() > 0 {
        assert!(
            held.len() < 3 * AGENT_SPARES,
            "the hub keeps getting connections"
        );
        let mut lease = fixture.connection().await;
        ping(&mut lease, Duration::from_secs(2)).await.unwrap();
        held.push(lease);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut more = fixture
        .hub
        .acquire(Duration::from_secs(2))
        .await
        .expect("asked through its wake FIFO, the agent dials one more");
    ping(&mut more, Duration::from_secs(2)).await.unwrap();
}

#[tokio::test]
async fn connections_carry_request_after_request_and_spares_do_not_pile_up() {
    let fixture = Fixture::start().await;
    let echo = |round: usize| request(&["sh", "-c", "echo $0", &round.to_string()]);
    // The agent answers on one connection for as long as it stays open.
    let mut held = fixture.connection().await;
    for round in 0..3 {
        let result = run_exec(&mut held, &echo(round), None, REPORT_GRACE)
            .await
            .unwrap();
        assert_eq!(text(&result.stdout), format!("{round}\n"));
    }
    held.give_back();
    // Given back after each request, connections are reused, and the agent counts them as
    // spares again rather than dialing a new one per request (the hub would then hold its
    // maximum of 8). The agent counts a connection idle only once its answer is out, and the
    // hub hands out the oldest spare, so the next request may find the agent one spare short
    // (two on a loaded machine, when the thread that answered last is still not scheduled)
    // and have one more dialed; the hub closes such extras when they are given back.
    for round in 0..40 {
        let mut connection = fixture.connection().await;
        let result = run_exec(&mut connection, &echo(round), None, REPORT_GRACE)
            .await
            .unwrap();
        assert_eq!(text(&result.stdout), format!("{round}\n"));
        connection.give_back();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        fixture.hub.idle_count() < MAX_IDLE,
        "{} parked: as many as the hub keeps",
        fixture.hub.idle_count()
    );
}

#[tokio::test]
async fn runs_echo() {
    let fixture = Fixture::start().await;
    let result = fixture.exec(&request(&["echo", "hi"]), None).await.unwrap();
    assert_eq!(text(&result.stdout), "hi\n");
    assert!(result.stderr.is_empty());
    assert_eq!(result.report.exit_code, Some(0));
    assert_eq!(result.report.signal, None);
    assert!(!result.report.timed_out && !result.report.oom_killed);
    assert_eq!(
        (result.report.stdout_bytes, result.report.stderr_bytes),
        (3, 0)
    );
    assert!(!result.stdout_truncated && !result.stderr_truncated);
}

#[tokio::test]
async fn keeps_stderr_apart_and_reports_exit_codes() {
    let fixture = Fixture::start().await;
    let result = fixture
        .exec(&sh("echo out; echo err >&2; exit 3"), None)
        .await
        .unwrap();
    assert_eq!(text(&result.stdout), "out\n");
    assert_eq!(text(&result.stderr), "err\n");
    assert_eq!(result.report.exit_code, Some(3));
    assert_eq!(result.report.stderr_bytes, 4);
}

#[tokio::test]
async fn environment_and_working_directory() {
    let fixture = Fixture::start().await;
    let mut env_request = sh(r#"echo "[$SANDBOXD_AGENT_TOKEN|$FROM_AGENT|$FROM_REQUEST]""#);
    env_request.env = BTreeMap::from([("FROM_REQUEST".into(), "request".into())]);
    let result = fixture.exec(&env_request, None).await.unwrap();
    assert_eq!(text(&result.stdout), "[|agent|request]\n");

    let mut cwd_request = request(&["pwd"]);
    cwd_request.cwd = Some("/tmp".into());
    let result = fixture.exec(&cwd_request, None).await.unwrap();
    assert_eq!(text(&result.stdout), "/tmp\n");
}

#[tokio::test]
async fn stdin_round_trip() {
    let fixture = Fixture::start().await;
    let input: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let result = fixture
        .exec(&request(&["cat"]), Some(input.clone()))
        .await
        .unwrap();
    assert_eq!(result.stdout, input);
    assert_eq!(result.report.exit_code, Some(0));

    // Empty input is an immediate end of input.
    let result = fixture
        .exec(&request(&["cat"]), Some(Vec::new()))
        .await
        .unwrap();
    assert!(result.stdout.is_empty());
}

#[tokio::test]
async fn writing_before_reading_stdin_does_not_deadlock() {
    let fixture = Fixture::start().await;
    // 2 MB of output fill every pipe and socket buffer before the input is read at all.
    let script = sh("head -c 2000000 /dev/zero >&2; wc -c");
    let result = fixture
        .exec(&script, Some(vec![b'x'; 500_000]))
        .await
        .unwrap();
    assert_eq!(result.report.stderr_bytes, 2_000_000);
    assert_eq!(text(&result.stdout).trim(), "500000");
}

#[tokio::test]
async fn process_that_ignores_stdin_still_finishes() {
    let fixture = Fixture::start().await;
    let result = fixture
        .exec(&request(&["true"]), Some(vec![0; 2_000_000]))
        .await
        .unwrap();
    assert_eq!(result.report.exit_code, Some(0));
}

#[tokio::test]
async fn output_over_the_limit_keeps_head_and_tail_with_true_totals() {
    let fixture = Fixture::start().await;
    let mut big = sh("echo first; head -c 3000000 /dev/zero; echo the-end; echo small >&2");
    big.output_limit = 1000;
    let result = fixture.exec(&big, None).await.unwrap();
    assert_eq!(
        result.stdout.len(),
        1000,
        "the line saying what was left out fits the limit"
    );
    assert!(result.stdout_truncated);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(stdout.starts_with("first\n"), "{stdout}");
    assert!(
        stdout.ends_with("\0\0the-end\n"),
        "the real end is kept: {stdout:?}"
    );
    let left_out: u64 = stdout
        .split("[... ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a line says how much was left out");
    // What is shown and what was left out add up to what the command wrote.
    let shown = 1000
        - stdout
            .lines()
            .find(|l| l.starts_with("[... "))
            .unwrap()
            .len()
        - 2;
    assert_eq!(left_out + shown as u64, 3_000_014);
    assert_eq!(result.report.stdout_bytes, 3_000_014);
    assert_eq!(text(&result.stderr), "small\n");
    assert!(!result.stderr_truncated);
    assert_eq!(result.report.exit_code, Some(0));
}

#[tokio::test]
async fn output_still_in_the_pipe_after_the_grace_is_forwarded_and_counted() {
    let fixture = Fixture::start().await;
    let mut connection = fixture.connection().await;
    // The process fills a pipe of 1 MiB and exits at once. Read slower than the agent's grace
    // after the exit, most of it is still in the pipe when the grace has passed (as on a
    // loaded host, where the agent is not scheduled in time), and it must still come.
    let script = "import fcntl, sys; F_SETPIPE_SZ = 1031; fcntl.fcntl(1, F_SETPIPE_SZ, 1 << 20); \
                  sys.stdout.buffer.write(bytes(900000) + b'the-end')";
    let total = 900_000 + "the-end".len();
    write_json(
        &mut connection,
        &Request::Exec(request(&["python3", "-c", script])),
    )
    .await
    .unwrap();
    let mut stdout = Vec::new();
    let report = loop {
        let frame = read_frame(&mut connection).await.unwrap();
        match frame.kind {
            FrameKind::Stdout => {
                stdout.extend_from_slice(&frame.payload);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            FrameKind::Json => match frame.parse_json::<Event>().unwrap() {
                Event::Exited(report) => break report,
                other => panic!("unexpected {other:?}"),
            },
            other => panic!("unexpected {other:?} frame"),
        }
    };
    assert_eq!(report.exit_code, Some(0));
    assert_eq!(report.stdout_bytes, total as u64, "the true total");
    assert_eq!(stdout.len(), total, "every byte forwarded");
    assert!(stdout.ends_with(b"\0the-end"));
}

#[tokio::test]
async fn output_streams_while_the_process_runs() {
    let fixture = Fixture::start().await;
    let mut connection = fixture.connection().await;
    let started = Instant::now();
    write_json(
        &mut connection,
        &Request::Exec(sh("echo a; sleep 2; echo b")),
    )
    .await
    .unwrap();
    let mut events = Vec::new();
    loop {
        let frame = read_frame(&mut connection).await.unwrap();
        match frame.kind {
            FrameKind::Stdout => events.push((text(&frame.payload).to_string(), started.elapsed())),
            FrameKind::Json => match frame.parse_json::<Event>().unwrap() {
                Event::Exited(report) => {
                    assert_eq!(report.exit_code, Some(0));
                    break;
                }
                other => panic!("unexpected {other:?}"),
            },
            other => panic!("unexpected {other:?} frame"),
        }
    }
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!((events[0].0.as_str(), events[1].0.as_str()), ("a\n", "b\n"));
    assert!(
        events[0].1 < Duration::from_millis(1500),
        "first chunk came after {:?}",
        events[0].1
    );
    assert!(events[1].1 >= Duration::from_secs(2));
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let fixture = Fixture::start().await;
    let mut sleeper = sh("echo $$; sleep 1000 & sleep 1000");
    sleeper.timeout_ms = 500;
    let started = Instant::now();
    let result = fixture.exec(&sleeper, None).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(result.report.timed_out);
    assert_eq!(result.report.signal, Some(libc::SIGKILL));
    assert_eq!(result.report.exit_code, None);
    assert!(!result.report.oom_killed);
    let pgid: u32 = text(&result.stdout).trim().parse().unwrap();
    wait_until_group_dead(pgid).await;
}

#[tokio::test]
async fn background_children_holding_the_pipes_do_not_delay_the_exit() {
    let fixture = Fixture::start().await;
    let started = Instant::now();
    let result = fixture
        .exec(&sh("echo $$; sleep 30 & echo done"), None)
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let lines: Vec<&str> = text(&result.stdout).lines().collect();
    let pgid: u32 = lines[0].parse().unwrap();
    kill_group(pgid);
    assert_eq!(lines[1], "done");
    assert_eq!(result.report.exit_code, Some(0));
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    wait_until_group_dead(pgid).await;
}

#[tokio::test]
async fn a_script_without_an_interpreter_line_runs_as_execvp_runs_it() {
    use std::os::unix::fs::PermissionsExt;
    let fixture = Fixture::start().await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("plain-script");
    std::fs::write(&script, "echo from-script\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // By its path (posix_spawn refuses it, the shell runs it), and by its name through a
    // PATH the request sets.
    let by_path = request(&[script.to_str().unwrap()]);
    let result = fixture.exec(&by_path, None).await.unwrap();
    assert_eq!(text(&result.stdout), "from-script\n");
    let mut by_name = request(&["plain-script"]);
    let path = format!("{}:/usr/bin:/bin", dir.path().display());
    by_name.env = BTreeMap::from([("PATH".into(), path)]);
    let result = fixture.exec(&by_name, None).await.unwrap();
    assert_eq!(text(&result.stdout), "from-script\n");
}

#[tokio::test]
async fn spawn_failures_are_errors_not_crashes() {
    let fixture = Fixture::start().await;
    for argv in [
        &["/nonexistent/program"][..],
        &["no-such-program-anywhere", "x"],
    ] {
        match fixture.exec(&request(argv), None).await {
            Err(ProtoError::Agent { code, message }) => {
                assert_eq!(code, ERROR_SPAWN_FAILED);
                assert!(message.contains(argv[0]), "{message}");
                assert!(message.contains("No such file"), "{message}");
            }
            other => panic!("expected a spawn failure, got {other:?}"),
        }
    }
    let mut bad_cwd = request(&["true"]);
    bad_cwd.cwd = Some("/nonexistent-dir".into());
    assert!(matches!(
        fixture.exec(&bad_cwd, None).await,
        Err(ProtoError::Agent { code, .. }) if code == ERROR_SPAWN_FAILED
    ));
    assert!(matches!(
        fixture.exec(&request(&[]), None).await,
        Err(ProtoError::Agent { code, .. }) if code == ERROR_BAD_REQUEST
    ));
    // The agent is still fine.
    let result = fixture.exec(&request(&["echo", "ok"]), None).await.unwrap();
    assert_eq!(text(&result.stdout), "ok\n");
}

#[tokio::test]
async fn unknown_ops_are_refused_and_the_connection_stays_usable() {
    let fixture = Fixture::start().await;
    let mut connection = fixture.connection().await;
    let future_op = br#"{"op":"read_file","path":"/etc/hostname"}"#;
    write_frame(&mut connection, FrameKind::Json, future_op)
        .await
        .unwrap();
    match read_frame(&mut connection)
        .await
        .unwrap()
        .parse_json::<Event>()
        .unwrap()
    {
        Event::Error { code, .. } => assert_eq!(code, ERROR_BAD_REQUEST),
        other => panic!("unexpected {other:?}"),
    }
    ping(&mut connection, Duration::from_secs(2)).await.unwrap();
}

#[tokio::test]
async fn a_lost_service_connection_kills_the_process() {
    let fixture = Fixture::start().await;
    let mut connection = fixture.connection().await;
    write_json(&mut connection, &Request::Exec(sh("echo $$; sleep 1000")))
        .await
        .unwrap();
    let pgid = loop {
        let frame = read_frame(&mut connection).await.unwrap();
        if frame.kind == FrameKind::Stdout {
            break text(&frame.payload).trim().parse::<u32>().unwrap();
        }
    };
    assert!(!live_group_members(pgid).is_empty());
    drop(connection);
    wait_until_group_dead(pgid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_execs() {
    let fixture = Fixture::start().await;
    let mut execs = JoinSet::new();
    for i in 0..20 {
        let hub = fixture.hub.clone();
        execs.spawn(async move {
            let result = exec_on(&hub, &sh(&format!("sleep 0.3; echo {i}")), None).await;
            (i, result)
        });
    }
    let started = Instant::now();
    while let Some(joined) = execs.join_next().await {
        let (i, result) = joined.unwrap();
        let result = result.unwrap_or_else(|e| panic!("exec {i}: {e}"));
        assert_eq!(text(&result.stdout), format!("{i}\n"));
    }
    // They ran side by side, not one after another (20 x 0.3 s).
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
}

/// Within this long of the service's word the agent is back: well before its fallback, the
/// earliest it dials again without the word (6 s after its dial failed).
const WOKEN_WITHIN: Duration = Duration::from_secs(4);

#[tokio::test]
async fn agent_reconnects_when_the_service_comes_back() {
    let mut fixture = Fixture::start().await;
    fixture.restart_hub().await;
    wake_agent(&fixture.socket);
    fixture
        .hub
        .wait_ready(WOKEN_WITHIN)
        .await
        .expect("the agent dials the new hub at the word");
    // One connection first: thousands of agents come back at once.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(fixture.hub.idle_count(), 1, "one connection at first");
    let result = fixture
        .exec(&request(&["echo", "back"]), None)
        .await
        .unwrap();
    assert_eq!(text(&result.stdout), "back\n");
    // The other spares follow within 1.5 + 3 s.
    fixture.await_spares(Duration::from_secs(6)).await;
}

/// The agent's threads named "connection", by id, once there is one per spare: the hub counts
/// a connection at its hello, which the agent writes before the thread serving it runs.
async fn connection_threads(agent: &Agent) -> std::collections::BTreeSet<u32> {
    let give_up = Instant::now() + READY_TIMEOUT;
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", agent.0.id())).unwrap();
        let threads: std::collections::BTreeSet<u32> = tasks
            .map(|task| task.unwrap().path())
            .filter(|task| {
                std::fs::read_to_string(task.join("comm"))
                    .is_ok_and(|c| c.trim_end() == "connection")
            })
            .map(|task| task.file_name().unwrap().to_str().unwrap().parse().unwrap())
            .collect();
        if threads.len() >= AGENT_SPARES || Instant::now() > give_up {
            return threads;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn connections_after_the_service_came_back_are_served_by_the_same_threads() {
    let mut fixture = Fixture::start().await;
    fixture.await_spares(READY_TIMEOUT).await;
    let before = connection_threads(&fixture._agent).await;
    assert_eq!(before.len(), AGENT_SPARES, "a thread per spare: {before:?}");
    fixture.restart_hub().await;
    wake_agent(&fixture.socket);
    fixture.await_spares(Duration::from_secs(10)).await;
    // Thousands of agents losing the service at once: their threads exiting and being made
    // again cost the host seconds of CPU, so they wait for the next connections instead.
    // (A dial that wins the race with a thread seeing its connection close gets a new one.)
    let after = connection_threads(&fixture._agent).await;
    assert!(after.is_superset(&before), "{before:?} then {after:?}");
    let result = fixture.exec(&request(&["echo", "back"]), None).await;
    assert_eq!(text(&result.unwrap().stdout), "back\n");
}

#[tokio::test]
async fn without_the_word_the_agent_comes_back_at_its_fallback() {
    let mut fixture = Fixture::start().await;
    fixture.restart_hub().await;
    // Nobody wakes it: the word was lost (a sandbox process may read the FIFO too).
    assert!(
        fixture.hub.wait_ready(WOKEN_WITHIN).await.is_err(),
        "without the word it waits"
    );
    fixture
        .hub
        .wait_ready(Duration::from_secs(15))
        .await
        .expect("the agent dials again at its fallback");
    let result = fixture.exec(&request(&["echo", "back"]), None).await;
    assert_eq!(text(&result.unwrap().stdout), "back\n");
}

#[tokio::test]
async fn exec_latency_through_the_hub() {
    let fixture = Fixture::start().await;
    let rounds = 50;
    let started = Instant::now();
    for _ in 0..rounds {
        let result = fixture.exec(&request(&["true"]), None).await.unwrap();
        assert_eq!(result.report.exit_code, Some(0));
    }
    let per_exec = started.elapsed() / rounds;
    eprintln!("exec of `true` through the hub: {per_exec:?} on average over {rounds}");
    assert!(
        per_exec < Duration::from_millis(200),
        "{per_exec:?} per exec"
    );
}
