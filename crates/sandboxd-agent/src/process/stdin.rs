//! Writing a process's stdin: the data taken off the connection, into its pipe or terminal.

use super::refusal::Refusal;
use super::table::Process;
use crate::exec::poll_entry;
use crate::sys;
use sandboxd_agent_proto::{read_frame, ErrorCode, FrameKind, ProtoError};
use std::fs::File;
use std::io::{self, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// How long a stdin write waits for the process to make room before giving up.
const STDIN_STALL_LIMIT: Duration = Duration::from_secs(5);

impl Process {
    /// Whether a write to its stdin may start: it is open and, with `close`, closable.
    pub(super) fn check_writable(&self, stdin: Option<&File>, close: bool) -> Result<(), Refusal> {
        if stdin.is_none() {
            let message = format!(
                "the stdin of process {} is not open: start it with \"stdin\": true, and write before closing it",
                self.id
            );
            return Err(Refusal::new(ErrorCode::StdinUnavailable, message));
        }
        if close && self.pty {
            let message =
                "a terminal's input cannot be closed; send Ctrl-D (byte 4) or a signal instead";
            return Err(Refusal::new(ErrorCode::StdinUnavailable, message));
        }
        Ok(())
    }
}

/// Takes the `len` bytes of stdin frames that follow a stdin request off the connection,
/// whatever becomes of them, so it stays in step for the next request.
pub(super) fn receive_stdin(
    connection: &mut UnixStream,
    len: u64,
    mut each: impl FnMut(&[u8]),
) -> Result<(), ProtoError> {
    let mut remaining = len;
    while remaining > 0 {
        let frame = read_frame(connection)?;
        let size = frame.payload.len() as u64;
        if frame.kind != FrameKind::Stdin || size == 0 || size > remaining {
            return Err(ProtoError::Unexpected(format!(
                "a {:?} frame of {size} bytes where {remaining} bytes of stdin were due",
                frame.kind
            )));
        }
        remaining -= size;
        each(&frame.payload);
    }
    Ok(())
}

/// Writes all of `data` to a non-blocking pipe, counting into `written`; fails if the
/// reader makes no room for [`STDIN_STALL_LIMIT`] or has closed its end.
pub(super) fn write_within_stall_limit(
    mut pipe: &File,
    data: &[u8],
    written: &mut u64,
) -> io::Result<()> {
    let mut rest = data;
    while !rest.is_empty() {
        match pipe.write(rest) {
            Ok(count) => {
                rest = &rest[count..];
                *written += count as u64;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let mut fds = [poll_entry(Some(pipe), libc::POLLOUT)];
                let stall_ms = i32::try_from(STDIN_STALL_LIMIT.as_millis()).unwrap_or(i32::MAX);
                sys::poll(&mut fds, stall_ms)?;
                if fds[0].revents == 0 {
                    return Err(io::Error::new(
                        ErrorKind::TimedOut,
                        format!("did not read for {} s", STDIN_STALL_LIMIT.as_secs()),
                    ));
                }
            }
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                return Err(io::Error::new(e.kind(), "closed its stdin"))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
