//! `POST /v1/sessions/{id}/exec` for a client that accepts `text/event-stream`: the same
//! command run to completion, its output also sent as it comes (`output` events), then the
//! `result` that the JSON answer would have been. For a client showing progress (the MCP
//! bridge over stdio); the command still ends when the client goes away, as the stream's end
//! drops it.

use crate::error::ApiError;
use crate::state::AppState;
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use sandboxd_api::{ExecRequest, OutputChunk};
use sandboxd_core::Caller;
use std::convert::Infallible;
use std::future::Future;
use std::task::Poll;
use std::time::Duration;
use tokio::sync::mpsc;

/// SSE comments keep a silent command's stream open through proxies.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);
/// Output chunks waiting to be sent; past that a slow reader misses some `output` events
/// (the `result` holds the output whatever it missed).
const OUTPUT_QUEUE: usize = 32;

/// Whether the request asks for the event stream rather than JSON.
pub fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("text/event-stream"))
}

/// Runs the command, answering with its output as it comes and then its result.
pub async fn streamed(
    state: AppState,
    caller: Caller,
    id: String,
    request: ExecRequest,
) -> Result<Response, ApiError> {
    let (sender, receiver) = mpsc::channel::<Vec<u8>>(OUTPUT_QUEUE);
    let core = state.core.clone();
    let mut exec = Box::pin(async move {
        core.exec_watched(&caller, &id, request, move |data| {
            let _ = sender.try_send(data.to_vec());
        })
        .await
    });
    // What is refused before the command starts (an unknown session, a bad request) is
    // known at the first poll, and answered with its own status.
    let first = futures_util::poll!(&mut exec);
    if let Poll::Ready(Err(error)) = first {
        return Err(error.into());
    }
    let mut finished = match first {
        Poll::Ready(result) => Some(result),
        Poll::Pending => None,
    };
    let mut offset = 0u64;
    let mut receiver = Some(receiver);
    // Output while the command runs, what it sent last, then the ending.
    let events = futures_util::stream::poll_fn(move |context| {
        let Some(queue) = receiver.as_mut() else {
            return Poll::Ready(None);
        };
        let mut data = match queue.poll_recv(context) {
            Poll::Ready(Some(data)) => Some(data),
            _ => None,
        };
        if data.is_none() {
            if finished.is_none() {
                match exec.as_mut().poll(context) {
                    Poll::Ready(result) => finished = Some(result),
                    Poll::Pending => return Poll::Pending,
                }
            }
            // Ended: what it queued before goes first.
            data = queue.try_recv().ok();
        }
        if let Some(data) = data {
            let chunk = OutputChunk {
                offset,
                text: None,
                base64: Some(base64::engine::general_purpose::STANDARD.encode(&data)),
            };
            offset += data.len() as u64;
            return Poll::Ready(Some(Ok::<_, Infallible>(sse("output", &chunk))));
        }
        receiver = None;
        let event = match finished.take().expect("ended") {
            Ok(result) => sse("result", &result),
            Err(error) => sse("failed", &crate::error::detail(&error)),
        };
        Poll::Ready(Some(Ok(event)))
    });
    let events = Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(KEEPALIVE_INTERVAL)
            .text("keepalive"),
    );
    Ok(events.into_response())
}

fn sse(name: &str, data: &impl serde::Serialize) -> SseEvent {
    SseEvent::default()
        .event(name)
        .data(serde_json::to_string(data).unwrap_or_default())
}
