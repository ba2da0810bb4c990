//! Background processes: start one, follow its output as it is produced (the Server-Sent
//! Events stream, base64 so that bytes stay bytes), write its stdin, signal it.

use crate::client::Client;
use crate::error::ClientError;
use base64::Engine;
use futures_util::{Stream, StreamExt};
use reqwest::Method;
use sandboxd_api::{
    ErrorDetail, InputWritten, OutputChunk, OutputDropped, ProcessInfo, SignalRequest, SignalSpec,
    StartProcess,
};
use std::pin::Pin;
use std::time::Duration;

/// The longest silence accepted on an output stream: the service sends a keepalive every
/// 15 s, so this much without a byte means it stopped answering.
const STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a process's output stream carries, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputEvent {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    /// Output that left the service's buffer before it could be sent.
    Dropped(u64),
    /// The process exited; the last event.
    Exit(ProcessInfo),
}

pub(crate) type Events =
    Pin<Box<dyn Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>>;

/// A response's Server-Sent Events, bounded by its silences rather than its length.
pub(crate) fn sse_events(response: reqwest::Response) -> Events {
    let chunks = futures_util::stream::unfold(response, |mut response| async move {
        let chunk = match tokio::time::timeout(STREAM_IDLE_TIMEOUT, response.chunk()).await {
            Ok(Ok(Some(chunk))) => Ok(chunk),
            Ok(Ok(None)) => return None,
            Ok(Err(e)) => Err(std::io::Error::other(e)),
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the output stream was silent for {STREAM_IDLE_TIMEOUT:?}"),
            )),
        };
        Some((chunk, response))
    });
    Box::pin(sse_stream::SseStream::from_bytes_stream(chunks))
}

/// A process's output, event by event.
pub struct OutputStream {
    events: Events,
    base_url: String,
}

impl std::fmt::Debug for OutputStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputStream").finish_non_exhaustive()
    }
}

impl Client {
    /// `POST /v1/sessions/{id}/processes`: starts a background process.
    pub async fn start_process(
        &self,
        id: &str,
        request: &StartProcess,
    ) -> Result<ProcessInfo, ClientError> {
        let request = self
            .request(Method::POST, &["sessions", id, "processes"])
            .json(request);
        self.send(request).await
    }

    /// `GET /v1/sessions/{id}/processes/{process_id}/stream?encoding=base64`: its output from
    /// the start, then live, until it exits.
    pub async fn process_output(
        &self,
        id: &str,
        process_id: &str,
    ) -> Result<OutputStream, ClientError> {
        let request = self
            .untimed_request(
                Method::GET,
                &["sessions", id, "processes", process_id, "stream"],
            )
            .query(&[("encoding", "base64")]);
        // Only the answer's head is timed here; the body is bounded by its silences.
        let response =
            match tokio::time::timeout(self.request_timeout, self.response(request)).await {
                Ok(response) => response?,
                Err(_) => return Err(self.timed_out()),
            };
        Ok(OutputStream {
            events: sse_events(response),
            base_url: self.base_url().to_string(),
        })
    }

    /// `POST .../processes/{process_id}/stdin`: writes bytes to its stdin.
    pub async fn write_process_stdin(
        &self,
        id: &str,
        process_id: &str,
        data: Vec<u8>,
    ) -> Result<InputWritten, ClientError> {
        let request = self
            .request(
                Method::POST,
                &["sessions", id, "processes", process_id, "stdin"],
            )
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(data);
        self.send(request).await
    }

    /// `POST .../processes/{process_id}/stdin/close`: its stdin reads end-of-file.
    pub async fn close_process_stdin(
        &self,
        id: &str,
        process_id: &str,
    ) -> Result<InputWritten, ClientError> {
        let segments = ["sessions", id, "processes", process_id, "stdin", "close"];
        self.send(self.request(Method::POST, &segments)).await
    }

    /// `POST .../processes/{process_id}/signal`: signals its process group.
    pub async fn signal_process(
        &self,
        id: &str,
        process_id: &str,
        signal: i32,
    ) -> Result<ProcessInfo, ClientError> {
        let body = SignalRequest {
            signal: SignalSpec::Number(signal),
        };
        let segments = ["sessions", id, "processes", process_id, "signal"];
        self.send(self.request(Method::POST, &segments).json(&body))
            .await
    }
}

impl OutputStream {
    /// The next event; `None` when the stream ended without an exit (the service went away).
    pub async fn next(&mut self) -> Result<Option<OutputEvent>, ClientError> {
        loop {
            let Some(event) = self.events.next().await else {
                return Ok(None);
            };
            let event = event.map_err(|e| self.broken(&e.to_string()))?;
            let (Some(name), Some(data)) = (event.event.as_deref(), event.data.as_deref()) else {
                continue;
            };
            return match name {
                "stdout" | "stderr" => {
                    let chunk: OutputChunk = self.parse(data)?;
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(chunk.base64.unwrap_or_default())
                        .map_err(|e| self.unexpected(&format!("output that is not base64: {e}")))?;
                    Ok(Some(if name == "stdout" {
                        OutputEvent::Stdout(bytes)
                    } else {
                        OutputEvent::Stderr(bytes)
                    }))
                }
                "dropped" => {
                    let dropped: OutputDropped = self.parse(data)?;
                    Ok(Some(OutputEvent::Dropped(dropped.bytes)))
                }
                "exit" => Ok(Some(OutputEvent::Exit(self.parse(data)?))),
                "error" => {
                    let error: ErrorDetail = self.parse(data)?;
                    Err(ClientError::Api {
                        status: 502,
                        code: error.code,
                        message: error.message,
                        remedy: None,
                    })
                }
                _ => continue,
            };
        }
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, data: &str) -> Result<T, ClientError> {
        serde_json::from_str(data)
            .map_err(|e| self.unexpected(&format!("an event that is not the API's JSON: {e}")))
    }

    fn unexpected(&self, detail: &str) -> ClientError {
        ClientError::UnexpectedResponse {
            url: self.base_url.clone(),
            status: 200,
            detail: detail.to_string(),
        }
    }

    fn broken(&self, cause: &str) -> ClientError {
        if cause.contains("silent for") {
            return ClientError::Timeout {
                url: self.base_url.clone(),
                cause: cause.to_string(),
            };
        }
        ClientError::Transport {
            url: self.base_url.clone(),
            cause: cause.to_string(),
        }
    }
}
