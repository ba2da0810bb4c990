use crate::error_code::ErrorCode;
use crate::limits::MAX_FRAME_LEN;
use std::time::Duration;

/// Everything that can go wrong speaking the agent protocol, on either side of it.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The peer closed the connection between two frames (or the hub was closed).
    #[error("the connection was closed")]
    Closed,
    #[error("a frame of {len} bytes is over the {MAX_FRAME_LEN}-byte limit")]
    FrameTooLarge { len: u64 },
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("malformed JSON message: {0}")]
    BadJson(#[from] serde_json::Error),
    #[error("unexpected message: {0}")]
    Unexpected(String),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The agent answered with an `Error` event.
    #[error("agent error {code}: {message}")]
    Agent { code: ErrorCode, message: String },
}
