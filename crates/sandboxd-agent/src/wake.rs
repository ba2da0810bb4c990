//! Waiting for the service to come back after a failed dial, and for its asking for one more
//! connection than the spares.
//!
//! The service writes a byte to the FIFO beside the socket ([`AGENT_WAKE_FILE`]) once it
//! listens there again, so a dialer waits on it rather than retrying every few milliseconds:
//! thousands of agents retrying through a restart kept the restarting service from the CPU.
//! While the agent is connected, a byte there asks it for one more connection: the service
//! writes one when it finds no spare, since it may still hold connections the agent counts
//! as spares.

use crate::sys;
use crate::sys::EventFd;
use sandboxd_agent_proto::AGENT_WAKE_FILE;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The shortest wait for the service's word: it is only the backstop for a word lost (any
/// sandbox process may read the FIFO too), and thousands of agents retrying this often cost
/// the host little.
const FALLBACK_MIN: Duration = Duration::from_secs(6);
/// Spread of the wait beyond [`FALLBACK_MIN`], so agents that lost the service together do
/// not retry together.
const FALLBACK_SPREAD: Duration = Duration::from_secs(4);
/// Bytes read per wake: a sandbox process writing in a loop cannot keep the agent reading.
const DRAIN_BYTES: usize = 64;
/// Pause after a wake, so such a writer cannot make the agent dial in a tight loop either.
const AFTER_WAKE: Duration = Duration::from_millis(5);

/// The wake FIFO, when the service made one.
pub struct Wake {
    fifo: Option<File>,
}

impl Wake {
    /// Opens the FIFO beside `socket` for reading and writing: with a writer always there it
    /// never reports a hang-up, and the service's non-blocking write always finds a reader.
    /// Opened at start, so a byte written while the agent dials waits for its next wait.
    pub fn open(socket: &Path) -> Wake {
        let fifo = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(socket.with_file_name(AGENT_WAKE_FILE))
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.file_type().is_fifo()));
        Wake { fifo }
    }

    /// Waits for the service's word, at most a spread fallback; without a FIFO (a service
    /// that made none), for `retry_delay`. Whether the word was not there already: the
    /// service was away.
    pub fn wait(&self, retry_delay: impl FnOnce() -> Duration) -> bool {
        let Some(fifo) = &self.fifo else {
            thread::sleep(retry_delay());
            return true;
        };
        let mut fds = [poll_entry(fifo.as_raw_fd())];
        let readable = |fds: &mut [libc::pollfd; 1], timeout: Duration| {
            sys::poll(fds, i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX)).is_ok()
                && fds[0].revents & libc::POLLIN != 0
        };
        let there = readable(&mut fds, Duration::ZERO);
        if there || readable(&mut fds, FALLBACK_MIN + spread(FALLBACK_SPREAD)) {
            self.take_word();
        }
        !there
    }

    /// Waits for `other` to be notified, for a byte on the FIFO (returns `true`: the service
    /// asks for a connection), or until `until`.
    pub fn wait_beside(&self, other: &EventFd, until: Option<Instant>) -> bool {
        let timeout = crate::exec::poll_timeout(until, Instant::now());
        let mut fds = [
            poll_entry(other.as_raw_fd()),
            poll_entry(self.fifo.as_ref().map_or(-1, |f| f.as_raw_fd())),
        ];
        if sys::poll(&mut fds, timeout).is_err() || fds[1].revents & libc::POLLIN == 0 {
            return false;
        }
        self.take_word();
        true
    }

    /// Reads the bytes written to the FIFO, then pauses: a sandbox process writing in a loop
    /// can neither keep the agent reading nor make it dial in a tight loop.
    fn take_word(&self) {
        self.forget_words();
        thread::sleep(AFTER_WAKE);
    }

    /// Reads the bytes written to the FIFO so far, if any (the FIFO does not block).
    pub fn forget_words(&self) {
        if let Some(fifo) = &self.fifo {
            let _ = (&*fifo).read(&mut [0; DRAIN_BYTES]);
        }
    }
}

/// Polled for input; a negative descriptor is left out by poll.
fn poll_entry(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// A duration in [0, `max`), different from agent to agent and call to call, so agents that
/// act on the same event do not act at once: any varying number will do, no need for
/// randomness.
pub fn spread(max: Duration) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let varying = nanos ^ std::process::id().wrapping_mul(2_654_435_761);
    let max_ms = u32::try_from(max.as_millis()).unwrap_or(u32::MAX).max(1);
    Duration::from_millis(u64::from(varying % max_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Instant;

    #[test]
    fn a_byte_ends_the_wait_and_without_a_fifo_the_retry_delay_is_slept() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("agent.sock");
        let without = Wake::open(&socket);
        let started = Instant::now();
        without.wait(|| Duration::from_millis(20));
        assert!(started.elapsed() >= Duration::from_millis(20));

        let fifo = socket.with_file_name(AGENT_WAKE_FILE);
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let wake = Wake::open(&socket);
        let mut writer = OpenOptions::new().write(true).open(&fifo).unwrap();
        writer.write_all(&[1]).unwrap();
        let started = Instant::now();
        wake.wait(|| unreachable!("a FIFO is there"));
        assert!(started.elapsed() < FALLBACK_MIN, "the byte woke it");
    }
}
