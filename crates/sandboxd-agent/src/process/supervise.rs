//! Supervising: each process's thread fills its ring, enforces its timeout, records its exit.

use super::table::{lock, Process};
use crate::exec::{self, poll_entry};
use crate::sys;
use sandboxd_agent_proto::{ExitReport, FrameKind, OUTPUT_CHUNK_LEN};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

/// How long a paced process's supervisor waits before looking again for room in the ring.
const PACE_INTERVAL: Duration = Duration::from_millis(10);
/// How much longer than the usual grace a paced process's last output may wait for its
/// streams after it exited.
const PACED_DRAIN_LIMIT: Duration = Duration::from_secs(30);
/// Room a paced process keeps in its ring for what its pipes hold when it exits (a pipe's
/// default capacity each, and a read): that output is taken without waiting.
const PACE_RESERVE: u64 = 2 * 64 * 1024 + OUTPUT_CHUNK_LEN as u64;

impl Process {
    /// Whether its output may be read now: always, unless it is paced and its slowest stream
    /// (or, with none attached, the oldest byte kept) is too far behind.
    fn may_read(&self) -> bool {
        if !self.paced {
            return true;
        }
        let state = lock(&self.state);
        let behind = state
            .cursors
            .iter()
            .map(|c| c.load(Ordering::Acquire))
            .min()
            .unwrap_or(state.output.start());
        let reserve = PACE_RESERVE.min(state.output.capacity() / 2);
        state.output.has_room_after(behind, reserve)
    }

    fn append(&self, kind: FrameKind, data: &[u8]) {
        let mut state = lock(&self.state);
        state.output.push(kind, data);
        state.watchers.iter().for_each(|w| w.notify());
    }

    /// Runs on the process's own thread until it has exited: moves its output into the ring
    /// and kills its group at the timeout, then records the exit.
    pub(super) fn supervise(
        &self,
        mut exit_signal: Option<OwnedFd>,
        mut outputs: Vec<(FrameKind, File)>,
    ) {
        let oom_kills_before = exec::oom_kill_count();
        let deadline = self.started.checked_add(self.timeout);
        let mut timed_out = false;
        let mut buffer = vec![0; OUTPUT_CHUNK_LEN];
        let (status, duration) = loop {
            let now = Instant::now();
            if let Some(status) = self.reap() {
                let duration = self.started.elapsed();
                self.finish_reading(&mut outputs, &mut buffer, now + exec::DRAIN_GRACE);
                break (status, duration);
            }
            let wake_at = match deadline {
                _ if timed_out => None,
                Some(deadline) if now >= deadline => {
                    sys::kill_process_group(self.pid);
                    timed_out = true;
                    continue;
                }
                deadline => deadline,
            };
            let reading = self.may_read();
            // Held back: look again soon, for room or the exit.
            let wake_at = match reading {
                true => wake_at,
                false => {
                    Some(wake_at.map_or(now + PACE_INTERVAL, |at| at.min(now + PACE_INTERVAL)))
                }
            };
            // Without a pidfd the exit is only noticed by checking regularly.
            let wake_at = match exit_signal {
                Some(_) => wake_at,
                None => Some(wake_at.map_or(now + exec::EXIT_CHECK_INTERVAL, |at| {
                    at.min(now + exec::EXIT_CHECK_INTERVAL)
                })),
            };
            // Output not read is left in its pipe, where the process waits on it.
            let mut fds: Vec<libc::pollfd> = outputs
                .iter()
                .map(|(_, pipe)| poll_entry(reading.then_some(pipe), libc::POLLIN))
                .chain([poll_entry(exit_signal.as_ref(), libc::POLLIN)])
                .collect();
            if sys::poll(&mut fds, exec::poll_timeout(wake_at, now)).is_err() {
                thread::sleep(exec::EXIT_CHECK_INTERVAL);
                continue;
            }
            if fds.last().is_some_and(|exit| exit.revents != 0) {
                exit_signal = None;
            }
            self.read_ready(&mut outputs, &fds, &mut buffer);
        };
        let oom_kills_after = exec::oom_kill_count();
        // Closed for good below, once a write in progress has failed on the exit.
        self.stdin_open.store(false, Ordering::Release);
        let mut state = lock(&self.state);
        state.exit = Some(ExitReport {
            exit_code: status.code(),
            signal: status.signal(),
            timed_out,
            oom_killed: exec::oom_killed_between(oom_kills_before, oom_kills_after),
            stdout_bytes: state.output.stdout_bytes,
            stderr_bytes: state.output.stderr_bytes,
            duration_ms: duration.as_millis().try_into().unwrap_or(u64::MAX),
        });
        state.watchers.iter().for_each(|w| w.notify());
        drop(state);
        for (_, output) in outputs {
            if self.pty {
                // Closing the terminal hangs up whatever still uses it.
                drop(output);
            } else {
                // Background children may hold a pipe: it is emptied until they close it.
                exec::drain_in_background(output);
            }
        }
        *lock(&self.terminal) = None;
        *lock(&self.stdin) = None;
    }

    /// The exit status once the process has exited.
    fn reap(&self) -> Option<ExitStatus> {
        match sys::wait_for_exit(self.pid, false) {
            Ok(status) => status,
            // Cannot happen for a child only this thread waits for; never leave it running
            // unsupervised all the same.
            Err(_) => {
                sys::kill_process_group(self.pid);
                sys::wait_for_exit(self.pid, true).ok().flatten()
            }
        }
    }

