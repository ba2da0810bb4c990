//! A session's background processes (its interactive terminal is `terminal.rs`).
//!
//! The sandbox's agent keeps the processes (their output in a ring buffer, their exit status
//! after they end), so they outlive the request that started them and any client watching
//! them. Each operation takes one agent connection: a short exchange for control operations,
//! or an attachment whose output is pulled from the agent only as fast as its reader takes it,
//! so a slow reader costs no memory here.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::ops::exec::{self, Command};
use crate::state::activity::{error_text, program_name, Caller, CommandEnding, PendingEntry};
use crate::state::sessions::{rfc3339, Session};
use sandboxd_agent_proto::host::{
    attach_process, kill_all_processes, list_processes, resize_process, signal_process,
    start_process, write_process_stdin, OutputEvent, ProcessOutput,
};
use sandboxd_agent_proto::{self as proto, FrameKind, TermSize};
use sandboxd_api::Remedy;
use sandboxd_api::{
    InputWritten, KilledProcesses, Policy, ProcessInfo, ProcessList, ProcessState, SignalSpec,
    StartProcess, TerminalSize,
};
use sandboxd_backend::AgentStream;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::io::ReadHalf;

/// The longest wait for the agent's answer to a control operation, or to an attach.
pub(crate) const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);
/// Killing everything may take the agent many rounds against a fork bomb.
const KILL_ALL_TIMEOUT: Duration = Duration::from_secs(20);
/// A stdin write also gets this long per MiB: the process has to read it.
const STDIN_TIME_PER_MIB: Duration = Duration::from_secs(1);

/// How long writing `len` bytes to a process's stdin may take, beyond the control timeout.
fn stdin_time(len: usize) -> Duration {
    STDIN_TIME_PER_MIB.saturating_mul(u32::try_from(len >> 20).unwrap_or(u32::MAX))
}
const DEFAULT_TERMINAL_SIZE: TermSize = TermSize { cols: 80, rows: 24 };
const MAX_TERMINAL_DIMENSION: u16 = 1000;
/// What a terminal's programs are told they talk to, unless the request says otherwise.
const TERMINAL_TYPE: &str = "xterm-256color";

/// Signal names a request may use, with or without `SIG`, as numbered on Linux.
const SIGNALS: [(&str, i32); 12] = [
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("KILL", 9),
    ("USR1", 10),
    ("USR2", 12),
    ("ALRM", 14),
    ("TERM", 15),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("WINCH", 28),
];

impl Core {
    /// Starts a background process.
    pub async fn start_process(
        &self,
        caller: &Caller,
        session_id: &str,
        request: StartProcess,
    ) -> Result<ProcessInfo, Error> {
        let session = self.running_session(caller, session_id, "process_start")?;
        let input = request.input.clone();
        let request = StartProcess {
            env: exec::with_session_env(&session.env, request.env),
            ..request
        };
        let planned = plan(request, &self.config().policy)?;
        let mut entry = self.entry(caller, &session, "process_start", &planned.program);
        let started = self.start_with_input(&session, &planned, input).await;
        Ok(api_info(entry.finish(started)?))
    }

    /// Starts a process and follows its output from its start, as one operation with one
    /// activity entry (`process_start`), recorded when it exits with how it ended, or when the
    /// follower leaves (the process goes on, and can be followed again with [`Core::attach`]).
    pub async fn run_process(
        &self,
        caller: &Caller,
        session_id: &str,
        request: StartProcess,
    ) -> Result<(ProcessInfo, Attachment), Error> {
        let session = self.running_session(caller, session_id, "process_start")?;
        let request = StartProcess {
            env: exec::with_session_env(&session.env, request.env),
            ..request
        };
        let input = request.input.clone();
        let planned = plan(request, &self.config().policy)?;
        let mut entry = self.entry(caller, &session, "process_start", &planned.program);
        let attached = async {
            let info = self.start_with_input(&session, &planned, input).await?;
            let agent = self.connect(&session).await?;
            let (output, _) = attach_process(agent, &info.id, 0, false, CONTROL_TIMEOUT)
                .await
                .map_err(process_error)?;
            Ok((info, output))
        };
        let (info, output) = attached.await.map_err(|e| entry.fail(e))?;
        entry.bytes = Some(0);
        let attachment = Attachment {
            output,
            entry,
            done: false,
        };
        Ok((api_info(info), attachment))
    }

