//! The agent's request table: each [`Request`] to the topic module that answers it, one line
//! per topic (each topic's module holds the table of its own requests, beside their handlers).
//! The connections it arrives on are the dialer's and the listener's business, not this file's.
//!
//! Each handler answers one request on the connection and may stream frames both ways; an
//! `Err` means the connection is unusable, and a refused request is answered with an
//! [`Event::Error`] and is `Ok`.

use crate::{exec, files, kernel, ports, process};
use sandboxd_agent_proto::{write_json, ErrorCode, Event, Frame, Request};
use std::ops::ControlFlow;
use std::os::unix::net::UnixStream;

/// Answers the request in the JSON `frame`: `Continue` when the connection can take another
/// request, `Break` when it is to be closed (dismissed, or broken).
pub(crate) fn answer(connection: &mut UnixStream, frame: &Frame) -> ControlFlow<()> {
    let c = connection;
    let request = match frame.parse_json::<Request>() {
        Ok(request) => request,
        Err(e) => return next(write_json(c, &refusal(e.to_string()))),
    };
    next(match request {
        // Taken like a request that ends with the connection: the service is there.
        Request::Dismiss => return ControlFlow::Break(()),
        Request::Ping => write_json(c, &Event::Pong),
        // Only the first frame of a listening agent's connection (see `listener`).
        Request::Claim { .. } => write_json(c, &refusal("the connection is already claimed")),
        // No upload is in progress (it would have taken the cancel itself).
        Request::Cancel => Ok(()),
        Request::Exec(request) => exec::run(c, &request),
        Request::Files(request) => files::serve(c, request),
        Request::Process(request) => process::serve(c, request),
        Request::Ports(request) => ports::serve(c, request),
        Request::Kernel(request) => kernel::serve(c, request),
    })
}

fn refusal(message: impl Into<String>) -> Event {
    Event::Error {
        code: ErrorCode::BadRequest,
        message: message.into(),
    }
}

/// A broken connection is closed; any other answer leaves it open for the next request.
fn next<E>(answered: Result<(), E>) -> ControlFlow<()> {
    match answered {
        Ok(()) => ControlFlow::Continue(()),
        Err(_) => ControlFlow::Break(()),
    }
}
