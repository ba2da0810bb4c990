//! A process's output as Server-Sent Events: replayed from an offset out of what the agent
//! still holds, then live, until the `exit` event. Text output is sent in whole UTF-8
//! characters; a reconnect with `Last-Event-ID` resumes where it broke off.

use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery, Authenticated, QueryRequest};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use base64::Engine;
use futures_util::Stream;
use sandboxd_api::{ErrorDetail, OutputChunk, OutputDropped, StartProcess};
use sandboxd_core::processes::StreamEvent;
use sandboxd_core::Attachment;
use serde::Deserialize;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// SSE comments keep idle streams open through proxies.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamQuery {
    since: Option<u64>,
    encoding: Option<Encoding>,
}

impl QueryRequest for StreamQuery {
    const TAKES: &'static str = "`since=OFFSET` and `encoding=text|base64`";
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
        ("ticket" = Option<String>, Query, description = "A single-use ticket from POST /v1/sessions/{id}/tickets, instead of the Authorization header (for EventSource)"),
        ("encoding" = Option<String>, Query, description = "`text` (the default: UTF-8, invalid sequences replaced) or `base64`"),
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this event (an offset), as EventSource sends it")
    ),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "`invalid_request`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn stream(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((id, process_id)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<StreamQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok()?.trim().parse().ok());
    let since = query.since.or(last_event_id).unwrap_or(0);
    let attachment = state.core.attach(&caller, &id, &process_id, since).await?;
    Ok(output_stream(
        attachment,
        query.encoding.unwrap_or_default(),
        None,
    ))
}

/// Starts a process and streams its output from its start, as one operation.
#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/processes/run",
    tag = "processes",
    summary = "Start a process and follow its output as Server-Sent Events",
    description = "The start of `POST /v1/sessions/{id}/processes` and the stream of `GET .../processes/{process_id}/stream` in one request, and one activity entry, recorded when the process exits (`interrupted` when SIGINT ended it). The first event is `start` (data: the ProcessInfo), then the stream's events. The process goes on if the client leaves; follow it again with the stream route.",
    params(("id" = String, Path, description = "The session's id")),
    request_body(content = StartProcess, description = "Exactly one of `command` (run by /bin/sh -c) or `argv`"),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "`invalid_request`, `invalid_json`, `invalid_timeout`, `timeout_too_large` or `spawn_failed`", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 1 MiB", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn run(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<StartProcess>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let (info, attachment) = state.core.run_process(&caller, &id, request).await?;
    let start = sse("start", Some(0), &info);
    Ok(output_stream(attachment, Encoding::Text, Some(start)))
}

/// An attachment's events as an SSE answer, after `first` if given.
fn output_stream(
    attachment: Attachment,
    encoding: Encoding,
    first: Option<SseEvent>,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let events = OutputEvents {
        attachment,
        encoding,
        held: None,
        queue: first.into_iter().collect(),
    };
    let events = futures_util::stream::unfold(events, |mut events| async move {
        let event = events.next().await?;
        Some((Ok(event), events))
    });
    Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(KEEPALIVE_INTERVAL)
            .text("keepalive"),
    )
}

/// Turns an attachment's output into SSE events, one agent frame at a time.
struct OutputEvents {
    attachment: Attachment,
    encoding: Encoding,
    /// Text output not sent yet because it ends inside a UTF-8 character: its stream, offset
    /// and bytes. Sent with the next output of its stream, or as it is before anything else.
    held: Option<(bool, u64, Vec<u8>)>,
    /// Events made but not yet sent.
    queue: VecDeque<SseEvent>,
}

impl OutputEvents {
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            match self.attachment.next().await? {
                Ok(StreamEvent::Output {
                    stderr,
                    offset,
                    data,
                }) => self.push_output(stderr, offset, data),
                Ok(StreamEvent::Dropped { offset, bytes }) => {
                    self.release_held();
                    let data = OutputDropped { offset, bytes };
                    self.queue
                        .push_back(sse("dropped", Some(offset + bytes), &data));
                }
                Ok(StreamEvent::Exited(info)) => {
                    self.release_held();
                    let offset = info.output_bytes;
                    self.queue.push_back(sse("exit", Some(offset), &info));
                }
                Err(error) => {
                    self.release_held();
                    let detail = ErrorDetail {
                        code: "agent_error".into(),
                        ..crate::error::detail(&error)
                    };
                    self.queue.push_back(sse("error", None, &detail));
                }
            }
        }
    }

    fn push_output(&mut self, stderr: bool, offset: u64, data: Vec<u8>) {
        if self.encoding == Encoding::Base64 {
            let encoded = base64::engine::general_purpose::STANDARD.encode(&data);
            self.queue.push_back(output_event(
                stderr,
                offset,
                data.len(),
                None,
                Some(encoded),
            ));
            return;
        }
        let (offset, mut data) = match self.held.take() {
            Some((held_stderr, held_offset, mut held)) if held_stderr == stderr => {
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
            self.held = Some((stderr, offset + complete as u64, tail));
        }
        if !data.is_empty() {
            self.push_text(stderr, offset, &data);
        }
    }

    /// Sends the held bytes as they are (invalid UTF-8 becomes U+FFFD).
    fn release_held(&mut self) {
        if let Some((stderr, offset, data)) = self.held.take() {
            self.push_text(stderr, offset, &data);
        }
    }

    fn push_text(&mut self, stderr: bool, offset: u64, data: &[u8]) {
        let text = String::from_utf8_lossy(data).into_owned();
        self.queue
            .push_back(output_event(stderr, offset, data.len(), Some(text), None));
    }
}

fn output_event(
    stderr: bool,
    offset: u64,
    len: usize,
    text: Option<String>,
    base64: Option<String>,
) -> SseEvent {
    let name = if stderr { "stderr" } else { "stdout" };
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

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(stream))
        .routes(routes!(run).layer(DefaultBodyLimit::max(
            crate::routes::processes::START_BODY_LIMIT,
        )))
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
}
