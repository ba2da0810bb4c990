//! Attaching: a connection streams a process's output, within a bounded number of streams.

use super::table::{lock, Process};
use crate::exec::{poll_entry, Input};
use crate::sys::{self, EventFd};
use sandboxd_agent_proto::{
    read_frame, write_frame, write_json, Frame, FrameKind, ProcessEvent, ProcessRequest,
    ProtoError, Request, OUTPUT_CHUNK_LEN,
};
use std::fs::File;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Output streams attached at once. Each holds one of the agent's connections, and the
/// service needs some left for everything else.
pub(super) const MAX_STREAMS: usize = 32;
/// Output copied out of the ring per lock, so a replay never holds up the supervisor long.
const REPLAY_BATCH: usize = 4 * OUTPUT_CHUNK_LEN;

static STREAMS: AtomicUsize = AtomicUsize::new(0);

/// One of the [`MAX_STREAMS`] attach slots, given back when dropped.
pub(super) struct StreamSlot;

impl StreamSlot {
    pub(super) fn take() -> Option<Self> {
        STREAMS
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < MAX_STREAMS).then_some(open + 1)
            })
            .ok()
            .map(|_| StreamSlot)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        STREAMS.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Poll timeouts of [`Attachment::wait`].
#[derive(Clone, Copy)]
enum Wait {
    Forever = -1,
    No = 0,
}

/// A connection streaming one process's output, registered as its watcher while it lives.
pub(super) struct Attachment<'a> {
    process: &'a Process,
    wakeup: Arc<EventFd>,
    /// The offset of the next byte to send.
    cursor: u64,
    /// The same, for a paced process's supervisor to see.
    shared_cursor: Arc<AtomicU64>,
    interactive: bool,
    /// Input from an interactive connection, written as the process makes room.
    input: Input,
}

impl<'a> Attachment<'a> {
    pub(super) fn new(
        process: &'a Process,
        since: u64,
        interactive: bool,
    ) -> Result<Self, ProtoError> {
        let wakeup = Arc::new(EventFd::new()?);
        let shared_cursor = Arc::new(AtomicU64::new(since));
        {
            let mut state = lock(&process.state);
            state.watchers.push(wakeup.clone());
            state.cursors.push(shared_cursor.clone());
        }
        let mut input = Input::default();
        if interactive {
            if let Some(stdin) = &*lock(&process.stdin) {
                input.pipe = Some(stdin.try_clone()?);
            }
        }
        Ok(Self {
            process,
            wakeup,
            cursor: since,
            shared_cursor,
            interactive,
            input,
        })
    }

    pub(super) fn stream(&mut self, connection: &mut UnixStream) -> Result<(), ProtoError> {
        let mut announced = false;
        loop {
            // Cleared before looking, so output appended after the look wakes the wait.
            self.wakeup.clear();
            let (from, pieces, exit) = {
                let state = lock(&self.process.state);
                let (from, pieces) = state.output.read_from(self.cursor, REPLAY_BATCH);
                let done = pieces.is_empty() && state.exit.is_some();
                (from, pieces, done.then(|| self.process.info_with(&state)))
            };
            if from != self.cursor || !announced {
                write_json(connection, &ProcessEvent::OutputFrom { offset: from })?;
                self.cursor = from;
                announced = true;
            }
            for (kind, data) in &pieces {
                write_frame(connection, *kind, data)?;
                self.cursor += data.len() as u64;
            }
            self.shared_cursor.store(self.cursor, Ordering::Release);
            if let Some(info) = exit {
                return write_json(connection, &ProcessEvent::Process(info));
            }
            // Input is taken between batches too, or a Ctrl-C could not stop a flood.
            let wait = if pieces.is_empty() {
                Wait::Forever
            } else {
                Wait::No
            };
            self.wait(connection, wait)?;
        }
    }

    /// Waits for output or the exit (or only looks), meanwhile taking input off an
    /// interactive connection; fails once the connection is gone.
    fn wait(&mut self, connection: &mut UnixStream, wait: Wait) -> Result<(), ProtoError> {
        // Positions in the poll set; the wakeup, in between, only needs to end the wait.
        const CONNECTION: usize = 0;
        const INPUT: usize = 2;
        // While input waits for room in the process's input the connection is not read;
        // poll still reports it hanging up.
        let connection_events = if self.input.accepts_frames() {
            libc::POLLIN
        } else {
            0
        };
        let mut fds = [
            poll_entry(Some(&*connection), connection_events),
            poll_entry(Some(&*self.wakeup), libc::POLLIN),
            poll_entry(None::<&File>, 0),
        ];
        if !self.input.pending.is_empty() {
            fds[INPUT] = poll_entry(self.input.pipe.as_ref(), libc::POLLOUT);
        }
        sys::poll(&mut fds, wait as i32)?;
        let from_service = fds[CONNECTION].revents;
        if from_service & libc::POLLIN != 0 {
            self.take_frame(read_frame(connection)?);
        } else if from_service & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            return Err(ProtoError::Closed);
        }
        if fds[INPUT].revents != 0 {
            self.input.write_pending();
        }
        Ok(())
    }

    /// Input and resizes from an interactive connection; anything else is ignored.
    fn take_frame(&mut self, frame: Frame) {
        if !self.interactive {
            return;
        }
        match frame.kind {
            FrameKind::Json => {
                if let Ok(Request::Process(ProcessRequest::ProcessResize { size, .. })) =
                    frame.parse_json()
                {
                    // Unanswered on a stream; a bad size is simply not applied.
                    let _ = self.process.resize(size);
                }
            }
            _ => self.input.accept(frame),
        }
    }
}

impl Drop for Attachment<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.process.state);
        state.watchers.retain(|w| !Arc::ptr_eq(w, &self.wakeup));
        state
            .cursors
            .retain(|c| !Arc::ptr_eq(c, &self.shared_cursor));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_slots_are_bounded_and_given_back() {
        let slots: Vec<StreamSlot> = std::iter::from_fn(StreamSlot::take).take(100).collect();
        assert_eq!(slots.len(), MAX_STREAMS);
        assert!(StreamSlot::take().is_none());
        drop(slots);
        assert!(StreamSlot::take().is_some());
    }
}