    /// Starts a planned process, and gives it its `input` (then closes its stdin) if any.
    async fn start_with_input(
        &self,
        session: &Session,
        planned: &proto::ProcessStartRequest,
        input: Option<String>,
    ) -> Result<proto::ProcessInfo, Error> {
        let mut agent = self.connect(session).await?;
        let info = start_process(&mut agent, planned, CONTROL_TIMEOUT)
            .await
            .map_err(process_error)?;
        if let Some(input) = input {
            let mut agent = self.connect(session).await?;
            let timeout = CONTROL_TIMEOUT + stdin_time(input.len());
            write_process_stdin(&mut agent, &info.id, input.as_bytes(), true, timeout)
                .await
                .map_err(process_error)?;
        }
        Ok(info)
    }

    /// The session's background processes, running and exited, oldest first.
    pub async fn list_processes(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> Result<ProcessList, Error> {
        let session = self.running_session(caller, session_id, "list_processes")?;
        self.sessions().touch(session_id);
        Ok(ProcessList {
            processes: self
                .agent_processes(&session)
                .await?
                .into_iter()
                .map(api_info)
                .collect(),
        })
    }

    /// One background process.
    pub async fn process(
        &self,
        caller: &Caller,
        session_id: &str,
        process_id: &str,
    ) -> Result<ProcessInfo, Error> {
        let session = self.running_session(caller, session_id, "get_process")?;
        self.sessions().touch(session_id);
        Ok(api_info(self.find(&session, process_id).await?))
    }

    /// SIGKILLs every process in the sandbox but its agent and init.
    pub async fn kill_all_processes(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> Result<KilledProcesses, Error> {
        let session = self.running_session(caller, session_id, "process_kill_all")?;
        let mut entry = self.entry(caller, &session, "process_kill_all", "every process");
        let killed = async {
            let mut agent = self.connect(&session).await?;
            kill_all_processes(&mut agent, KILL_ALL_TIMEOUT)
                .await
                .map_err(process_error)
        };
        let (killed, remaining) = entry.finish(killed.await)?;
        Ok(KilledProcesses { killed, remaining })
    }

    /// Sends a signal to a process's whole process group.
    pub async fn signal_process(
        &self,
        caller: &Caller,
        session_id: &str,
        process_id: &str,
        signal: &SignalSpec,
    ) -> Result<ProcessInfo, Error> {
        let number = signal_number(signal)?;
        let session = self.running_session(caller, session_id, "process_signal")?;
        let mut entry = self.entry(caller, &session, "process_signal", process_id);
        let signalled = async {
            let mut agent = self.connect(&session).await?;
            signal_process(&mut agent, process_id, number, CONTROL_TIMEOUT)
                .await
                .map_err(process_error)
        };
        finish_naming(&mut entry, signalled.await).map(api_info)
    }

    /// Resizes a process's terminal.
    pub async fn resize_process(
        &self,
        caller: &Caller,
        session_id: &str,
        process_id: &str,
        size: TerminalSize,
    ) -> Result<ProcessInfo, Error> {
        let size = terminal_size(Some(size.cols), Some(size.rows))?;
        let session = self.running_session(caller, session_id, "process_resize")?;
        let mut entry = self.entry(caller, &session, "process_resize", process_id);
        let resized = async {
            let mut agent = self.connect(&session).await?;
            resize_process(&mut agent, process_id, size, CONTROL_TIMEOUT)
                .await
                .map_err(process_error)
        };
        finish_naming(&mut entry, resized.await).map(api_info)
    }

    /// Writes `data` to a process's stdin, and closes it after with `close`.
    pub async fn write_stdin(
        &self,
        caller: &Caller,
        session_id: &str,
        process_id: &str,
        data: &[u8],
        close: bool,
    ) -> Result<InputWritten, Error> {
        let action = if data.is_empty() && close {
            "process_stdin_close"
        } else {
            "process_stdin"
        };
        let session = self.running_session(caller, session_id, action)?;
        let mut entry = self.entry(caller, &session, action, process_id);
        let written = async {
            // Named by its program in the log, and refused early if it does not exist.
            let target = self.find(&session, process_id).await?;
            entry.target = activity_target(&target);
            let mut agent = self.connect(&session).await?;
            let timeout = CONTROL_TIMEOUT + stdin_time(data.len());
            write_process_stdin(&mut agent, process_id, data, close, timeout)
                .await
                .map_err(process_error)
        };
        let written = written.await;
        if written.is_ok() {
            entry.bytes = Some(data.len() as u64);
        }
        let bytes = entry.finish(written)?;
        Ok(InputWritten {
            bytes,
            closed: close,
        })
    }

    /// Follows a process's output from offset `since`: replayed from what the agent still
    /// holds, then live, until it exits.
    pub async fn attach(
        &self,
        caller: &Caller,
        session_id: &str,
        process_id: &str,
        since: u64,
    ) -> Result<Attachment, Error> {
        let session = self.running_session(caller, session_id, "process_stream")?;
        let mut entry = self.entry(caller, &session, "process_stream", process_id);
        let attached = async {
            let target = self.find(&session, process_id).await?;
            entry.target = activity_target(&target);
            let agent = self.connect(&session).await?;
            let (output, _) = attach_process(agent, process_id, since, false, CONTROL_TIMEOUT)
                .await
                .map_err(process_error)?;
            Ok(output)
        };
        let output = attached.await.map_err(|e| entry.fail(e))?;
        entry.bytes = Some(0);
        Ok(Attachment {
            output,
            entry,
            done: false,
        })
    }

    async fn agent_processes(&self, session: &Session) -> Result<Vec<proto::ProcessInfo>, Error> {
        let mut agent = self.connect(session).await?;
        list_processes(&mut agent, CONTROL_TIMEOUT)
            .await
            .map_err(process_error)
    }

    /// The process, as the agent lists it.
    async fn find(&self, session: &Session, process_id: &str) -> Result<proto::ProcessInfo, Error> {
        let session_id = &session.id;
        self.agent_processes(session)
            .await?
            .into_iter()
            .find(|p| p.id == process_id)
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "no process \"{process_id}\" in session {session_id}"
                ))
                .with_remedy(Remedy::ListProcesses)
            })
    }
}

