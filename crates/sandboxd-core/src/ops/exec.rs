//! Running one command to completion in a session, through the sandbox's agent, and the
//! checks every command passes (exec and background processes alike).

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::state::activity::{error_text, program_name, Caller, CommandEnding};
use sandboxd_agent_proto as proto;
use sandboxd_api::{ExecRequest, ExecResult, Policy};
use std::collections::BTreeMap;
use std::time::Duration;

/// Time the agent gets beyond the command's own timeout to kill it and report.
const AGENT_GRACE: Duration = Duration::from_secs(10);

/// The most a command (argv, env and cwd, JSON-encoded) may take: half the agent's frame, as
/// a process start sends the program name again beside it. Linux's own `ARG_MAX` is 2 MiB.
const MAX_COMMAND_BYTES: usize = proto::MAX_FRAME_LEN / 2;

/// What to run, as exec and process requests both describe it.
#[derive(Default)]
pub struct Command {
    /// A shell string, run by `/bin/sh -c`.
    pub command: Option<String>,
    pub argv: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub env: BTreeMap<String, String>,
    pub timeout_secs: u64,
}

impl Core {
    /// Runs one command to completion in the session.
    pub async fn exec(
        &self,
        caller: &Caller,
        session_id: &str,
        request: ExecRequest,
    ) -> Result<ExecResult, Error> {
        let session = self.running_session(caller, session_id, "exec")?;
        let policy = &self.config().policy;
        let stdin = request.stdin.map(String::into_bytes);
        let command = Command {
            command: request.command,
            argv: request.argv,
            cwd: request.cwd,
            env: with_session_env(&session.env, request.env),
            timeout_secs: request.timeout_secs.unwrap_or(policy.default_timeout_secs),
        };
        let mut planned = plan(command, policy)?;
        planned.stdin = stdin.is_some();
        // Recorded also when the caller goes away before the command ends.
        let mut entry = self.entry(caller, &session, "exec", &program_name(&planned.argv));
        // `oom_killed` is the sandbox cgroup's count, which the agent reads before and after:
        // an OOM kill of any process of the command (e.g. a child of `sh -c`, which then exits
        // 137) counts.
        let result = match self.connect(&session).await {
            Ok(stream) => run(stream, &planned, stdin).await,
            Err(e) => Err(e),
        };
        match &result {
            Ok(r) => entry.end_command(&CommandEnding {
                exit_code: r.exit_code,
                signal: r.signal,
                timed_out: r.timed_out,
                oom_killed: r.oom_killed,
            }),
            Err(e) => entry.end(Some(error_text(e))),
        }
        result
    }

    /// [`Core::exec`], `sink` seeing the output as the agent sends it (each stream's head as
    /// it comes, its tail after the exit), for a face that shows progress.
    pub async fn exec_watched(
        &self,
        caller: &Caller,
        session_id: &str,
        request: ExecRequest,
        sink: impl Fn(&[u8]) + Send + Sync + 'static,
    ) -> Result<ExecResult, Error> {
        let sink: proto::OutputSink = std::sync::Arc::new(sink);
        proto::OUTPUT_SINK
            .scope(sink, self.exec(caller, session_id, request))
            .await
    }
}

/// A command's environment: the session's, overridden by the command's own.
pub(crate) fn with_session_env(
    session: &BTreeMap<String, String>,
    mut own: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    for (name, value) in session {
        own.entry(name.clone()).or_insert_with(|| value.clone());
    }
    own
}

