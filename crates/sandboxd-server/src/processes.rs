//! Routes for a session's background processes and its interactive terminal.
//!
//! The sandbox's agent keeps the processes (their output in a ring buffer, their exit status
//! after they end), so they outlive the request that started them and any client watching
//! them. Each call here takes one agent connection: a short exchange for control operations,
//! or an attachment that streams output for as long as the client listens, as Server-Sent
//! Events or over the terminal's WebSocket. Output is pulled from the agent only as fast as
//! the client takes it, so a slow client costs no memory here.

use crate::activity::{self, agent_text, Actor, PendingEntry};
use crate::error::{parse_query, ApiError};
use crate::sessions::rfc3339;
use crate::{exec, Service};
use axum::body::Bytes;
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use sandboxd_agent_proto::host::{
    attach_process, kill_all_processes, list_processes, resize_process, signal_process,
    start_process, write_process_stdin, OutputEvent, ProcessInput as AgentInput, ProcessOutput,
};
use sandboxd_agent_proto::{self as proto, FrameKind, ProtoError, TermSize};
use sandboxd_api::{
    ErrorDetail, ExecRequest, InputWritten, KilledProcesses, OutputChunk, OutputDropped, Policy,
    ProcessInfo, ProcessInput, ProcessList, ProcessState, SignalRequest, SignalSpec, StartProcess,
    TerminalMessage, TerminalSize,
};
use sandboxd_backend::AgentStream;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::io::{ReadHalf, WriteHalf};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// The longest wait for the agent's answer to a control operation, or to an attach.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);
/// Killing everything may take the agent many rounds against a fork bomb.
const KILL_ALL_TIMEOUT: Duration = Duration::from_secs(20);
/// A stdin write also gets this long per MiB: the process has to read it.
const STDIN_TIME_PER_MIB: Duration = Duration::from_secs(1);
const START_BODY_LIMIT: usize = 1 << 20;
const CONTROL_BODY_LIMIT: usize = 4 << 10;
/// SSE comments keep idle streams open through proxies.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);
const DEFAULT_TERMINAL_SIZE: TermSize = TermSize { cols: 80, rows: 24 };
const MAX_TERMINAL_DIMENSION: u16 = 1000;
/// What a terminal's programs are told they talk to, unless the request says otherwise.
const TERMINAL_TYPE: &str = "xterm-256color";
/// A terminal's input arrives in keystrokes and pastes.
const MAX_TERMINAL_MESSAGE: usize = 1 << 20;
/// An agent's error message is passed on cut to this many characters.
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

pub fn routes(service: &Service) -> OpenApiRouter<Service> {
    let stdin_limit =
        usize::try_from(service.config().policy.max_upload_bytes).unwrap_or(usize::MAX);
    OpenApiRouter::new()
        .routes(routes!(list, start, kill_all).layer(DefaultBodyLimit::max(START_BODY_LIMIT)))
        .routes(routes!(get_one))
        .routes(routes!(stream))
        .routes(routes!(write_stdin).layer(DefaultBodyLimit::max(stdin_limit)))
        .routes(routes!(close_stdin))
        .routes(routes!(signal).layer(DefaultBodyLimit::max(CONTROL_BODY_LIMIT)))
        .routes(routes!(resize).layer(DefaultBodyLimit::max(CONTROL_BODY_LIMIT)))
        .routes(routes!(terminal))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes",
    tag = "processes",
    summary = "Start a background process",
    description = "It runs in its own process group until it exits or its timeout (default and at most `policy.max_timeout_secs`) kills the group; its output is kept for streaming and its exit status after it ends. With `pty`, it runs on a terminal.",
    params(("id" = String, Path, description = "The session's id")),
    request_body(content = StartProcess, description = "Exactly one of `command` (run by /bin/sh -c) or `argv`"),
    responses(
        (status = 201, description = "The process, running", body = ProcessInfo),
        (status = 400, description = "`invalid_request`, `invalid_json`, `invalid_timeout`, `timeout_too_large` or `spawn_failed`", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 1 MiB", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn start(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
    body: Bytes,
) -> Result<(StatusCode, Json<ProcessInfo>), ApiError> {
    let request: StartProcess = parse_json(&body, "start request")?;
    let planned = plan(request, &service.config().policy)?;
    let mut entry = start_entry(&service, &id, actor, "process_start", &planned.program)?;
    let started = async {
        let mut agent = connect(&service, &id).await?;
        start_process(&mut agent, &planned, CONTROL_TIMEOUT)
            .await
            .map_err(agent_error)
    };
    let started = started.await;
    let info = entry.finish(started)?;
    Ok((StatusCode::CREATED, Json(api_info(info))))
}

/// Checks a start request against the policy and turns it into the agent's form. The
/// command is checked as an exec's, but the timeout defaults to the longest allowed:
/// background processes are meant to run long.
fn plan(request: StartProcess, policy: &Policy) -> Result<proto::ProcessStartRequest, ApiError> {
    let pty = match (request.pty, request.cols, request.rows) {
        (true, cols, rows) => Some(terminal_size(cols, rows)?),
        (false, None, None) => None,
        (false, _, _) => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`cols` and `rows` are for a terminal; add \"pty\": true",
            ))
        }
    };
    let command = ExecRequest {
        command: request.command,
        argv: request.argv,
        cwd: request.cwd,
        env: request.env,
        stdin: None,
        timeout_secs: Some(request.timeout_secs.unwrap_or(policy.max_timeout_secs)),
    };
    let (mut command, _) = exec::plan(command, policy)?;
    command.stdin = request.stdin || pty.is_some();
    if pty.is_some() {
        command
            .env
            .entry("TERM".into())
            .or_insert_with(|| TERMINAL_TYPE.into());
    }
    Ok(proto::ProcessStartRequest {
        program: activity::program_name(&command.argv),
        command,
        pty,
    })
}