/// What an attachment delivers, one agent frame at a time.
#[derive(Debug)]
pub enum StreamEvent {
    Output {
        stderr: bool,
        /// Where `data` starts in the process's output.
        offset: u64,
        data: Vec<u8>,
    },
    /// Output that left the agent's buffer before it was read.
    Dropped { offset: u64, bytes: u64 },
    /// The process ended; the last event.
    Exited(ProcessInfo),
}

/// A process's output being followed. Its activity entry counts the bytes and is recorded
/// when the process exits, the exchange fails, or the attachment is dropped.
pub struct Attachment {
    output: ProcessOutput<ReadHalf<AgentStream>>,
    entry: PendingEntry,
    done: bool,
}

impl Attachment {
    /// The next event, or `None` after the last one.
    pub async fn next(&mut self) -> Option<Result<StreamEvent, Error>> {
        if self.done {
            return None;
        }
        let event = self.output.next().await;
        self.entry.touch();
        Some(match event {
            Ok(OutputEvent::Output { kind, offset, data }) => {
                self.entry.bytes = Some(self.entry.bytes.unwrap_or(0) + data.len() as u64);
                Ok(StreamEvent::Output {
                    stderr: kind == FrameKind::Stderr,
                    offset,
                    data,
                })
            }
            Ok(OutputEvent::Dropped { offset, bytes }) => {
                Ok(StreamEvent::Dropped { offset, bytes })
            }
            Ok(OutputEvent::Exited(info)) => {
                self.done = true;
                self.entry.target = activity_target(&info);
                let info = api_info(info);
                self.entry.end_command(&CommandEnding {
                    exit_code: info.exit_code,
                    signal: info.signal,
                    timed_out: info.timed_out,
                    oom_killed: info.oom_killed,
                });
                Ok(StreamEvent::Exited(info))
            }
            Err(e) => {
                self.done = true;
                let error = process_error(e);
                self.entry.end(Some(error_text(&error)));
                Err(error)
            }
        })
    }
}

