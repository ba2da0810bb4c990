//! The agent's request table: each [`Request`] to the topic module that answers it. The
//! connections it arrives on are the dialer's and the listener's business, not this file's.
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
        Request::ListDir { path, max_entries } => files::list_dir(c, &path, max_entries),
        Request::ReadFile {
            path,
            unsized_limit,
            max_size,
            max_unallocated,
        } => {
            let limits = files::ReadLimits {
                unsized_limit,
                max_size,
                max_unallocated,
            };
            files::read_file(c, &path, limits)
        }
        Request::WriteFile {
            path,
            max_bytes,
            mode,
        } => files::write_file(c, &path, mode, max_bytes),
        Request::Delete { path, recursive } => files::delete(c, &path, recursive),
        Request::Stat { path } => files::stat(c, &path),
        Request::MakeDir { path, parents } => files::make_dir(c, &path, parents),
        Request::Move {
            from,
            to,
            overwrite,
        } => files::move_path(c, &from, &to, overwrite),
        Request::Watch {
            path,
            recursive,
            max_watches,
        } => files::watch(c, &path, recursive, max_watches),
        Request::ReadArchive { path, max_bytes } => files::read_archive(c, &path, max_bytes),
        Request::WriteArchive { path, max_bytes } => files::write_archive(c, &path, max_bytes),
        Request::ProcessStart(request) => process::start(c, &request),
        Request::ProcessList => process::list(c),
        Request::ProcessAttach {
            id,
            since,
            interactive,
        } => process::attach(c, &id, since, interactive),
        Request::ProcessSignal { id, signal } => process::signal(c, &id, signal),
        Request::ProcessStdin { id, len, close } => process::write_stdin(c, &id, len, close),
        Request::ProcessResize { id, size } => process::resize(c, &id, size),
        Request::KillAll => process::kill_all(c),
        Request::PortConnect { port } => ports::connect(c, port),
        Request::ListPorts { max_ports } => ports::list(c, max_ports),
        Request::KernelRun(request) => kernel::run(c, request),
        Request::KernelShutdown { context } => kernel::shutdown(c, &context),
        Request::KernelList => kernel::list(c),
        Request::KernelDeclare(context) => kernel::declare(c, context),
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
