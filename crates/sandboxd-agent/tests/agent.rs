//! End-to-end tests: the real agent binary, started as a local child process, dials an
//! `AgentHub` in a temporary directory and runs real commands.

mod common;

use common::*;
use sandboxd_agent_proto::host::{read_frame, write_frame, write_json};
use sandboxd_agent_proto::{
    ping, Event, FrameKind, ProtoError, Request, ERROR_BAD_REQUEST, ERROR_SPAWN_FAILED,
};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

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

async fn runs_echo(fixture: Fixture) {
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

async fn keeps_stderr_apart_and_reports_exit_codes(fixture: Fixture) {
    let result = fixture
        .exec(&sh("echo out; echo err >&2; exit 3"), None)
        .await
        .unwrap();
    assert_eq!(text(&result.stdout), "out\n");
    assert_eq!(text(&result.stderr), "err\n");
    assert_eq!(result.report.exit_code, Some(3));
    assert_eq!(result.report.stderr_bytes, 4);
}

async fn environment_and_working_directory(fixture: Fixture) {
    let mut env_request = sh(r#"echo "[$SANDBOXD_AGENT_TOKEN|$FROM_AGENT|$FROM_REQUEST]""#);
    env_request.env = BTreeMap::from([("FROM_REQUEST".into(), "request".into())]);
    let result = fixture.exec(&env_request, None).await.unwrap();
    assert_eq!(text(&result.stdout), "[|agent|request]\n");

    let mut cwd_request = request(&["pwd"]);
    cwd_request.cwd = Some("/tmp".into());
    let result = fixture.exec(&cwd_request, None).await.unwrap();
    assert_eq!(text(&result.stdout), "/tmp\n");
}

async fn stdin_round_trip(fixture: Fixture) {
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

async fn writing_before_reading_stdin_does_not_deadlock(fixture: Fixture) {
    // 2 MB of output fill every pipe and socket buffer before the input is read at all.
    let script = sh("head -c 2000000 /dev/zero >&2; wc -c");
    let result = fixture
        .exec(&script, Some(vec![b'x'; 500_000]))
        .await
        .unwrap();
    assert_eq!(result.report.stderr_bytes, 2_000_000);
    assert_eq!(text(&result.stdout).trim(), "500000");
}

async fn process_that_ignores_stdin_still_finishes(fixture: Fixture) {
    let result = fixture
        .exec(&request(&["true"]), Some(vec![0; 2_000_000]))
        .await
        .unwrap();
    assert_eq!(result.report.exit_code, Some(0));
}

async fn output_over_the_limit_keeps_head_and_tail_with_true_totals(fixture: Fixture) {
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

async fn output_still_in_the_pipe_after_the_grace_is_forwarded_and_counted(fixture: Fixture) {
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

/// The second line is printed only once the test has seen the first (the command waits for a
/// file the test makes then): output held back until the process ends never arrives.
async fn output_streams_while_the_process_runs(fixture: Fixture) {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    let mut connection = fixture.connection().await;
    let script = format!(
        "echo a; n=0; while [ ! -e {seen} ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done; echo b",
        seen = seen.display()
    );
    write_json(&mut connection, &Request::Exec(sh(&script)))
        .await
        .unwrap();
    let mut lines = Vec::new();
    loop {
        let frame = read_frame(&mut connection).await.unwrap();
        match frame.kind {
            FrameKind::Stdout => {
                lines.push(text(&frame.payload).to_string());
                std::fs::write(&seen, b"").unwrap();
            }
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
    assert_eq!(lines, ["a\n", "b\n"]);
}

async fn timeout_kills_the_whole_process_group(fixture: Fixture) {
    let mut sleeper = sh("echo $$; sleep 1000 & sleep 1000");
    sleeper.timeout_ms = 500;
    let started = Instant::now();
    let result = fixture.exec(&sleeper, None).await.unwrap();
    // Killed at its timeout, long before its sleeps would end.
    assert!(
        started.elapsed() < Duration::from_secs(60),
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

async fn background_children_holding_the_pipes_do_not_delay_the_exit(fixture: Fixture) {
    let started = Instant::now();
    let result = fixture
        .exec(&sh("echo $$; sleep 300 & echo done"), None)
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let lines: Vec<&str> = text(&result.stdout).lines().collect();
    let pgid: u32 = lines[0].parse().unwrap();
    kill_group(pgid);
    assert_eq!(lines[1], "done");
    assert_eq!(result.report.exit_code, Some(0));
    // Answered when the shell exits, not when its background child's 300 s sleep would end.
    assert!(elapsed < Duration::from_secs(120), "took {elapsed:?}");
    wait_until_group_dead(pgid).await;
}

async fn a_script_without_an_interpreter_line_runs_as_execvp_runs_it(fixture: Fixture) {
    use std::os::unix::fs::PermissionsExt;
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

async fn spawn_failures_are_errors_not_crashes(fixture: Fixture) {
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

async fn unknown_ops_are_refused_and_the_connection_stays_usable(fixture: Fixture) {
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

async fn a_lost_service_connection_kills_the_process(fixture: Fixture) {
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

/// Twenty execs each wait until all twenty have started (a file each in a shared directory):
/// run one after another, the first would never finish.
async fn twenty_concurrent_execs(fixture: Fixture) {
    let dir = tempfile::tempdir().unwrap();
    let mut execs = JoinSet::new();
    for i in 0..20 {
        let hub = fixture.hub.clone();
        let script = format!(
            "touch {dir}/{i}; n=0; while [ $(ls {dir} | wc -l) -lt 20 ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done; echo {i} $(ls {dir} | wc -l)",
            dir = dir.path().display()
        );
        execs.spawn(async move {
            let result = exec_on(&hub, &sh(&script), None).await;
            (i, result)
        });
    }
    while let Some(joined) = execs.join_next().await {
        let (i, result) = joined.unwrap();
        let result = result.unwrap_or_else(|e| panic!("exec {i}: {e}"));
        assert_eq!(text(&result.stdout), format!("{i} 20\n"));
    }
}

async fn exec_latency_through_the_hub(fixture: Fixture) {
    let rounds = 50;
    let started = Instant::now();
    for _ in 0..rounds {
        let result = fixture.exec(&request(&["true"]), None).await.unwrap();
        assert_eq!(result.report.exit_code, Some(0));
    }
    // A figure for people; its speed is the benchmark's to check.
    let per_exec = started.elapsed() / rounds;
    eprintln!("exec of `true` through the hub: {per_exec:?} on average over {rounds}");
}

crate::on_both_spawns!(
    Fixture:
    a_script_without_an_interpreter_line_runs_as_execvp_runs_it,
    twenty_concurrent_execs,
    runs_echo,
    keeps_stderr_apart_and_reports_exit_codes,
    environment_and_working_directory,
    stdin_round_trip,
    writing_before_reading_stdin_does_not_deadlock,
    process_that_ignores_stdin_still_finishes,
    output_over_the_limit_keeps_head_and_tail_with_true_totals,
    output_still_in_the_pipe_after_the_grace_is_forwarded_and_counted,
    output_streams_while_the_process_runs,
    timeout_kills_the_whole_process_group,
    background_children_holding_the_pipes_do_not_delay_the_exit,
    spawn_failures_are_errors_not_crashes,
    unknown_ops_are_refused_and_the_connection_stays_usable,
    a_lost_service_connection_kills_the_process,
    exec_latency_through_the_hub,
);