pub(crate) fn process_error(error: proto::ProtoError) -> Error {
    agent_error(Operation::Process, error)
}

/// Checks a start request against the policy and turns it into the agent's form. The
/// command is checked as an exec's, and its timeout follows the same rule: one naming none
/// gets `policy.default_timeout_secs`.
pub(crate) fn plan(
    request: StartProcess,
    policy: &Policy,
) -> Result<proto::ProcessStartRequest, Error> {
    let pty = match (request.pty, request.cols, request.rows) {
        (true, cols, rows) => Some(terminal_size(cols, rows)?),
        (false, None, None) => None,
        (false, _, _) => {
            return Err(Error::bad_request(
                "invalid_request",
                "`cols` and `rows` are for a terminal; add \"pty\": true",
            ))
        }
    };
    let mut command = exec::plan(
        Command {
            command: request.command,
            argv: request.argv,
            cwd: request.cwd,
            env: request.env,
            timeout_secs: request.timeout_secs.unwrap_or(policy.default_timeout_secs),
        },
        policy,
    )?;
    command.stdin = request.stdin || request.input.is_some() || pty.is_some();
    if pty.is_some() {
        command
            .env
            .entry("TERM".into())
            .or_insert_with(|| TERMINAL_TYPE.into());
    }
    Ok(proto::ProcessStartRequest {
        program: program_name(&command.argv),
        command,
        pty,
        paced: request.paced,
    })
}

pub(crate) fn terminal_size(cols: Option<u16>, rows: Option<u16>) -> Result<TermSize, Error> {
    let size = TermSize {
        cols: cols.unwrap_or(DEFAULT_TERMINAL_SIZE.cols),
        rows: rows.unwrap_or(DEFAULT_TERMINAL_SIZE.rows),
    };
    let valid = 1..=MAX_TERMINAL_DIMENSION;
    if !valid.contains(&size.cols) || !valid.contains(&size.rows) {
        return Err(Error::bad_request(
            "invalid_request",
            format!("`cols` and `rows` must be 1 to {MAX_TERMINAL_DIMENSION}"),
        ));
    }
    Ok(size)
}

fn signal_number(signal: &SignalSpec) -> Result<i32, Error> {
    let number = match signal {
        SignalSpec::Number(number) => Some(*number).filter(|n| (1..=64).contains(n)),
        SignalSpec::Name(name) => {
            let name = name.to_ascii_uppercase();
            let name = name.strip_prefix("SIG").unwrap_or(&name);
            SIGNALS
                .iter()
                .find(|(known, _)| *known == name)
                .map(|(_, number)| *number)
        }
    };
    number.ok_or_else(|| {
        let names: Vec<&str> = SIGNALS.iter().map(|(name, _)| *name).collect();
        let given = match signal {
            SignalSpec::Number(number) => number.to_string(),
            SignalSpec::Name(name) => format!("{name:?}"),
        };
        Error::bad_request(
            "invalid_signal",
            format!(
                "unknown signal {given}; use one of {} or a number from 1 to 64",
                names.join(", ")
            ),
        )
    })
}

/// The API's view of what the agent reports; the program name is cleaned up again, as the
/// agent's word for it cannot be trusted.
pub(crate) fn api_info(info: proto::ProcessInfo) -> ProcessInfo {
    let started_at = unix_millis(info.started_at_ms);
    let exit = info.exit.as_ref();
    let duration_ms = match exit {
        Some(exit) => exit.duration_ms,
        None => u64::try_from(
            (OffsetDateTime::now_utc() - started_at)
                .whole_milliseconds()
                .max(0),
        )
        .unwrap_or(u64::MAX),
    };
    ProcessInfo {
        program: activity_target(&info),
        id: info.id,
        pid: info.pid,
        state: if exit.is_some() {
            ProcessState::Exited
        } else {
            ProcessState::Running
        },
        pty: info.pty,
        stdin_open: info.stdin_open,
        started_at: rfc3339(started_at),
        ended_at: exit
            .map(|_| rfc3339(started_at + time::Duration::milliseconds(duration_ms as i64))),
        duration_ms,
        timeout_secs: info.timeout_ms / 1000,
        exit_code: exit.and_then(|e| e.exit_code),
        signal: exit.and_then(|e| e.signal),
        timed_out: exit.is_some_and(|e| e.timed_out),
        oom_killed: exit.is_some_and(|e| e.oom_killed),
        output_start: info.output_start,
        output_bytes: info.output_end,
    }
}

