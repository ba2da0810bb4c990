//! Tracked processes: started by one request, kept by the agent after that connection
//! closes, with their latest output in a ring buffer and their exit status kept after they
//! end. A supervising thread per process reads its output into the ring and enforces its
//! timeout. Any connection can then attach to a process to stream its output (replayed from
//! an offset, then live until the exit), and write its stdin, signal it or resize its
//! terminal; an attach costs the connection's own thread and nothing more.

mod attach;
mod kill_all;
mod refusal;
mod ring;
mod spawn;
mod stdin;
mod supervise;
mod table;

use crate::sys;
use attach::{Attachment, StreamSlot, MAX_STREAMS};
pub use kill_all::kill_all;
use refusal::{answer, Refusal};

use sandboxd_agent_proto::{
    write_json, ErrorCode, Event, ProcessEvent, ProcessRequest, ProcessStartRequest, ProtoError,
    TermSize,
};
use spawn::spawn;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use stdin::{receive_stdin, write_within_stall_limit};
use table::{find, lock, Process, PROCESSES};

/// The table of the tracked-process requests: each to its handler.
pub(crate) fn serve(c: &mut UnixStream, request: ProcessRequest) -> Result<(), ProtoError> {
    match request {
        ProcessRequest::ProcessStart(request) => start(c, &request),
        ProcessRequest::ProcessList => list(c),
        ProcessRequest::ProcessAttach {
            id,
            since,
            interactive,
        } => attach(c, &id, since, interactive),
        ProcessRequest::ProcessSignal { id, signal } => self::signal(c, &id, signal),
        ProcessRequest::ProcessStdin { id, len, close } => write_stdin(c, &id, len, close),
        ProcessRequest::ProcessResize { id, size } => resize(c, &id, size),
        ProcessRequest::KillAll => kill_all(c),
    }
}

/// Answers [`ProcessRequest::ProcessStart`].
pub fn start(connection: &mut UnixStream, request: &ProcessStartRequest) -> Result<(), ProtoError> {
    answer(
        connection,
        spawn(request).map(|p| Event::Process(ProcessEvent::Process(p.info()))),
    )
}

/// Answers [`ProcessRequest::ProcessList`].
pub fn list(connection: &mut UnixStream) -> Result<(), ProtoError> {
    let processes: Vec<Arc<Process>> = lock(&PROCESSES).clone();
    let processes = processes.iter().map(|p| p.info()).collect();
    write_json(connection, &ProcessEvent::ProcessList { processes })
}

/// Answers [`ProcessRequest::ProcessSignal`].
pub fn signal(connection: &mut UnixStream, id: &str, signal: i32) -> Result<(), ProtoError> {
    let reply = find(id).and_then(|process| {
        if !(1..=64).contains(&signal) {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                format!("{signal} is not a signal number"),
            ));
        }
        match sys::signal_process_group(process.pid, signal) {
            Ok(()) => Ok(Event::Process(ProcessEvent::Process(process.info()))),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Err(Refusal::new(
                ErrorCode::ProcessExited,
                format!("process {id} has exited and nothing is left in its process group"),
            )),
            Err(e) => Err(Refusal::new(
                ErrorCode::BadRequest,
                format!("cannot send signal {signal} to process {id}: {e}"),
            )),
        }
    });
    answer(connection, reply)
}

/// Answers [`ProcessRequest::ProcessResize`].
pub fn resize(connection: &mut UnixStream, id: &str, size: TermSize) -> Result<(), ProtoError> {
    let reply = find(id).and_then(|process| {
        process.resize(size)?;
        Ok(Event::Process(ProcessEvent::Process(process.info())))
    });
    answer(connection, reply)
}

/// Answers [`ProcessRequest::ProcessStdin`].
pub fn write_stdin(
    connection: &mut UnixStream,
    id: &str,
    len: u64,
    close: bool,
) -> Result<(), ProtoError> {
    let process = match find(id) {
        Ok(process) => process,
        Err(refusal) => {
            receive_stdin(connection, len, |_| {})?;
            return answer(connection, Err(refusal));
        }
    };
    let mut stdin = lock(&process.stdin);
    let mut outcome = process.check_writable(stdin.as_ref(), close);
    let mut written = 0;
    receive_stdin(connection, len, |data| {
        if let (Ok(()), Some(pipe)) = (&outcome, stdin.as_ref()) {
            if let Err(e) = write_within_stall_limit(pipe, data, &mut written) {
                outcome = Err(Refusal::new(
                    ErrorCode::StdinUnavailable,
                    format!("process {id} took {written} of {len} bytes of input, then {e}"),
                ));
            }
        }
    })?;
    if outcome.is_ok() && close {
        process.stdin_open.store(false, Ordering::Release);
        *stdin = None;
    }
    answer(
        connection,
        outcome.map(|()| Event::Process(ProcessEvent::StdinWritten { bytes: len })),
    )
}

/// Answers [`ProcessRequest::ProcessAttach`]: streams until the process has exited and all its
/// output is sent, or until the connection fails.
pub fn attach(
    connection: &mut UnixStream,
    id: &str,
    since: u64,
    interactive: bool,
) -> Result<(), ProtoError> {
    let process = match find(id) {
        Ok(process) => process,
        Err(refusal) => return answer(connection, Err(refusal)),
    };
    let Some(_slot) = StreamSlot::take() else {
        let message = format!(
            "{MAX_STREAMS} output streams are open in this sandbox, the most it allows; close one first"
        );
        return answer(
            connection,
            Err(Refusal::new(ErrorCode::TooManyStreams, message)),
        );
    };
    let end = process.info().output_end;
    if since > end {
        let message = format!("offset {since} is beyond the {end} bytes process {id} has written");
        return answer(
            connection,
            Err(Refusal::new(ErrorCode::BadRequest, message)),
        );
    }
    let streamed = Attachment::new(&process, since, interactive)
        .and_then(|mut attachment| attachment.stream(connection));
    if streamed.is_err() && interactive && !process.has_exited() {
        // Its terminal went away: hang it up, as closing a terminal window does.
        let _ = sys::signal_process_group(process.pid, libc::SIGHUP);
    }
    streamed
}
