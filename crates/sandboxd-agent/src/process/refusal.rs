//! Refusals: why a request on a process was refused, and answering with one.

use crate::exec::error_event;
use sandboxd_agent_proto::{write_json, ErrorCode, Event, ProtoError};
use std::os::unix::net::UnixStream;

/// Why a request was refused: the [`Event::Error`] it is answered with.
pub(super) struct Refusal {
    code: ErrorCode,
    message: String,
}

impl Refusal {
    pub(super) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    fn into_event(self) -> Event {
        error_event(self.code, self.message)
    }
}

/// Writes the answer to a request.
pub(super) fn answer(
    connection: &mut UnixStream,
    reply: Result<Event, Refusal>,
) -> Result<(), ProtoError> {
    write_json(connection, &reply.unwrap_or_else(Refusal::into_event))
}