fn unix_millis(millis: u64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// How the activity log names a process: its program, never its arguments.
fn activity_target(info: &proto::ProcessInfo) -> String {
    program_name(std::slice::from_ref(&info.program))
}

/// Records how `result` went, naming the process the operation returned.
fn finish_naming(
    entry: &mut PendingEntry,
    result: Result<proto::ProcessInfo, Error>,
) -> Result<proto::ProcessInfo, Error> {
    if let Ok(info) = &result {
        entry.target = activity_target(info);
    }
    entry.finish(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_by_name_or_number() {
        let name = |n: &str| signal_number(&SignalSpec::Name(n.into()));
        assert_eq!(name("TERM").unwrap(), 15);
        assert_eq!(name("sigkill").unwrap(), 9);
        assert_eq!(name("Usr2").unwrap(), 12);
        assert!(name("BOGUS").is_err());
        assert!(name("").is_err());
        assert_eq!(signal_number(&SignalSpec::Number(2)).unwrap(), 2);
        for bad in [0, -9, 65] {
            assert!(signal_number(&SignalSpec::Number(bad)).is_err());
        }
    }

    #[test]
    fn start_requests_are_checked_and_default_to_the_policy_timeout() {
        let policy = Policy {
            default_timeout_secs: 60,
            max_timeout_secs: 600,
            max_output_bytes: 1 << 20,
            max_upload_bytes: 1 << 20,
            max_body_bytes_in_flight: 1 << 20,
            idle_timeout_secs: 1,
            max_lifetime_secs: 1,
            max_sessions: 1,
            auth_failures_per_minute: 1,
            idle_action: Default::default(),
            paused_timeout_secs: 1,
            snapshot_quota_bytes: 1,
            snapshot_quota_count: 1,
            pause_quota_bytes: Some(1),
            volume_quota_bytes: 1,
            volume_quota_count: 1,
            volume_concurrent_writers: false,
            mcp_output_bytes: 1 << 10,
            max_port_connections: 1,
            max_port_connections_per_tenant: 1,
            max_contexts_per_session: 1,
            max_contexts_per_tenant: 1,
            port_bytes_per_sec: 1,
            max_connections: 2,
            reserved_connections: 1,
            max_requests_per_caller: 1,
            max_watches_per_session: 1,
            max_watches_per_tenant: 1,
            max_shares_per_tenant: 1,
            max_dns_lookups_per_sandbox: 1,
            max_watches: 1,
            max_shares_per_session: 1,
            max_shares: 1,
            max_dns_lookups: 1,
        };
        let start = |request: StartProcess| plan(request, &policy);
        let planned = start(StartProcess {
            command: Some("echo $X".into()),
            ..StartProcess::default()
        })
        .unwrap();
        assert_eq!(planned.command.timeout_ms, 60_000);
        assert_eq!(planned.program, "echo");
        assert!(!planned.command.stdin && planned.pty.is_none());

        let terminal = start(StartProcess {
            argv: Some(vec!["/bin/sh".into()]),
            pty: true,
            cols: Some(100),
            ..StartProcess::default()
        })
        .unwrap();
        assert_eq!(
            terminal.pty,
            Some(TermSize {
                cols: 100,
                rows: 24
            })
        );
        assert!(terminal.command.stdin);
        assert_eq!(terminal.command.env["TERM"], TERMINAL_TYPE);

        let too_long = start(StartProcess {
            command: Some("true".into()),
            timeout_secs: Some(601),
            ..StartProcess::default()
        });
        assert!(matches!(
            too_long,
            Err(Error::BadRequest {
                code: "timeout_too_large",
                ..
            })
        ));
        let size_without_terminal = start(StartProcess {
            command: Some("true".into()),
            cols: Some(10),
            ..StartProcess::default()
        });
        assert!(size_without_terminal.is_err());
        let zero_rows = start(StartProcess {
            command: Some("true".into()),
            pty: true,
            rows: Some(0),
            ..StartProcess::default()
        });
        assert!(zero_rows.is_err());
    }
}
