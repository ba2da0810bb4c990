//! What every topic of the fake agent speaks: the service's input, and refusals.

use sandboxd_agent_proto::host::{read_frame, write_json};
use sandboxd_agent_proto::{ErrorCode, Event, FrameKind};
use tokio::io::DuplexStream;

/// What the service sent as input.
pub(super) enum Input {
    /// Every stdin frame up to the empty one that ends them.
    Complete(Vec<u8>),
    /// A request came instead (a cancel, e.g. of an upload over its limit).
    Cancelled,
}

pub(super) async fn read_input(stream: &mut DuplexStream) -> Option<Input> {
    let mut input = Vec::new();
    loop {
        let frame = read_frame(stream).await.ok()?;
        if frame.kind == FrameKind::Json {
            return Some(Input::Cancelled);
        }
        if frame.payload.is_empty() {
            return Some(Input::Complete(input));
        }
        input.extend_from_slice(&frame.payload);
    }
}

pub(super) async fn refuse(
    stream: &mut DuplexStream,
    code: ErrorCode,
    message: &str,
) -> Option<()> {
    let error = Event::Error {
        code,
        message: message.into(),
    };
    write_json(stream, &error).await.ok()
}

/// What the fake answers to a request it does not do.
pub(super) async fn unsupported(stream: &mut DuplexStream) -> Option<()> {
    refuse(
        stream,
        ErrorCode::BadRequest,
        "the fake agent does not do that",
    )
    .await
}
