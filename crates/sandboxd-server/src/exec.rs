//! Running one command to completion in a session, through the sandbox's agent.

use crate::error::ApiError;
use sandboxd_agent_proto as proto;
use sandboxd_api::{ExecRequest, ExecResult, Policy};
use std::time::Duration;

/// Time the agent gets beyond the command's own timeout to kill it and report.
const AGENT_GRACE: Duration = Duration::from_secs(10);

/// Checks a request against the policy and turns it into the agent's form.
pub fn plan(
    request: ExecRequest,
    policy: &Policy,
) -> Result<(proto::ExecRequest, Option<Vec<u8>>), ApiError> {
    let argv = match (request.command, request.argv) {
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err(ApiError::bad_request(
                    "invalid_request",
                    "`command` is empty",
                ));
            }
            vec!["/bin/sh".to_string(), "-c".to_string(), command]
        }
        (None, Some(argv)) if !argv.is_empty() && !argv[0].is_empty() => argv,
        (None, Some(_)) => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`argv` must name a program, e.g. [\"python3\", \"-c\", \"print(1)\"]",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "give either `command` (run by /bin/sh -c) or `argv`, not both",
            ))
        }
        (None, None) => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "give `command` (a shell string) or `argv` (a program and its arguments)",
            ))
        }
    };
    if argv.iter().any(|arg| arg.contains('\0')) {
        return Err(ApiError::bad_request(
            "invalid_request",
            "arguments may not contain NUL bytes",
        ));
    }
    for (key, value) in &request.env {
        if key.is_empty() || key.contains('=') || key.contains('\0') || value.contains('\0') {
            return Err(ApiError::bad_request(
                "invalid_request",
                format!(
                    "environment variable name {key:?} is not valid (no '=', no NUL, not empty)"
                ),
            ));
        }
    }
    if let Some(cwd) = &request.cwd {
        if cwd.is_empty() || cwd.contains('\0') {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`cwd` must be a path without NUL bytes",
            ));
        }
    }
    let timeout_secs = request.timeout_secs.unwrap_or(policy.default_timeout_secs);
    if timeout_secs == 0 {
        return Err(ApiError::bad_request(
            "invalid_timeout",
            "`timeout_secs` must be at least 1",
        ));
    }
    if timeout_secs > policy.max_timeout_secs {
        return Err(ApiError::bad_request(
            "timeout_too_large",
            format!(
                "timeout_secs {timeout_secs} is above the service's limit of {} s (policy.max_timeout_secs); ask for at most that",
                policy.max_timeout_secs
            ),
        ));
    }
    let stdin = request.stdin.map(String::into_bytes);
    Ok((
        proto::ExecRequest {
            argv,
            cwd: request.cwd,
            env: request.env,
            stdin: stdin.is_some(),
            timeout_ms: timeout_secs * 1000,
            output_limit: policy.max_output_bytes,
        },
        stdin,
    ))
}

/// Runs a planned command over an agent connection and shapes the answer. The connection
/// serves later requests when the exchange ended cleanly.
pub async fn run(
    mut stream: sandboxd_backend::AgentStream,
    request: &proto::ExecRequest,
    stdin: Option<Vec<u8>>,
) -> Result<ExecResult, ApiError> {
    let deadline = Duration::from_millis(request.timeout_ms) + AGENT_GRACE;
    // Input may stop half-sent when the process exits first, leaving a partial frame.
    let sends_input = stdin.is_some();
    let result = proto::run_exec(&mut stream, request, stdin, deadline)
        .await
        .map_err(|e| match e {
            proto::ProtoError::Agent { code, message } if code == "spawn_failed" => {
                ApiError::bad_request("spawn_failed", message)
            }
            other => ApiError::agent_exchange(&other),
        })?;
    if !sends_input {
        stream.reuse();
    }
    let report = result.report;
    Ok(ExecResult {
        exit_code: report.exit_code,
        signal: report.signal,
        stdout: String::from_utf8_lossy(&result.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
        stdout_truncated: result.stdout_truncated,
        stderr_truncated: result.stderr_truncated,
        timed_out: report.timed_out,
        oom_killed: report.oom_killed,
        duration_ms: report.duration_ms,
    })
}