    /// Reads the outputs poll found ready; drops those that reached their end.
    fn read_ready(
        &self,
        outputs: &mut Vec<(FrameKind, File)>,
        fds: &[libc::pollfd],
        buffer: &mut [u8],
    ) {
        let mut index = 0;
        outputs.retain_mut(|(kind, pipe)| {
            let ready = fds[index].revents != 0;
            index += 1;
            !ready || self.read_once(*kind, pipe, buffer).is_some()
        });
    }

    /// Reads what `pipe` holds into the ring; returns how much, or `None` once it is closed.
    fn read_once(&self, kind: FrameKind, mut pipe: &File, buffer: &mut [u8]) -> Option<usize> {
        match pipe.read(buffer) {
            Ok(0) => None,
            Ok(read) => {
                self.append(kind, &buffer[..read]);
                Some(read)
            }
            // A terminal's master gives EIO once the process side has closed it: its end.
            Err(e) => {
                matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock).then_some(0)
            }
        }
    }

    /// Reads the outputs after the exit: output still held open by background children for
    /// a short grace (until `grace_until`), then, without waiting, what the pipes still
    /// hold. That is the process's own last output, which a supervisor not scheduled in time
    /// during the grace would otherwise leave to be discarded. At most [`exec::MAX_PIPE_BYTES`]
    /// a pipe, so a child writing on cannot hold the exit back.
    fn finish_reading(
        &self,
        outputs: &mut Vec<(FrameKind, File)>,
        buffer: &mut [u8],
        grace_until: Instant,
    ) {
        self.read_until(outputs, buffer, grace_until);
        for (kind, pipe) in outputs.iter() {
            let mut taken = 0;
            while (taken as u64) < exec::MAX_PIPE_BYTES && self.may_read() {
                let mut fds = [poll_entry(Some(pipe), libc::POLLIN)];
                if sys::poll(&mut fds, 0).is_err() || fds[0].revents == 0 {
                    break;
                }
                match self.read_once(*kind, pipe, buffer) {
                    Some(read) if read > 0 => taken += read,
                    _ => break,
                }
            }
        }
    }

    /// Keeps reading the outputs until all are closed or `until`; a paced process's streams
    /// catch up meanwhile, which moves `until` on (by [`PACED_DRAIN_LIMIT`] at the most).
    fn read_until(
        &self,
        outputs: &mut Vec<(FrameKind, File)>,
        buffer: &mut [u8],
        mut until: Instant,
    ) {
        let latest = until + PACED_DRAIN_LIMIT;
        while !outputs.is_empty() {
            let now = Instant::now();
            if now >= until {
                return;
            }
            if !self.may_read() {
                thread::sleep(PACE_INTERVAL);
                until = (until + PACE_INTERVAL).min(latest);
                continue;
            }
            let mut fds: Vec<libc::pollfd> = outputs
                .iter()
                .map(|(_, pipe)| poll_entry(Some(pipe), libc::POLLIN))
                .collect();
            if sys::poll(&mut fds, exec::poll_timeout(Some(until), now)).is_err() {
                return;
            }
            self.read_ready(outputs, &fds, buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ring::Ring;
    use super::super::table::State;
    use super::*;
    use std::io::Write;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::sync::atomic::AtomicBool;
    use std::sync::Mutex;

    fn process(output_limit: u64) -> Process {
        Process {
            id: "p1".into(),
            pid: 0,
            program: "test".into(),
            pty: false,
            started_at_ms: 0,
            started: Instant::now(),
            timeout: Duration::from_secs(1),
            stdin: Mutex::new(None),
            stdin_open: AtomicBool::new(false),
            terminal: Mutex::new(None),
            paced: false,
            state: Mutex::new(State {
                output: Ring::new(output_limit, true),
                exit: None,
                watchers: Vec::new(),
                cursors: Vec::new(),
            }),
        }
    }

    #[test]
    fn what_the_pipe_holds_when_the_grace_has_passed_is_still_read() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        // SAFETY: F_SETPIPE_SZ on a pipe this test owns.
        let sized = unsafe { libc::fcntl(writer.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
        assert!(sized >= 1 << 20, "{}", std::io::Error::last_os_error());
        let total = 900_000 + "the-end".len();
        writer.write_all(&[0; 900_000]).unwrap();
        writer.write_all(b"the-end").unwrap();
        // The writer stays open, as a background child would hold it: the read must not wait
        // for its end.
        let process = process(2 << 20);
        let mut outputs = vec![(FrameKind::Stdout, File::from(OwnedFd::from(reader)))];
        let mut buffer = vec![0; OUTPUT_CHUNK_LEN];
        // As on a loaded host: the grace had passed before the supervisor read anything.
        process.finish_reading(&mut outputs, &mut buffer, Instant::now());
        let state = lock(&process.state);
        assert_eq!(state.output.stdout_bytes, total as u64);
        let mut kept = Vec::new();
        while (kept.len() as u64) < state.output.end {
            let (from, pieces) = state.output.read_from(kept.len() as u64, 1 << 20);
            assert_eq!(from, kept.len() as u64, "nothing dropped");
            kept.extend(pieces.into_iter().flat_map(|(_, data)| data));
        }
        assert_eq!(kept.len(), total);
        assert!(kept.ends_with(b"\0the-end"));
        drop(writer);
    }
}
