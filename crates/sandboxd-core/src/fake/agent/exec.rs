//! Exec: "runs" a command by the script language of the fake (see the module above).

use super::store::{is_dir, Files};
use super::wire::{read_input, refuse, Input};
use sandboxd_agent_proto::host::{write_frame, write_json};
use sandboxd_agent_proto::{ErrorCode, Event, ExecRequest, ExitReport, FrameKind};
use std::time::Duration;
use tokio::io::DuplexStream;

/// Answers [`Request::Exec`](sandboxd_agent_proto::Request::Exec); a working directory that
/// is not there is refused as the agent refuses it.
pub(super) async fn exec(
    stream: &mut DuplexStream,
    files: &Files,
    exec: ExecRequest,
) -> Option<()> {
    if exec.cwd.as_deref().is_some_and(|cwd| !is_dir(files, cwd)) {
        // As the agent words it: quoting the program and the cwd.
        let message = format!(
            "cannot run {:?} in {:?}: No such file or directory",
            exec.argv[0],
            exec.cwd.unwrap_or_default()
        );
        return refuse(stream, ErrorCode::SpawnFailed, &message).await;
    }
    run(stream, exec).await
}

async fn run(stream: &mut DuplexStream, exec: ExecRequest) -> Option<()> {
    let script = exec.argv.last().cloned().unwrap_or_default();
    let mut report = ExitReport {
        exit_code: Some(0),
        ..ExitReport::default()
    };
    let output = if exec.stdin {
        match read_input(stream).await? {
            Input::Complete(input) => input,
            Input::Cancelled => return None,
        }
    } else if let Some(code) = script.strip_prefix("exit ") {
        report.exit_code = code.trim().parse().ok();
        Vec::new()
    } else if script == "oom" {
        report.oom_killed = true;
        report.exit_code = Some(137);
        b"Killed\n".to_vec()
    } else if let Some(count) = script.strip_prefix("seq ") {
        let count: u64 = count.trim().parse().unwrap_or(0);
        let mut lines = Vec::new();
        for n in 1..=count {
            lines.extend_from_slice(format!("{n}\n").as_bytes());
        }
        lines
    } else if script.starts_with("sleep") {
        tokio::time::sleep(Duration::from_millis(exec.timeout_ms)).await;
        report.exit_code = None;
        report.signal = Some(9);
        report.timed_out = true;
        Vec::new()
    } else {
        let word = script.split_whitespace().last().unwrap_or_default();
        format!("{word}\n").into_bytes()
    };
    report.stdout_bytes = output.len() as u64;
    // As the agent: the head (half the limit), then past the limit what it left out and the
    // tail (the other half).
    let limit = output
        .len()
        .min(usize::try_from(exec.output_limit).unwrap_or(usize::MAX));
    let head = &output[..limit - limit / 2];
    let tail = &output[output.len() - limit / 2..];
    for chunk in head.chunks(1 << 16) {
        write_frame(stream, FrameKind::Stdout, chunk).await.ok()?;
    }
    let omitted = (output.len() - head.len() - tail.len()) as u64;
    if omitted > 0 {
        let event = Event::OutputOmitted {
            stderr: false,
            bytes: omitted,
        };
        write_json(stream, &event).await.ok()?;
    }
    for chunk in tail.chunks(1 << 16) {
        write_frame(stream, FrameKind::Stdout, chunk).await.ok()?;
    }
    write_json(stream, &Event::Exited(report)).await.ok()
}
