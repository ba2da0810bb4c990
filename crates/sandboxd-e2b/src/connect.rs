//! The Connect protocol as the E2B SDKs speak it to envd: the JSON codec, unary calls and
//! server streams, without compression. Hand-framed because that is all it takes: a unary
//! call is a JSON POST answered with JSON (an error: a Connect status and `{"code",
//! "message"}`); a server stream's request and answer are envelopes (a flags byte, a 4-byte
//! big-endian length, the JSON message), the answer ending with an end-stream envelope (flags
//! 0x02) carrying `{}` or `{"error": {...}}`, always with status 200. (The protocol's Rust
//! crate generates protobuf types from the .proto files; we need neither.)

use crate::errors::{Code, E2bError};
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::mpsc;

/// The largest request message read (stdin data rides in one).
pub const MAX_REQUEST_BYTES: usize = 4 << 20;
/// Envelopes a stream holds for a slow reader before its producer waits.
const STREAM_BUFFER: usize = 16;
const FLAG_COMPRESSED: u8 = 0x01;
const FLAG_END_STREAM: u8 = 0x02;
const ENVELOPE_HEADER: usize = 5;
const UNARY_TYPE: &str = "application/json";
const STREAM_TYPE: &str = "application/connect+json";

/// A unary call's answer: the message, or the error with its Connect status.
pub fn unary(result: Result<serde_json::Value, E2bError>) -> Response {
    match result {
        Ok(message) => (
            [(header::CONTENT_TYPE, HeaderValue::from_static(UNARY_TYPE))],
            message.to_string(),
        )
            .into_response(),
        Err(error) => unary_error(error),
    }
}

fn unary_error(error: E2bError) -> Response {
    let body = error_json(&error);
    (
        error.code.status(),
        [(header::CONTENT_TYPE, HeaderValue::from_static(UNARY_TYPE))],
        body.to_string(),
    )
        .into_response()
}

fn error_json(error: &E2bError) -> serde_json::Value {
    if error.code == Code::Internal || error.code == Code::Unavailable {
        tracing::warn!(code = error.code.name(), message = %error.message, "E2B call failed");
    }
    serde_json::json!({"code": error.code.name(), "message": error.message})
}

/// The request message of a unary call (`streaming` false) or of a server stream (one
/// envelope), read within [`MAX_REQUEST_BYTES`].
pub async fn request<T: DeserializeOwned>(body: Body, streaming: bool) -> Result<T, E2bError> {
    let limited = http_body_util::Limited::new(body, MAX_REQUEST_BYTES + ENVELOPE_HEADER);
    let bytes = limited
        .collect()
        .await
        .map_err(|e| E2bError::invalid(format!("the request could not be read: {e}")))?
        .to_bytes();
    let message = if streaming {
        open_envelope(&bytes)?
    } else {
        &bytes[..]
    };
    let message = if message.is_empty() { b"{}" } else { message };
    serde_json::from_slice(message)
        .map_err(|e| E2bError::invalid(format!("invalid request message: {e}")))
}

fn open_envelope(bytes: &[u8]) -> Result<&[u8], E2bError> {
    let (head, rest) = bytes
        .split_at_checked(ENVELOPE_HEADER)
        .ok_or_else(|| E2bError::invalid("the stream request has no message envelope"))?;
    if head[0] & FLAG_COMPRESSED != 0 {
        return Err(E2bError::new(
            Code::Unimplemented,
            StatusCode::NOT_IMPLEMENTED,
            "compressed messages are not accepted; send them uncompressed",
        ));
    }
    let length = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    rest.get(..length)
        .ok_or_else(|| E2bError::invalid("the stream request's message is cut short"))
}

fn envelope(flags: u8, message: &[u8]) -> Bytes {
    let mut framed = Vec::with_capacity(ENVELOPE_HEADER + message.len());
    framed.push(flags);
    // Answers are bounded by the policy's output limits, MiBs.
    let length = u32::try_from(message.len()).expect("a stream message is below 4 GiB");
    framed.extend_from_slice(&length.to_be_bytes());
    framed.extend_from_slice(message);
    framed.into()
}

/// The sending end of a server stream's answer.
pub struct StreamSender {
    sender: mpsc::Sender<Bytes>,
}

impl StreamSender {
    /// Sends a message; false once the client has gone.
    pub async fn send(&self, message: &impl Serialize) -> bool {
        let json = serde_json::to_vec(message).unwrap_or_default();
        self.sender.send(envelope(0, &json)).await.is_ok()
    }

    /// Ends the stream, with the error that ended it if any.
    pub async fn end(self, error: Option<E2bError>) {
        let trailer = match error {
            None => serde_json::json!({}),
            Some(error) => serde_json::json!({"error": error_json(&error)}),
        };
        let _ = self
            .sender
            .send(envelope(FLAG_END_STREAM, trailer.to_string().as_bytes()))
            .await;
    }

    /// Resolves when the client has gone.
    pub async fn closed(&self) {
        self.sender.closed().await
    }
}

/// A server stream's answer, fed by the returned sender (its producer runs as its own task).
pub fn stream() -> (StreamSender, Response) {
    let (sender, receiver) = mpsc::channel::<Bytes>(STREAM_BUFFER);
    let frames = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let frame = receiver.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(frame), receiver))
    });
    let response = (
        [(header::CONTENT_TYPE, HeaderValue::from_static(STREAM_TYPE))],
        Body::from_stream(frames),
    )
        .into_response();
    (StreamSender { sender }, response)
}

/// A server stream that ends at once with `error`.
pub async fn failed_stream(error: E2bError) -> Response {
    let (sender, response) = stream();
    sender.end(Some(error)).await;
    response
}

/// Whether the request is a server stream's (its envelopes), by its content type.
pub fn is_stream_request(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(STREAM_TYPE))
}