/// Checks a command against the policy and turns it into the agent's form (without stdin).
pub fn plan(request: Command, policy: &Policy) -> Result<proto::ExecRequest, Error> {
    let argv = match (request.command, request.argv) {
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err(Error::bad_request("invalid_request", "`command` is empty"));
            }
            vec!["/bin/sh".to_string(), "-c".to_string(), command]
        }
        (None, Some(argv)) if !argv.is_empty() && !argv[0].is_empty() => argv,
        (None, Some(_)) => {
            return Err(Error::bad_request(
                "invalid_request",
                "`argv` must name a program, e.g. [\"python3\", \"-c\", \"print(1)\"]",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(Error::bad_request(
                "invalid_request",
                "give either `command` (run by /bin/sh -c) or `argv`, not both",
            ))
        }
        (None, None) => {
            return Err(Error::bad_request(
                "invalid_request",
                "give `command` (a shell string) or `argv` (a program and its arguments)",
            ))
        }
    };
    if argv.iter().any(|arg| arg.contains('\0')) {
        return Err(Error::bad_request(
            "invalid_request",
            "arguments may not contain NUL bytes",
        ));
    }
    for (key, value) in &request.env {
        if key.is_empty() || key.contains('=') || key.contains('\0') || value.contains('\0') {
            return Err(Error::bad_request(
                "invalid_request",
                format!(
                    "environment variable name {key:?} is not valid (no '=', no NUL, not empty)"
                ),
            ));
        }
    }
    if let Some(cwd) = &request.cwd {
        if cwd.is_empty() || cwd.contains('\0') {
            return Err(Error::bad_request(
                "invalid_request",
                "`cwd` must be a path without NUL bytes",
            ));
        }
    }
    let timeout_secs = request.timeout_secs;
    if timeout_secs == 0 {
        return Err(Error::bad_request(
            "invalid_timeout",
            "`timeout_secs` must be at least 1",
        ));
    }
    if timeout_secs > policy.max_timeout_secs {
        return Err(Error::bad_request(
            "timeout_too_large",
            format!(
                "timeout_secs {timeout_secs} is above the service's limit of {} s (policy.max_timeout_secs); ask for at most that",
                policy.max_timeout_secs
            ),
        ));
    }
    let planned = proto::ExecRequest {
        argv,
        cwd: request.cwd,
        env: request.env,
        stdin: false,
        timeout_ms: timeout_secs * 1000,
        output_limit: policy.max_output_bytes,
    };
    // Refused here, before the agent would drop the connection over an oversized frame.
    let encoded = encoded_len(&planned);
    if encoded > MAX_COMMAND_BYTES {
        return Err(Error::PayloadTooLarge(format!(
            "the command's argv, env and cwd take {encoded} bytes encoded, over the limit of {MAX_COMMAND_BYTES}; pass large data on stdin or in a file"
        )));
    }
    Ok(planned)
}

/// The length of a request's JSON encoding, counted without building it.
fn encoded_len(request: &proto::ExecRequest) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Strings and maps of strings always encode; a failure would only mean "too large".
    match serde_json::to_writer(&mut counter, request) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

/// Whether the agent answered the exchange, with a result or with its refusal (a program that
/// cannot be started): the connection then serves another request. A broken or timed-out
/// exchange may have left frames behind.
pub(crate) fn answered<T>(result: &Result<T, proto::ProtoError>) -> bool {
    matches!(result, Ok(_) | Err(proto::ProtoError::Agent { .. }))
}

/// Runs a planned command over an agent connection and shapes the answer. The connection
/// serves later requests when the exchange ended cleanly.
async fn run(
    mut stream: sandboxd_backend::AgentStream,
    request: &proto::ExecRequest,
    stdin: Option<Vec<u8>>,
) -> Result<ExecResult, Error> {
    let deadline = Duration::from_millis(request.timeout_ms) + AGENT_GRACE;
    // Input may stop half-sent when the process exits first, leaving a partial frame.
    let sends_input = stdin.is_some();
    let result = proto::run_exec(&mut stream, request, stdin, deadline).await;
    if !sends_input && answered(&result) {
        stream.reuse();
    }
    let result = result.map_err(|e| agent_error(Operation::Exec, e))?;
    let report = result.report;
    // The agent's totals are its word: never fewer than the bytes it sent.
    let stdout_bytes = report.stdout_bytes.max(result.stdout.len() as u64);
    let stderr_bytes = report.stderr_bytes.max(result.stderr.len() as u64);
    Ok(ExecResult {
        exit_code: report.exit_code,
        signal: report.signal,
        stdout: String::from_utf8_lossy(&result.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
        stdout_truncated: result.stdout_truncated,
        stderr_truncated: result.stderr_truncated,
        stdout_bytes,
        stderr_bytes,
        timed_out: report.timed_out,
        oom_killed: report.oom_killed,
        duration_ms: report.duration_ms,
    })
}
