//! The process table: the tracked processes, each with its state, found by id.

use super::refusal::Refusal;
use super::ring::Ring;
use crate::sys::{self, EventFd};
use sandboxd_agent_proto::{ErrorCode, ExitReport, ProcessInfo, TermSize};
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Processes tracked at once; when all slots are taken the oldest exited one is forgotten.
const MAX_PROCESSES: usize = 64;

pub(super) static PROCESSES: Mutex<Vec<Arc<Process>>> = Mutex::new(Vec::new());

/// Every lock here guards plain data that stays consistent even if a holder panicked.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn find(id: &str) -> Result<Arc<Process>, Refusal> {
    let found = lock(&PROCESSES).iter().find(|p| p.id == id).cloned();
    found.ok_or_else(|| {
        Refusal::new(
            ErrorCode::NoSuchProcess,
            format!("no process {id:?} in this sandbox (of the exited ones, the {MAX_PROCESSES} most recent are kept)"),
        )
    })
}

/// Forgets the oldest exited process if every slot is taken.
pub(super) fn make_room(processes: &mut Vec<Arc<Process>>) -> Result<(), Refusal> {
    if processes.len() < MAX_PROCESSES {
        return Ok(());
    }
    match processes.iter().position(|p| p.has_exited()) {
        Some(oldest_exited) => {
            processes.remove(oldest_exited);
            Ok(())
        }
        None => Err(Refusal::new(
            ErrorCode::TooManyProcesses,
            format!("{MAX_PROCESSES} processes are running in this sandbox, the most it tracks; stop one before starting another"),
        )),
    }
}

pub(super) struct Process {
    pub(super) id: String,
    /// Also its process group id.
    pub(super) pid: u32,
    pub(super) program: String,
    pub(super) pty: bool,
    pub(super) started_at_ms: u64,
    pub(super) started: Instant,
    pub(super) timeout: Duration,
    /// The stdin pipe (non-blocking), or the terminal's master; none when not enabled or
    /// closed. Held while a write is under way, so writes do not interleave.
    pub(super) stdin: Mutex<Option<File>>,
    /// Whether `stdin` is open, readable while a write holds it.
    pub(super) stdin_open: AtomicBool,
    /// The terminal's master for resizing, until the process exits.
    pub(super) terminal: Mutex<Option<File>>,
    /// Its output waits for its streams rather than being lost; see `ProcessStartRequest`.
    pub(super) paced: bool,
    pub(super) state: Mutex<State>,
}

pub(super) struct State {
    pub(super) output: Ring,
    pub(super) exit: Option<ExitReport>,
    /// Attached streams, woken on new output and on the exit.
    pub(super) watchers: Vec<Arc<EventFd>>,
    /// The offset each attached stream sends next, for a paced process.
    pub(super) cursors: Vec<Arc<AtomicU64>>,
}

impl Process {
    pub(super) fn info(&self) -> ProcessInfo {
        self.info_with(&lock(&self.state))
    }

    pub(super) fn info_with(&self, state: &State) -> ProcessInfo {
        ProcessInfo {
            id: self.id.clone(),
            pid: self.pid,
            program: self.program.clone(),
            pty: self.pty,
            stdin_open: self.stdin_open.load(Ordering::Acquire),
            started_at_ms: self.started_at_ms,
            timeout_ms: self.timeout.as_millis().try_into().unwrap_or(u64::MAX),
            output_start: state.output.start(),
            output_end: state.output.end,
            exit: state.exit.clone(),
        }
    }

    pub(super) fn has_exited(&self) -> bool {
        lock(&self.state).exit.is_some()
    }

    pub(super) fn resize(&self, size: TermSize) -> Result<(), Refusal> {
        if !self.pty {
            let message = format!("process {} has no terminal to resize", self.id);
            return Err(Refusal::new(ErrorCode::NotATerminal, message));
        }
        if size.cols == 0 || size.rows == 0 {
            let message = "a terminal needs at least one column and one row";
            return Err(Refusal::new(ErrorCode::BadRequest, message));
        }
        match &*lock(&self.terminal) {
            Some(terminal) => sys::set_window_size(terminal, size).map_err(|e| {
                Refusal::new(
                    ErrorCode::BadRequest,
                    format!("cannot resize the terminal: {e}"),
                )
            }),
            None => Err(Refusal::new(
                ErrorCode::ProcessExited,
                format!("process {} has exited and its terminal is closed", self.id),
            )),
        }
    }
}
