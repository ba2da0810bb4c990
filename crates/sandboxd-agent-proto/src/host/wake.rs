//! Waking an agent that waits for the service to come back (see [`AGENT_WAKE_FILE`]).
//!
//! An agent whose dial failed waits on the FIFO beside its socket instead of retrying every
//! few milliseconds: thousands of agents retrying through a restart kept the restarting
//! service from the CPU for seconds. The agent holds the FIFO open for reading and writing
//! from its start, so a byte written while it dials is kept for its next wait.

use crate::message::AGENT_WAKE_FILE;
use std::ffi::CString;
use std::fs::{self, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Makes the agent's wake FIFO beside `socket` (mode 0600; the caller hands it to the agent's
/// uid) unless one is there; returns its path.
pub fn make_wake_fifo(socket: &Path) -> io::Result<PathBuf> {
    let path = socket.with_file_name(AGENT_WAKE_FILE);
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(ErrorKind::InvalidInput))?;
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call.
    if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } != 0 {
        let error = io::Error::last_os_error();
        let is_fifo = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_fifo());
        if error.kind() != ErrorKind::AlreadyExists || !is_fifo {
            return Err(error);
        }
    }
    Ok(path)
}

/// Tells the agent beside `socket` that the service listens there again: one byte to its wake
/// FIFO. Never blocks and never fails: with no reader (the agent has not started) or a full
/// FIFO (a wake is waiting already) there is nothing to do.
pub fn wake_agent(socket: &Path) {
    let opened = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(socket.with_file_name(AGENT_WAKE_FILE));
    if let Ok(mut fifo) = opened {
        // Only the FIFO is written to: nothing else there is meant for it.
        if fifo.metadata().is_ok_and(|m| m.file_type().is_fifo()) {
            let _ = fifo.write(&[1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_wake_reaches_the_reader_and_never_blocks_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("agent.sock");
        // Nothing to wake: no FIFO, then a FIFO nobody reads.
        wake_agent(&socket);
        let fifo = make_wake_fifo(&socket).unwrap();
        assert_eq!(make_wake_fifo(&socket).unwrap(), fifo, "made once, kept");
        wake_agent(&socket);

        let mut reader = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        wake_agent(&socket);
        wake_agent(&socket);
        let mut bytes = [0; 8];
        assert_eq!(reader.read(&mut bytes).unwrap(), 2, "one byte per wake");
    }

    #[test]
    fn a_file_in_the_fifos_place_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("agent.sock");
        let path = socket.with_file_name(AGENT_WAKE_FILE);
        fs::write(&path, "kept").unwrap();
        assert!(make_wake_fifo(&socket).is_err());
        wake_agent(&socket);
        assert_eq!(fs::read_to_string(&path).unwrap(), "kept");
    }
}