fn terminal_size(cols: Option<u16>, rows: Option<u16>) -> Result<TermSize, ApiError> {
    let size = TermSize {
        cols: cols.unwrap_or(DEFAULT_TERMINAL_SIZE.cols),
        rows: rows.unwrap_or(DEFAULT_TERMINAL_SIZE.rows),
    };
    let valid = 1..=MAX_TERMINAL_DIMENSION;
    if !valid.contains(&size.cols) || !valid.contains(&size.rows) {
        return Err(ApiError::bad_request(
            "invalid_request",
            format!("`cols` and `rows` must be 1 to {MAX_TERMINAL_DIMENSION}"),
        ));
    }
    Ok(size)
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/processes",
    tag = "processes",
    summary = "A session's background processes, running and exited, oldest first",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The processes", body = ProcessList),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn list(
    State(service): State<Service>,
    Path(id): Path<String>,
) -> Result<Json<ProcessList>, ApiError> {
    let mut agent = connect(&service, &id).await?;
    let processes = list_processes(&mut agent, CONTROL_TIMEOUT)
        .await
        .map_err(agent_error)?;
    Ok(Json(ProcessList {
        processes: processes.into_iter().map(api_info).collect(),
    }))
}

#[utoipa::path(
    delete,
    path = "/v1/sessions/{id}/processes",
    tag = "processes",
    summary = "Kill every process in the sandbox",
    description = "SIGKILLs every process in the sandbox but its agent and init: background processes, running commands, and what left their process group (e.g. with setsid), which a command's timeout cannot reach. The session stays open with its files. Repeated until nothing is left, a bounded number of times: `remaining` counts what outlived the last round.",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "How many processes were killed and how many remain", body = KilledProcesses),
        (status = 404, description = "`not_found`: no such session", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn kill_all(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
) -> Result<Json<KilledProcesses>, ApiError> {
    let mut entry = start_entry(&service, &id, actor, "process_kill_all", "every process")?;
    let killed = async {
        let mut agent = connect(&service, &id).await?;
        kill_all_processes(&mut agent, KILL_ALL_TIMEOUT)
            .await
            .map_err(agent_error)
    };
    let (killed, remaining) = entry.finish(killed.await)?;
    Ok(Json(KilledProcesses { killed, remaining }))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/processes/{process_id}",
    tag = "processes",
    summary = "One background process, with its exit status once it ended",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    responses(
        (status = 200, description = "The process", body = ProcessInfo),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn get_one(
    State(service): State<Service>,
    Path((id, process_id)): Path<(String, String)>,
) -> Result<Json<ProcessInfo>, ApiError> {
    Ok(Json(api_info(find(&service, &id, &process_id).await?)))
}

/// The process, as the agent lists it.
async fn find(
    service: &Service,
    session_id: &str,
    process_id: &str,
) -> Result<proto::ProcessInfo, ApiError> {
    let mut agent = connect(service, session_id).await?;
    let processes = list_processes(&mut agent, CONTROL_TIMEOUT)
        .await
        .map_err(agent_error)?;
    processes
        .into_iter()
        .find(|p| p.id == process_id)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "no process \"{process_id}\" in session {session_id}; list them with GET /v1/sessions/{session_id}/processes"
            ))
        })
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/{process_id}/signal",
    tag = "processes",
    summary = "Send a signal to a process's whole process group",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    request_body(content = SignalRequest, description = "A signal name (`TERM`, `SIGKILL`, ...) or number"),
    responses(
        (status = 200, description = "The process after the signal was sent", body = ProcessInfo),
        (status = 400, description = "`invalid_signal`, `invalid_request` or `invalid_json`", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 4 KiB", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn signal(
    State(service): State<Service>,
    Path((id, process_id)): Path<(String, String)>,
    actor: Actor,
    body: Bytes,
) -> Result<Json<ProcessInfo>, ApiError> {
    let request: SignalRequest = parse_json(&body, "signal request")?;
    let number = signal_number(&request.signal)?;
    let mut entry = start_entry(&service, &id, actor, "process_signal", &process_id)?;
    let signalled = async {
        let mut agent = connect(&service, &id).await?;
        signal_process(&mut agent, &process_id, number, CONTROL_TIMEOUT)
            .await
            .map_err(agent_error)
    };
    let signalled = signalled.await;
    let info = finish_naming(&mut entry, signalled)?;
    Ok(Json(api_info(info)))
}

fn signal_number(signal: &SignalSpec) -> Result<i32, ApiError> {
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
        ApiError::bad_request(
            "invalid_signal",
            format!(
                "unknown signal {given}; use one of {} or a number from 1 to 64",
                names.join(", ")
            ),
        )
    })
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/{process_id}/resize",
    tag = "processes",
    summary = "Resize a process's terminal",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    request_body(content = TerminalSize, description = "The new size, 1 to 1000 each way"),
    responses(
        (status = 200, description = "The process", body = ProcessInfo),
        (status = 400, description = "`invalid_request` or `invalid_json`; or the process has no terminal", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 4 KiB", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn resize(
    State(service): State<Service>,
    Path((id, process_id)): Path<(String, String)>,
    actor: Actor,
    body: Bytes,
) -> Result<Json<ProcessInfo>, ApiError> {
    let request: TerminalSize = parse_json(&body, "resize request")?;
    let size = terminal_size(Some(request.cols), Some(request.rows))?;
    let mut entry = start_entry(&service, &id, actor, "process_resize", &process_id)?;
    let resized = async {
        let mut agent = connect(&service, &id).await?;
        resize_process(&mut agent, &process_id, size, CONTROL_TIMEOUT)
            .await
            .map_err(agent_error)
    };
    let resized = resized.await;
    let info = finish_naming(&mut entry, resized)?;
    Ok(Json(api_info(info)))
}

/// Writes the body to the process's stdin: `{"data": "...", "close"?: bool}` when it is
/// JSON, the raw bytes otherwise.
#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/{process_id}/stdin",
    tag = "processes",
    summary = "Write to a process's standard input",
    description = "A JSON body (`Content-Type: application/json`) is `{\"data\": \"...\", \"close\": false}`; any other body is written as it is. The process must have been started with `stdin` or `pty`.",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    request_body(content(
        (ProcessInput = "application/json"),
        (String = "application/octet-stream")
    )),
    responses(
        (status = 200, description = "All the bytes were written", body = InputWritten),
        (status = 400, description = "`invalid_request` or `invalid_json`; or its stdin is not open", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: over `policy.max_upload_bytes`", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn write_stdin(
    State(service): State<Service>,
    Path((id, process_id)): Path<(String, String)>,
    actor: Actor,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<InputWritten>, ApiError> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    let (data, close) = if is_json {
        let input: ProcessInput = parse_json(&body, "stdin request")?;
        (Bytes::from(input.data), input.close)
    } else {
        (body, false)
    };
    feed(&service, &id, &process_id, actor, &data, close).await
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/{process_id}/stdin/close",
    tag = "processes",
    summary = "Close a process's standard input (it reads end-of-file)",
    params(("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session")),
    responses(
        (status = 200, description = "Its stdin is closed", body = InputWritten),
        (status = 400, description = "Its stdin is not open", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn close_stdin(
    State(service): State<Service>,
    Path((id, process_id)): Path<(String, String)>,
    actor: Actor,
) -> Result<Json<InputWritten>, ApiError> {
    feed(&service, &id, &process_id, actor, &[], true).await
}

async fn feed(
    service: &Service,
    session_id: &str,
    process_id: &str,
    actor: Actor,
    data: &[u8],
    close: bool,
) -> Result<Json<InputWritten>, ApiError> {
    let action = if data.is_empty() && close {
        "process_stdin_close"
    } else {
        "process_stdin"
    };
    let mut entry = start_entry(service, session_id, actor, action, process_id)?;
    let written = async {
        // Named by its program in the log, and refused early if it does not exist.
        let target = find(service, session_id, process_id).await?;
        entry.target = activity_target(&target);
        let mut agent = connect(service, session_id).await?;
        let timeout = CONTROL_TIMEOUT + STDIN_TIME_PER_MIB * (data.len() >> 20) as u32;
        write_process_stdin(&mut agent, process_id, data, close, timeout)
            .await
            .map_err(agent_error)
    };
    let written = written.await;
    if written.is_ok() {
        entry.bytes = Some(data.len() as u64);
    }
    let bytes = entry.finish(written)?;
    Ok(Json(InputWritten {
        bytes,
        closed: close,
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamQuery {
    since: Option<u64>,
    encoding: Option<Encoding>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Encoding {
    #[default]
    Text,
    Base64,
}

/// Streams a process's output as Server-Sent Events from `?since=` (or `Last-Event-ID`, or
/// the start): replayed from what the agent still holds, then live, until the `exit` event.
#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/processes/{process_id}/stream",
    tag = "processes",
    summary = "Follow a process's output as Server-Sent Events",
    description = "Replayed from `?since=` (or `Last-Event-ID`, or the start) out of what is still kept, then live, until the `exit` event. Events: `stdout` and `stderr` (data: an OutputChunk; the event id is the offset to resume at), `dropped` (data: an OutputDropped: output that left the buffer before it was sent), `exit` (data: the ProcessInfo, last). A reconnect with `Last-Event-ID` resumes where it broke off.",
    params(
        ("id" = String, Path, description = "The session's id"), ("process_id" = String, Path, description = "The process's id within the session"),
        ("since" = Option<u64>, Query, description = "The output offset to start at"),
        ("encoding" = Option<String>, Query, description = "`text` (the default: UTF-8, invalid sequences replaced) or `base64`"),
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this event (an offset), as EventSource sends it")
    ),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "`invalid_request`", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn stream(
    State(service): State<Service>,
    Path((id, process_id)): Path<(String, String)>,
    query: Result<Query<StreamQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    actor: Actor,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let query = parse_query(query, "`since=OFFSET` and `encoding=text|base64`")?;
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok()?.trim().parse().ok());
    let since = query.since.or(last_event_id).unwrap_or(0);
    let mut entry = start_entry(&service, &id, actor, "process_stream", &process_id)?;
    let attached = async {
        let target = find(&service, &id, &process_id).await?;
        entry.target = activity_target(&target);
        let agent = connect(&service, &id).await?;
        let (output, _) = attach_process(agent, &process_id, since, false, CONTROL_TIMEOUT)
            .await
            .map_err(agent_error)?;
        Ok(output)
    };
    let attached = attached.await;
    let output = attached.map_err(|e| entry.fail(e))?;
    entry.bytes = Some(0);
    let events = OutputEvents {
        output,
        encoding: query.encoding.unwrap_or_default(),
        held: None,
        queue: VecDeque::new(),
        done: false,
        entry,
    };
    let events = futures_util::stream::unfold(events, |mut events| async move {
        let event = events.next().await?;
        Some((Ok(event), events))
    });
    Ok(Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(KEEPALIVE_INTERVAL)
            .text("keepalive"),
    ))
}

/// Turns an attachment's output into SSE events, one agent frame at a time.
struct OutputEvents {
    output: ProcessOutput<ReadHalf<AgentStream>>,
    encoding: Encoding,
    /// Text output not sent yet because it ends inside a UTF-8 character: its kind, offset
    /// and bytes. Sent with the next output of its kind, or as it is before anything else.
    held: Option<(FrameKind, u64, Vec<u8>)>,
    /// Events made but not yet sent.
    queue: VecDeque<SseEvent>,
    done: bool,
    entry: PendingEntry,
}

impl OutputEvents {
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            if self.done {
                return None;
            }
            let event = self.output.next().await;
            self.entry.touch();
            match event {
                Ok(OutputEvent::Output { kind, offset, data }) => {
                    self.entry.bytes = Some(self.entry.bytes.unwrap_or(0) + data.len() as u64);
                    self.push_output(kind, offset, data);
                }
                Ok(OutputEvent::Dropped { offset, bytes }) => {
                    self.release_held();
                    let data = OutputDropped { offset, bytes };
                    self.queue
                        .push_back(sse("dropped", Some(offset + bytes), &data));
                }
                Ok(OutputEvent::Exited(info)) => {
                    self.release_held();
                    self.done = true;
                    self.entry.target = activity_target(&info);
                    self.entry.exit_code = info.exit.as_ref().and_then(|e| e.exit_code);
                    self.entry.record(None);
                    let offset = info.output_end;
                    self.queue
                        .push_back(sse("exit", Some(offset), &api_info(info)));
                }
                Err(e) => {
                    self.release_held();
                    self.done = true;
                    let error = agent_error(e);
                    self.entry.record(Some(error.to_string()));
                    let detail = ErrorDetail {
                        code: "agent_error".into(),
                        message: error.to_string(),
                    };
                    self.queue.push_back(sse("error", None, &detail));
                }
            }
        }
    }

    fn push_output(&mut self, kind: FrameKind, offset: u64, data: Vec<u8>) {
        if self.encoding == Encoding::Base64 {
            let encoded = base64::engine::general_purpose::STANDARD.encode(&data);
            self.queue
                .push_back(output_event(kind, offset, data.len(), None, Some(encoded)));
            return;
        }
        let (offset, mut data) = match self.held.take() {
            Some((held_kind, held_offset, mut held)) if held_kind == kind => {
                held.extend_from_slice(&data);
                (held_offset, held)
            }
            other => {
                self.held = other;
                self.release_held();
                (offset, data)
            }
        };
        let complete = data.len() - incomplete_utf8_tail(&data);
        if complete < data.len() {
            let tail = data.split_off(complete);
            self.held = Some((kind, offset + complete as u64, tail));
        }
        if !data.is_empty() {
            self.push_text(kind, offset, &data);
        }
    }

    /// Sends the held bytes as they are (invalid UTF-8 becomes U+FFFD).
    fn release_held(&mut self) {
        if let Some((kind, offset, data)) = self.held.take() {
            self.push_text(kind, offset, &data);
        }
    }

    fn push_text(&mut self, kind: FrameKind, offset: u64, data: &[u8]) {
        let text = String::from_utf8_lossy(data).into_owned();
        self.queue
            .push_back(output_event(kind, offset, data.len(), Some(text), None));
    }
}

fn output_event(
    kind: FrameKind,
    offset: u64,
    len: usize,
    text: Option<String>,
    base64: Option<String>,
) -> SseEvent {
    let name = if kind == FrameKind::Stderr {
        "stderr"
    } else {
        "stdout"
    };
    let chunk = OutputChunk {
        offset,
        text,
        base64,
    };
    sse(name, Some(offset + len as u64), &chunk)
}

/// An SSE event whose `id`, when given, is the offset to resume from after it.
fn sse(name: &str, resume_at: Option<u64>, data: &impl serde::Serialize) -> SseEvent {
    let event = SseEvent::default()
        .event(name)
        .data(serde_json::to_string(data).unwrap_or_default());
    match resume_at {
        Some(offset) => event.id(offset.to_string()),
        None => event,
    }
}

/// How many bytes at the end of `data` begin a UTF-8 character that is not complete yet.
fn incomplete_utf8_tail(data: &[u8]) -> usize {
    for back in 1..=data.len().min(3) {
        let byte = data[data.len() - back];
        // Continuation bytes (10xxxxxx) are skipped to find the character's first byte.
        if byte & 0xC0 != 0x80 {
            let needed = match byte {
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF4 => 4,
                _ => 1,
            };
            return if needed > back { back } else { 0 };
        }
    }
    0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TerminalQuery {
    cols: Option<u16>,
    rows: Option<u16>,
    command: Option<String>,
}

/// An interactive terminal over a WebSocket: `/bin/sh` (or `/bin/sh -c COMMAND`) on a new
/// pseudo-terminal. The process is started and attached before the upgrade, so a failure
/// is an ordinary HTTP error; closing the socket before it exits hangs it up.
#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/pty",
    tag = "processes",
    summary = "An interactive terminal over a WebSocket",
    description = "Starts /bin/sh (or `/bin/sh -c COMMAND`) on a new pseudo-terminal and upgrades to a WebSocket: binary messages are the terminal's bytes both ways; text messages are TerminalMessage JSON (`resize` from the client; `started`, `exit` and `error` from the service). A browser, which cannot set `Authorization` on a WebSocket, offers the token as the subprotocol `bearer.<token in unpadded base64url>` beside `sandboxd`. Closing the socket hangs the terminal up.",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("cols" = Option<u16>, Query, description = "The terminal's width (default 80)"),
        ("rows" = Option<u16>, Query, description = "The terminal's height (default 24)"),
        ("command" = Option<String>, Query, description = "A command to run on the terminal instead of an interactive shell")
    ),
    responses(
        (status = 101, description = "Switched to the WebSocket"),
        (status = 400, description = "`invalid_request` or `spawn_failed`; or not a WebSocket upgrade", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session or process", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
async fn terminal(
    State(service): State<Service>,
    Path(id): Path<String>,
    query: Result<Query<TerminalQuery>, axum::extract::rejection::QueryRejection>,
    actor: Actor,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let query = parse_query(query, "`cols`, `rows` and `command`")?;
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::bad_request(
            "not_a_websocket",
            format!("{}; connect with a WebSocket client", rejection.body_text()),
        )
    })?;
    let wants_shell = query.command.is_none();
    let request = StartProcess {
        argv: wants_shell.then(|| vec!["/bin/sh".to_string()]),
        command: query.command,
        pty: true,
        cols: query.cols,
        rows: query.rows,
        ..StartProcess::default()
    };
    let planned = plan(request, &service.config().policy)?;
    let mut entry = start_entry(&service, &id, actor, "pty", &planned.program)?;
    let attached = async {
        // One connection: the start, then the attachment, so no process is left without
        // its terminal for want of a second connection.
        let mut agent = connect(&service, &id).await?;
        let info = start_process(&mut agent, &planned, CONTROL_TIMEOUT)
            .await
            .map_err(|e| match agent_error(e) {
                ApiError::BadRequest {
                    code: "spawn_failed",
                    message,
                } => ApiError::bad_request(
                    "spawn_failed",
                    format!("a terminal runs /bin/sh, and this sandbox cannot run it: {message}"),
                ),
                other => other,
            })?;
        let (output, input) = attach_process(agent, &info.id, 0, true, CONTROL_TIMEOUT)
            .await
            .map_err(agent_error)?;
        Ok((info, output, input))
    };
    let attached = attached.await;
    let (info, output, input) = attached.map_err(|e| entry.fail(e))?;
    Ok(upgrade
        .max_message_size(MAX_TERMINAL_MESSAGE)
        .on_upgrade(move |socket| run_terminal(socket, info, output, input, entry))
        .into_response())
}

async fn run_terminal(
    socket: WebSocket,
    info: proto::ProcessInfo,
    mut output: ProcessOutput<ReadHalf<AgentStream>>,
    mut input: AgentInput<WriteHalf<AgentStream>>,
    mut entry: PendingEntry,
) {
    let (mut to_client, mut from_client) = socket.split();
    let started = TerminalMessage::Started {
        process: api_info(info),
    };
    if send_message(&mut to_client, &started).await.is_err() {
        return;
    }
    let ended = {
        let output = terminal_output(&mut output, &mut to_client, &entry);
        let input = terminal_input(&mut from_client, &mut input, &entry);
        tokio::select! {
            ended = output => Some(ended),
            () = input => None,
        }
    };
    let (last, code) = match ended {
        // The client closed the terminal, a normal end: dropping the attachment hangs the
        // process up.
        None => {
            entry.record(None);
            return;
        }
        Some(Ok(info)) => {
            let exit = info.exit.unwrap_or_default();
            entry.exit_code = exit.exit_code;
            entry.record(None);
            let last = TerminalMessage::Exit {
                exit_code: exit.exit_code,
                signal: exit.signal,
            };
            (last, close_code::NORMAL)
        }
        Some(Err(e)) => {
            let message = e.to_string();
            entry.record(Some(message.clone()));
            let last = TerminalMessage::Error {
                code: "agent_error".into(),
                message,
            };
            (last, close_code::ERROR)
        }
    };
    if send_message(&mut to_client, &last).await.is_ok() {
        let close = CloseFrame {
            code,
            reason: "".into(),
        };
        let _ = to_client.send(Message::Close(Some(close))).await;
    }
}

/// Forwards the terminal's output until the process exits; returns its final state.
async fn terminal_output(
    output: &mut ProcessOutput<ReadHalf<AgentStream>>,
    to_client: &mut (impl Sink<Message> + Unpin),
    entry: &PendingEntry,
) -> Result<proto::ProcessInfo, ApiError> {
    loop {
        match output.next().await.map_err(agent_error)? {
            OutputEvent::Output { data, .. } => {
                entry.touch();
                if to_client.send(Message::Binary(data.into())).await.is_err() {
                    // The client is gone; its side notices and ends the terminal.
                    std::future::pending::<()>().await;
                }
            }
            // A terminal is drawn from its byte stream: nothing can stand in for a gap.
            OutputEvent::Dropped { .. } => {}
            OutputEvent::Exited(info) => return Ok(info),
        }
    }
}

/// Forwards keystrokes and resizes until the client closes the socket.
async fn terminal_input(
    from_client: &mut (impl Stream<Item = Result<Message, axum::Error>> + Unpin),
    input: &mut AgentInput<WriteHalf<AgentStream>>,
    entry: &PendingEntry,
) {
    while let Some(Ok(message)) = from_client.next().await {
        entry.touch();
        let sent = match message {
            Message::Binary(data) => input.send(&data).await,
            Message::Text(text) => match serde_json::from_str(text.as_str()) {
                Ok(TerminalMessage::Resize { cols, rows }) => {
                    match terminal_size(Some(cols), Some(rows)) {
                        Ok(size) => input.resize(size).await,
                        Err(_) => Ok(()),
                    }
                }
                // Text messages are control messages; input comes as binary ones.
                _ => Ok(()),
            },
            Message::Close(_) => return,
            Message::Ping(_) | Message::Pong(_) => Ok(()),
        };
        if sent.is_err() {
            // The agent connection failed: the output side reports it.
            std::future::pending::<()>().await;
        }
    }
}

async fn send_message(
    to_client: &mut (impl Sink<Message> + Unpin),
    message: &TerminalMessage,
) -> Result<(), ()> {
    let text = serde_json::to_string(message).unwrap_or_default();
    to_client
        .send(Message::Text(text.into()))
        .await
        .map_err(|_| ())
}

/// A fresh agent connection for an operation on a running session, which counts as
/// activity.
async fn connect(service: &Service, session_id: &str) -> Result<AgentStream, ApiError> {
    let session = service.sessions().get_running(session_id)?;
    service.sessions().touch(session_id);
    Ok(service.backend().agent(&session.sandbox).await?)
}

fn parse_json<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request("invalid_request", format!("invalid {what}: {e}")))
}

/// The API's error for a failed agent exchange; the agent's own words are passed on, cut
/// short (anything in the sandbox can pose as the agent).
fn agent_error(error: ProtoError) -> ApiError {
    let ProtoError::Agent { code, message } = error else {
        return ApiError::agent_exchange(&error);
    };
    let message = agent_text(&message);
    match code.as_str() {
        proto::ERROR_SPAWN_FAILED => ApiError::bad_request("spawn_failed", message),
        proto::ERROR_BAD_REQUEST => ApiError::bad_request("invalid_request", message),
        proto::ERROR_NO_SUCH_PROCESS => ApiError::NotFound(message),
        proto::ERROR_TOO_MANY_PROCESSES => ApiError::LimitReached {
            code: "too_many_processes",
            message,
        },
        proto::ERROR_TOO_MANY_STREAMS => ApiError::LimitReached {
            code: "too_many_streams",
            message,
        },
        proto::ERROR_STDIN_UNAVAILABLE => ApiError::Conflict {
            code: "stdin_unavailable",
            message,
        },
        proto::ERROR_NOT_A_TERMINAL => ApiError::Conflict {
            code: "not_a_terminal",
            message,
        },
        proto::ERROR_PROCESS_EXITED => ApiError::Conflict {
            code: "process_exited",
            message,
        },
        _ => ApiError::Agent(format!(
            "{}: {message}",
            code.chars().take(64).collect::<String>()
        )),
    }
}

/// The API's view of what the agent reports; the program name is cleaned up again, as the
/// agent's word for it cannot be trusted.
fn api_info(info: proto::ProcessInfo) -> ProcessInfo {
    let started_at = unix_millis(info.started_at_ms);
    let exit = info.exit.as_ref();
    let duration_ms = match exit {
        Some(exit) => exit.duration_ms,
        None => (OffsetDateTime::now_utc() - started_at)
            .whole_milliseconds()
            .clamp(0, u64::MAX.into()) as u64,
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
    activity::program_name(std::slice::from_ref(&info.program))
}

/// Starts the activity entry of an operation on an open session (refused for any other,
/// which gets no entry).
fn start_entry(
    service: &Service,
    session_id: &str,
    actor: Actor,
    action: &'static str,
    target: &str,
) -> Result<PendingEntry, ApiError> {
    service.sessions().get_running(session_id)?;
    Ok(PendingEntry::new(
        service, session_id, actor, action, target,
    ))
}

/// Records how `result` went, naming the process the operation returned.
fn finish_naming(
    entry: &mut PendingEntry,
    result: Result<proto::ProcessInfo, ApiError>,
) -> Result<proto::ProcessInfo, ApiError> {
    if let Ok(info) = &result {
        entry.target = activity_target(info);
    }
    entry.finish(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_tails_are_held_only_when_incomplete() {
        assert_eq!(incomplete_utf8_tail(b"abc"), 0);
        assert_eq!(incomplete_utf8_tail(b""), 0);
        let euro = "€".as_bytes(); // 3 bytes
        assert_eq!(incomplete_utf8_tail(euro), 0);
        assert_eq!(incomplete_utf8_tail(&euro[..1]), 1);
        assert_eq!(incomplete_utf8_tail(&[b'a', euro[0], euro[1]]), 2);
        let emoji = "😀".as_bytes(); // 4 bytes
        assert_eq!(incomplete_utf8_tail(&emoji[..3]), 3);
        // Invalid bytes are not held: they are replaced when sent.
        assert_eq!(incomplete_utf8_tail(&[0xff]), 0);
        assert_eq!(incomplete_utf8_tail(&[0x80, 0x80]), 0);
    }

    #[test]
    fn agent_refusals_map_to_api_errors_and_are_kept_short() {
        let refusal = |code: &str, message: &str| {
            agent_error(ProtoError::Agent {
                code: code.into(),
                message: message.into(),
            })
        };
        assert!(matches!(
            refusal("no_such_process", "x"),
            ApiError::NotFound(_)
        ));
        assert!(matches!(
            refusal("too_many_processes", "x"),
            ApiError::LimitReached {
                code: "too_many_processes",
                ..
            }
        ));
        assert!(matches!(
            refusal("stdin_unavailable", "x"),
            ApiError::Conflict {
                code: "stdin_unavailable",
                ..
            }
        ));
        let long = "y".repeat(10_000);
        match refusal(&long, &long) {
            ApiError::Agent(message) => assert!(message.len() < 1000, "{}", message.len()),
            other => panic!("{other:?}"),
        }
        // A connection the agent dropped means the agent is gone: not an answer of its own.
        assert!(matches!(
            agent_error(ProtoError::Closed),
            ApiError::Backend(sandboxd_backend::BackendError::AgentUnavailable(_))
        ));
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(matches!(
            agent_error(ProtoError::Io(reset)),
            ApiError::Backend(sandboxd_backend::BackendError::AgentUnavailable(_))
        ));
        assert!(matches!(
            agent_error(ProtoError::Timeout(Duration::from_secs(1))),
            ApiError::Agent(_)
        ));
    }

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
    fn start_requests_are_checked_and_default_to_the_longest_timeout() {
        let policy = Policy {
            default_timeout_secs: 60,
            max_timeout_secs: 600,
            max_output_bytes: 1 << 20,
            max_upload_bytes: 1 << 20,
            idle_timeout_secs: 1,
            max_lifetime_secs: 1,
            max_sessions: 1,
            auth_failures_per_minute: 1,
        };
        let start = |request: StartProcess| plan(request, &policy);
        let planned = start(StartProcess {
            command: Some("echo $X".into()),
            ..StartProcess::default()
        })
        .unwrap();
        assert_eq!(planned.command.timeout_ms, 600_000);
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
            Err(ApiError::BadRequest {
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
