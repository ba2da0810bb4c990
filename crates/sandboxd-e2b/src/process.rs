//! envd's `process.Process` service over the core's background processes: Start and
//! Connect stream a process's output (start, data, end events, keepalives), the unary calls
//! list, write stdin, signal, close stdin and resize. A process is addressed by its pid, as
//! E2B does; among processes that had the same pid, the running one.

use crate::call::SandboxCall;
use crate::connect::{self, StreamSender};
use crate::envd::{authenticate, user_path};
use crate::errors::{Code, E2bError};
use crate::routing::SandboxId;
use crate::state::ClientAddress;
use crate::state::Face;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Extension;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use sandboxd_api::{ProcessInfo, ProcessState, SignalSpec, StartProcess, TerminalSize};
use sandboxd_core::processes::StreamEvent;
use sandboxd_core::Attachment;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// The longest quiet stretch of a stream before a keepalive, unless the client asks for less.
const MAX_KEEPALIVE: Duration = Duration::from_secs(50);
const MIN_KEEPALIVE: Duration = Duration::from_secs(1);
const KEEPALIVE_HEADER: &str = "keepalive-ping-interval";
const TIMEOUT_HEADER: &str = "connect-timeout-ms";

#[derive(Deserialize, Default)]
#[serde(default)]
struct ProcessConfig {
    cmd: String,
    args: Vec<String>,
    envs: BTreeMap<String, String>,
    cwd: Option<String>,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
struct Size {
    cols: u32,
    rows: u32,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Pty {
    size: Option<Size>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StartRequest {
    process: ProcessConfig,
    pty: Option<Pty>,
    stdin: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Selector {
    pid: Option<u32>,
    tag: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Input {
    stdin: Option<String>,
    pty: Option<String>,
}

/// Connect, SendInput, SendSignal, CloseStdin and Update: a process and what to do to it.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Addressed {
    process: Selector,
    input: Option<Input>,
    signal: Option<Value>,
    pty: Option<Pty>,
}

/// The request of Start or Connect.
enum StreamRequest {
    Connect(Addressed),
    Start(StartRequest),
}

pub async fn call(
    State(face): State<Face>,
    Path(method): Path<String>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let streaming = connect::is_stream_request(&headers);
    let call = match authenticate(&face, &sandbox, &headers, &address) {
        Ok(call) => call,
        Err(e) => return answer_error(streaming, e).await,
    };
    match method.as_str() {
        "Start" | "Connect" => {
            // Read before answering: the request body is gone once the answer has begun.
            let request = if method == "Start" {
                connect::request(body, true).await.map(StreamRequest::Start)
            } else {
                connect::request(body, true)
                    .await
                    .map(StreamRequest::Connect)
            };
            let request = match request {
                Ok(request) => request,
                Err(e) => return answer_error(true, e).await,
            };
            let (sender, response) = connect::stream();
            tokio::spawn(async move {
                let attached = match request {
                    StreamRequest::Start(request) => start(&face, &call, &headers, request).await,
                    StreamRequest::Connect(request) => reconnect(&face, &call, request).await,
                };
                match attached {
                    Ok((info, attachment)) => {
                        let ended = follow(sender, info, attachment, &headers).await;
                        if let Some((sender, error)) = ended {
                            let error = ended_sandbox(&face, &call, error).await;
                            sender.end(error).await;
                        }
                    }
                    Err(e) => sender.end(Some(e)).await,
                }
            });
            response
        }
        "StreamInput" => {
            answer_error(
                streaming,
                E2bError::unsupported("StreamInput (send_stdin works, one write at a time)"),
            )
            .await
        }
        _ => connect::unary(unary(&face, &call, &method, body).await),
    }
}

async fn answer_error(streaming: bool, error: E2bError) -> Response {
    if streaming {
        connect::failed_stream(error).await
    } else {
        connect::unary(Err(error))
    }
}

async fn unary(
    face: &Face,
    call: &SandboxCall,
    method: &str,
    body: Body,
) -> Result<Value, E2bError> {
    if method == "List" {
        let processes = face.core.list_processes(&call.caller, &call.id).await?;
        let running: Vec<Value> = processes
            .processes
            .iter()
            .filter(|p| p.state == ProcessState::Running)
            .map(|p| json!({"config": {"cmd": p.program, "args": [], "envs": {}}, "pid": p.pid}))
            .collect();
        return Ok(json!({"processes": running}));
    }
    if !["SendInput", "CloseStdin", "SendSignal", "Update"].contains(&method) {
        return Err(E2bError::new(
            Code::Unimplemented,
            StatusCode::NOT_FOUND,
            format!("process.Process has no method {method}"),
        ));
    }
    let request: Addressed = connect::request(body, false).await?;
    let process = running_process(face, call, &request.process).await?;
    match method {
        "SendInput" => {
            let input = request.input.unwrap_or_default();
            let data = input
                .stdin
                .or(input.pty)
                .map(|b64| BASE64.decode(b64))
                .transpose()
                .map_err(|_| E2bError::invalid("input is not base64"))?
                .unwrap_or_default();
            face.core
                .write_stdin(&call.caller, &call.id, &process.id, &data, false)
                .await?;
        }
        "CloseStdin" => {
            face.core
                .write_stdin(&call.caller, &call.id, &process.id, &[], true)
                .await?;
        }
        "SendSignal" => {
            let signal = match request.signal {
                Some(Value::String(name)) => {
                    SignalSpec::Name(name.strip_prefix("SIGNAL_").unwrap_or(&name).to_string())
                }
                Some(Value::Number(n)) => {
                    SignalSpec::Number(n.as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(0))
                }
                _ => {
                    return Err(E2bError::invalid(
                        "name a signal: SIGNAL_SIGTERM or SIGNAL_SIGKILL",
                    ))
                }
            };
            face.core
                .signal_process(&call.caller, &call.id, &process.id, &signal)
                .await?;
        }
        // Update, the one method left.
        _ => {
            let size = request.pty.and_then(|p| p.size).ok_or_else(|| {
                E2bError::invalid("Update changes a terminal's size: send pty.size")
            })?;
            face.core
                .resize_process(&call.caller, &call.id, &process.id, terminal_size(size)?)
                .await?;
        }
    }
    Ok(json!({}))
}

/// Start: the command (E2B's `/bin/bash -l -c CMD`) as a background process, followed from
/// its first byte. Its timeout is the call's deadline, at most `policy.max_timeout_secs`.
async fn start(
    face: &Face,
    call: &SandboxCall,
    headers: &HeaderMap,
    request: StartRequest,
) -> Result<(ProcessInfo, Attachment), E2bError> {
    let size = match &request.pty {
        Some(pty) => Some(terminal_size(pty.size.unwrap_or_default())?),
        None => None,
    };
    let most = face.core.config().policy.max_timeout_secs;
    let timeout_secs = headers
        .get(TIMEOUT_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        // A call without a deadline (none sent, or the SDK's timeout=0) runs as long as the
        // policy allows.
        .filter(|ms| *ms > 0)
        .map(|ms| ms.div_ceil(1000).clamp(1, most))
        .or(Some(most));
    let program = request.process.cmd.clone();
    let mut argv = vec![request.process.cmd];
    argv.extend(request.process.args);
    let started = face
        .core
        .start_process(
            &call.caller,
            &call.id,
            StartProcess {
                argv: Some(argv),
                // envd's user starts at home, with HOME there, unless told otherwise.
                cwd: Some(user_path(request.process.cwd.as_deref().unwrap_or_default())?),
                env: with_home(request.process.envs),
                stdin: request.stdin.unwrap_or(false),
                timeout_secs,
                pty: size.is_some(),
                cols: size.map(|s| s.cols),
                rows: size.map(|s| s.rows),
                command: None,
                input: None,
                // E2B commands keep running with nobody reading: their output is a ring.
                paced: false,
            },
        )
        .await
        .map_err(|e| match e.into_kind() {
            sandboxd_core::Error::BadRequest {
                code: sandboxd_core::CODE_SPAWN_FAILED,
                message,
            } => E2bError::invalid(format!(
                "{message}; the E2B SDKs run commands with {program}, so pick a template (runtime) whose image has it, e.g. python"
            )),
            other => other.into(),
        })?;
    let attachment = face
        .core
        .attach(&call.caller, &call.id, &started.id, 0)
        .await?;
    Ok((started, attachment))
}

/// Connect: a running process's output from now on.
async fn reconnect(
    face: &Face,
    call: &SandboxCall,
    request: Addressed,
) -> Result<(ProcessInfo, Attachment), E2bError> {
    let process = running_process(face, call, &request.process).await?;
    let attachment = face
        .core
        .attach(&call.caller, &call.id, &process.id, process.output_bytes)
        .await?;
    Ok((process, attachment))
}

/// The running process a selector names.
async fn running_process(
    face: &Face,
    call: &SandboxCall,
    selector: &Selector,
) -> Result<ProcessInfo, E2bError> {
    let pid = match (selector.pid, &selector.tag) {
        (Some(pid), _) => pid,
        (None, Some(_)) => {
            return Err(E2bError::invalid(
                "processes are selected by pid here, not by tag",
            ))
        }
        (None, None) => return Err(E2bError::invalid("name the process by its pid")),
    };
    face.core
        .list_processes(&call.caller, &call.id)
        .await?
        .processes
        .into_iter()
        .find(|p| p.pid == pid && p.state == ProcessState::Running)
        .ok_or_else(|| {
            E2bError::new(
                Code::NotFound,
                StatusCode::NOT_FOUND,
                format!("no running process with pid {pid} in sandbox {}", call.id),
            )
        })
}

/// A command's environment with E2B's `HOME`, unless it names its own.
fn with_home(mut envs: BTreeMap<String, String>) -> BTreeMap<String, String> {
    envs.entry("HOME".into())
        .or_insert_with(|| sandboxd_core::HOME_DIR.into());
    envs
}

fn terminal_size(size: Size) -> Result<TerminalSize, E2bError> {
    let dimension =
        |n: u32| u16::try_from(n).map_err(|_| E2bError::invalid("terminal size out of range"));
    Ok(TerminalSize {
        cols: dimension(size.cols)?,
        rows: dimension(size.rows)?,
    })
}

/// What one wait for the next thing to send found.
enum Step {
    Event(
        Box<(
            Attachment,
            Option<Result<StreamEvent, sandboxd_core::Error>>,
        )>,
    ),
    Keepalive,
    ClientGone,
}

async fn next_event(
    mut attachment: Attachment,
) -> (
    Attachment,
    Option<Result<StreamEvent, sandboxd_core::Error>>,
) {
    let event = attachment.next().await;
    (attachment, event)
}

/// Why a command's stream was cut: once its sandbox has ended (killed, timed out), E2B's
/// "was not found" with the sandbox's end reason, which the SDKs read as the sandbox gone,
/// not the agent's connection failing.
async fn ended_sandbox(
    face: &Face,
    call: &SandboxCall,
    error: Option<E2bError>,
) -> Option<E2bError> {
    match face.core.get_session(&call.caller, &call.id).await {
        Ok(info) if info.state == sandboxd_api::SessionState::Ended => Some(E2bError::new(
            Code::Unavailable,
            StatusCode::BAD_GATEWAY,
            format!(
                "sandbox {} was not found: it ended while the command ran ({})",
                call.id,
                info.end_reason.as_deref().unwrap_or("no reason recorded")
            ),
        )),
        _ => error,
    }
}

/// Streams the process's start event, its output and its end, with keepalives while it is
/// quiet, until it ends or the client goes (the process keeps running then). A stream cut
/// before the process's end is handed back unended, with its error if any.
async fn follow(
    sender: StreamSender,
    info: ProcessInfo,
    attachment: Attachment,
    headers: &HeaderMap,
) -> Option<(StreamSender, Option<E2bError>)> {
    let interval = headers
        .get(KEEPALIVE_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(MAX_KEEPALIVE, Duration::from_secs)
        .clamp(MIN_KEEPALIVE, MAX_KEEPALIVE);
    let output_kind = if info.pty { "pty" } else { "stdout" };
    if !sender
        .send(&json!({"event": {"start": {"pid": info.pid}}}))
        .await
    {
        return None;
    }
    let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    // The attachment moves into the pending wait and back, so a keepalive never cuts a read.
    let mut pending = Box::pin(next_event(attachment));
    loop {
        let step = tokio::select! {
            moved = &mut pending => Step::Event(Box::new(moved)),
            _ = keepalive.tick() => Step::Keepalive,
            _ = sender.closed() => Step::ClientGone,
        };
        match step {
            Step::ClientGone => return None,
            Step::Keepalive => {
                if !sender.send(&json!({"event": {"keepalive": {}}})).await {
                    return None;
                }
            }
            Step::Event(moved) => {
                let (attachment, event) = *moved;
                let message = match event {
                    Some(Ok(StreamEvent::Output { stderr, data, .. })) => {
                        let kind = if stderr { "stderr" } else { output_kind };
                        json!({"event": {"data": {kind: BASE64.encode(&data)}}})
                    }
                    Some(Ok(StreamEvent::Dropped { .. })) => {
                        pending = Box::pin(next_event(attachment));
                        continue;
                    }
                    Some(Ok(StreamEvent::Exited(info))) => {
                        if sender
                            .send(&json!({"event": {"end": end_event(&info)}}))
                            .await
                        {
                            sender.end(None).await;
                        }
                        return None;
                    }
                    Some(Err(e)) => return Some((sender, Some(e.into()))),
                    None => return Some((sender, None)),
                };
                if !sender.send(&message).await {
                    return None;
                }
                keepalive.reset();
                pending = Box::pin(next_event(attachment));
            }
        }
    }
}

/// An exited process as envd reports it: Go's exit code (-1 when a signal killed it) and
/// status text.
fn end_event(info: &ProcessInfo) -> Value {
    let (exit_code, status) = match (info.exit_code, info.signal) {
        (Some(code), _) => (code, format!("exit status {code}")),
        (None, Some(signal)) => (-1, format!("signal: {}", signal_name(signal))),
        (None, None) => (-1, "unknown".to_string()),
    };
    let error = if info.timed_out {
        Some(format!(
            "the command ran past its timeout of {} s and was killed",
            info.timeout_secs
        ))
    } else if info.oom_killed {
        Some("killed: out of memory".to_string())
    } else {
        None
    };
    let mut end =
        json!({"exitCode": exit_code, "exited": info.exit_code.is_some(), "status": status});
    if let Some(error) = error {
        end["error"] = error.into();
    }
    end
}

fn signal_name(signal: i32) -> String {
    match signal {
        9 => "killed".into(),
        15 => "terminated".into(),
        2 => "interrupt".into(),
        1 => "hangup".into(),
        other => format!("signal {other}"),
    }
}
