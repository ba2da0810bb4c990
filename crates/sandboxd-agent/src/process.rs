//! Tracked processes: started by one request, kept by the agent after that connection
//! closes, with their latest output in a ring buffer and their exit status kept after they
//! end. A supervising thread per process reads its output into the ring and enforces its
//! timeout. Any connection can then attach to a process to stream its output (replayed from
//! an offset, then live until the exit), and write its stdin, signal it or resize its
//! terminal; an attach costs the connection's own thread and nothing more.

use crate::exec::{self, error_event, poll_entry, Input};
use crate::sys::{self, EventFd};
use sandboxd_agent_proto::{
    read_frame, write_frame, write_json, Event, ExitReport, Frame, FrameKind, ProcessInfo,
    ProcessStartRequest, ProtoError, Request, TermSize, ERROR_BAD_REQUEST, ERROR_NOT_A_TERMINAL,
    ERROR_NO_SUCH_PROCESS, ERROR_PROCESS_EXITED, ERROR_SPAWN_FAILED, ERROR_STDIN_UNAVAILABLE,
    ERROR_TOO_MANY_PROCESSES, ERROR_TOO_MANY_STREAMS, OUTPUT_CHUNK_LEN,
};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

/// Processes tracked at once; when all slots are taken the oldest exited one is forgotten.
const MAX_PROCESSES: usize = 64;
/// Output streams attached at once. Each holds one of the agent's connections, and the
/// service needs some left for everything else.
const MAX_STREAMS: usize = 32;
/// How long a stdin write waits for the process to make room before giving up.
const STDIN_STALL_LIMIT: Duration = Duration::from_secs(5);
/// Output copied out of the ring per lock, so a replay never holds up the supervisor long.
const REPLAY_BATCH: usize = 4 * OUTPUT_CHUNK_LEN;
/// Bookkeeping charged per ring chunk, so a flood of tiny writes cannot outgrow the budget.
const CHUNK_OVERHEAD: u64 = 64;
/// Supervisors keep their read buffer on the heap.
const SUPERVISOR_STACK_SIZE: usize = 128 * 1024;

static PROCESSES: Mutex<Vec<Arc<Process>>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static STREAMS: AtomicUsize = AtomicUsize::new(0);

/// Why a request was refused: the [`Event::Error`] it is answered with.
struct Refusal {
    code: &'static str,
    message: String,
}

impl Refusal {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
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
fn answer(connection: &mut UnixStream, reply: Result<Event, Refusal>) -> Result<(), ProtoError> {
    write_json(connection, &reply.unwrap_or_else(Refusal::into_event))
}

/// Every lock here guards plain data that stays consistent even if a holder panicked.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Answers [`Request::ProcessStart`].
pub fn start(connection: &mut UnixStream, request: &ProcessStartRequest) -> Result<(), ProtoError> {
    answer(connection, spawn(request).map(|p| Event::Process(p.info())))
}

/// Answers [`Request::ProcessList`].
pub fn list(connection: &mut UnixStream) -> Result<(), ProtoError> {
    let processes: Vec<Arc<Process>> = lock(&PROCESSES).clone();
    let processes = processes.iter().map(|p| p.info()).collect();
    write_json(connection, &Event::ProcessList { processes })
}

/// Answers [`Request::ProcessSignal`].
pub fn signal(connection: &mut UnixStream, id: &str, signal: i32) -> Result<(), ProtoError> {
    let reply = find(id).and_then(|process| {
        if !(1..=64).contains(&signal) {
            return Err(Refusal::new(
                ERROR_BAD_REQUEST,
                format!("{signal} is not a signal number"),
            ));
        }
        match sys::signal_process_group(process.pid, signal) {
            Ok(()) => Ok(Event::Process(process.info())),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Err(Refusal::new(
                ERROR_PROCESS_EXITED,
                format!("process {id} has exited and nothing is left in its process group"),
            )),
            Err(e) => Err(Refusal::new(
                ERROR_BAD_REQUEST,
                format!("cannot send signal {signal} to process {id}: {e}"),
            )),
        }
    });
    answer(connection, reply)
}

/// Answers [`Request::ProcessResize`].
pub fn resize(connection: &mut UnixStream, id: &str, size: TermSize) -> Result<(), ProtoError> {
    let reply = find(id).and_then(|process| {
        process.resize(size)?;
        Ok(Event::Process(process.info()))
    });
    answer(connection, reply)
}

/// Answers [`Request::ProcessStdin`].
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
                    ERROR_STDIN_UNAVAILABLE,
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
        outcome.map(|()| Event::StdinWritten { bytes: len }),
    )
}

/// Takes the `len` bytes of stdin frames that follow a stdin request off the connection,
/// whatever becomes of them, so it stays in step for the next request.
fn receive_stdin(
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
fn write_within_stall_limit(mut pipe: &File, data: &[u8], written: &mut u64) -> io::Result<()> {
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
                let stall_ms = STDIN_STALL_LIMIT.as_millis() as i32;
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

/// Answers [`Request::ProcessAttach`]: streams until the process has exited and all its
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
            Err(Refusal::new(ERROR_TOO_MANY_STREAMS, message)),
        );
    };
    let end = process.info().output_end;
    if since > end {
        let message = format!("offset {since} is beyond the {end} bytes process {id} has written");
        return answer(connection, Err(Refusal::new(ERROR_BAD_REQUEST, message)));
    }
    let streamed = Attachment::new(&process, since, interactive)
        .and_then(|mut attachment| attachment.stream(connection));
    if streamed.is_err() && interactive && !process.has_exited() {
        // Its terminal went away: hang it up, as closing a terminal window does.
        let _ = sys::signal_process_group(process.pid, libc::SIGHUP);
    }
    streamed
}

fn find(id: &str) -> Result<Arc<Process>, Refusal> {
    let found = lock(&PROCESSES).iter().find(|p| p.id == id).cloned();
    found.ok_or_else(|| {
        Refusal::new(
            ERROR_NO_SUCH_PROCESS,
            format!("no process {id:?} in this sandbox (of the exited ones, the {MAX_PROCESSES} most recent are kept)"),
        )
    })
}

fn spawn(request: &ProcessStartRequest) -> Result<Arc<Process>, Refusal> {
    let command = &request.command;
    let Some(program) = command.argv.first() else {
        return Err(Refusal::new(ERROR_BAD_REQUEST, "argv is empty"));
    };
    if request
        .pty
        .is_some_and(|size| size.cols == 0 || size.rows == 0)
    {
        let message = "a terminal needs at least one column and one row";
        return Err(Refusal::new(ERROR_BAD_REQUEST, message));
    }
    // Held until the process is registered, so two starts cannot both take the last slot.
    let mut processes = lock(&PROCESSES);
    make_room(&mut processes)?;
    let spawned = match request.pty {
        None => spawn_with_pipes(request),
        Some(size) => spawn_on_terminal(request, size),
    };
    let (child, outputs, stdin, terminal) = spawned.map_err(|e| {
        Refusal::new(
            ERROR_SPAWN_FAILED,
            exec::spawn_failure(program, command, &e),
        )
    })?;
    let process = Arc::new(Process {
        id: format!("p{}", NEXT_ID.fetch_add(1, Ordering::Relaxed)),
        pid: child.id(),
        program: request.program.clone(),
        pty: request.pty.is_some(),
        started_at_ms: unix_millis(SystemTime::now()),
        started: Instant::now(),
        timeout: Duration::from_millis(command.timeout_ms),
        stdin_open: AtomicBool::new(stdin.is_some()),
        stdin: Mutex::new(stdin),
        terminal: Mutex::new(terminal),
        state: Mutex::new(State {
            output: Ring::new(command.output_limit),
            exit: None,
            watchers: Vec::new(),
        }),
    });
    let supervised = process.clone();
    let supervisor = thread::Builder::new()
        .name("process".into())
        .stack_size(SUPERVISOR_STACK_SIZE)
        .spawn(move || supervised.supervise(child, outputs));
    if let Err(e) = supervisor {
        // The child went with the closure; its group must not run unsupervised.
        sys::kill_process_group(process.pid);
        let message = format!("cannot supervise {program:?}: {e}");
        return Err(Refusal::new(ERROR_SPAWN_FAILED, message));
    }
    processes.push(process.clone());
    Ok(process)
}

/// Forgets the oldest exited process if every slot is taken.
fn make_room(processes: &mut Vec<Arc<Process>>) -> Result<(), Refusal> {
    if processes.len() < MAX_PROCESSES {
        return Ok(());
    }
    match processes.iter().position(|p| p.has_exited()) {
        Some(oldest_exited) => {
            processes.remove(oldest_exited);
            Ok(())
        }
        None => Err(Refusal::new(
            ERROR_TOO_MANY_PROCESSES,
            format!("{MAX_PROCESSES} processes are running in this sandbox, the most it tracks; stop one before starting another"),
        )),
    }
}

/// A spawned child, its output (kind and pipe or terminal master), its stdin for writing
/// and its terminal for resizing.
type Spawned = (Child, Vec<(FrameKind, File)>, Option<File>, Option<File>);

fn spawn_with_pipes(request: &ProcessStartRequest) -> io::Result<Spawned> {
    let mut child = exec::command(&request.command).spawn()?;
    let stdout = child
        .stdout
        .take()
        .map(|pipe| (FrameKind::Stdout, file(pipe)));
    let stderr = child
        .stderr
        .take()
        .map(|pipe| (FrameKind::Stderr, file(pipe)));
    let outputs = stdout.into_iter().chain(stderr).collect();
    let stdin = child.stdin.take().map(file);
    if let Some(stdin) = &stdin {
        // Written only as the process makes room, so it can never block the agent.
        if let Err(e) = sys::set_nonblocking(stdin) {
            abandon(child);
            return Err(e);
        }
    }
    Ok((child, outputs, stdin, None))
}

fn file(pipe: impl Into<OwnedFd>) -> File {
    File::from(pipe.into())
}

fn spawn_on_terminal(request: &ProcessStartRequest, size: TermSize) -> io::Result<Spawned> {
    let (master, slave) = sys::open_pty(size)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot allocate a terminal: {e}")))?;
    let child = {
        let mut command = exec::program(&request.command);
        command
            .stdin(slave.try_clone()?)
            .stdout(slave.try_clone()?)
            .stderr(slave);
        // SAFETY: the hook makes only async-signal-safe system calls (setsid, ioctl).
        unsafe { command.pre_exec(sys::take_controlling_terminal) };
        // The command, and with it the agent's copies of the slave, is dropped right after,
        // so the master reads end-of-file once the process side has closed the terminal.
        command.spawn()?
    };
    let spawned = sys::set_nonblocking(&master).and_then(|()| {
        let input = master.try_clone()?;
        let terminal = master.try_clone()?;
        Ok((
            vec![(FrameKind::Stdout, master)],
            Some(input),
            Some(terminal),
        ))
    });
    match spawned {
        Ok((outputs, stdin, terminal)) => Ok((child, outputs, stdin, terminal)),
        Err(e) => {
            abandon(child);
            Err(e)
        }
    }
}

/// Kills and reaps a child that cannot be supervised.
fn abandon(mut child: Child) {
    sys::kill_process_group(child.id());
    let _ = child.wait();
}

fn unix_millis(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis().try_into().unwrap_or(u64::MAX))
}

struct Process {
    id: String,
    /// Also its process group id.
    pid: u32,
    program: String,
    pty: bool,
    started_at_ms: u64,
    started: Instant,
    timeout: Duration,
    /// The stdin pipe (non-blocking), or the terminal's master; none when not enabled or
    /// closed. Held while a write is under way, so writes do not interleave.
    stdin: Mutex<Option<File>>,
    /// Whether `stdin` is open, readable while a write holds it.
    stdin_open: AtomicBool,
    /// The terminal's master for resizing, until the process exits.
    terminal: Mutex<Option<File>>,
    state: Mutex<State>,
}

struct State {
    output: Ring,
    exit: Option<ExitReport>,
    /// Attached streams, woken on new output and on the exit.
    watchers: Vec<Arc<EventFd>>,
}

impl Process {
    fn info(&self) -> ProcessInfo {
        self.info_with(&lock(&self.state))
    }

    fn info_with(&self, state: &State) -> ProcessInfo {
        ProcessInfo {
            id: self.id.clone(),
            pid: self.pid,
            program: self.program.clone(),
            pty: self.pty,
            stdin_open: self.stdin_open.load(Ordering::Acquire),
            started_at_ms: self.started_at_ms,
            timeout_ms: self.timeout.as_millis().try_into().unwrap_or(u64::MAX),
            output_start: state.output.start,
            output_end: state.output.end,
            exit: state.exit.clone(),
        }
    }

    /// Whether a write to its stdin may start: it is open and, with `close`, closable.
    fn check_writable(&self, stdin: Option<&File>, close: bool) -> Result<(), Refusal> {
        if stdin.is_none() {
            let message = format!(
                "the stdin of process {} is not open: start it with \"stdin\": true, and write before closing it",
                self.id
            );
            return Err(Refusal::new(ERROR_STDIN_UNAVAILABLE, message));
        }
        if close && self.pty {
            let message =
                "a terminal's input cannot be closed; send Ctrl-D (byte 4) or a signal instead";
            return Err(Refusal::new(ERROR_STDIN_UNAVAILABLE, message));
        }
        Ok(())
    }

    fn has_exited(&self) -> bool {
        lock(&self.state).exit.is_some()
    }

    fn resize(&self, size: TermSize) -> Result<(), Refusal> {
        if !self.pty {
            let message = format!("process {} has no terminal to resize", self.id);
            return Err(Refusal::new(ERROR_NOT_A_TERMINAL, message));
        }
        if size.cols == 0 || size.rows == 0 {
            let message = "a terminal needs at least one column and one row";
            return Err(Refusal::new(ERROR_BAD_REQUEST, message));
        }
        match &*lock(&self.terminal) {
            Some(terminal) => sys::set_window_size(terminal, size).map_err(|e| {
                Refusal::new(
                    ERROR_BAD_REQUEST,
                    format!("cannot resize the terminal: {e}"),
                )
            }),
            None => Err(Refusal::new(
                ERROR_PROCESS_EXITED,
                format!("process {} has exited and its terminal is closed", self.id),
            )),
        }
    }

    fn append(&self, kind: FrameKind, data: &[u8]) {
        let mut state = lock(&self.state);
        state.output.push(kind, data);
        state.watchers.iter().for_each(|w| w.notify());
    }

    /// Runs on the process's own thread until it has exited: moves its output into the ring
    /// and kills its group at the timeout, then records the exit.
    fn supervise(&self, mut child: Child, mut outputs: Vec<(FrameKind, File)>) {
        let oom_kills_before = exec::oom_kill_count();
        let deadline = self.started.checked_add(self.timeout);
        let mut exit_signal = sys::pidfd_open(self.pid);
        let mut timed_out = false;
        let mut buffer = vec![0; OUTPUT_CHUNK_LEN];
        let (status, duration) = loop {
            let now = Instant::now();
            if let Some(status) = self.reap(&mut child) {
                let duration = self.started.elapsed();
                // Output still held open by background children is taken for a short grace.
                self.read_until(&mut outputs, &mut buffer, now + exec::DRAIN_GRACE);
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
            // Without a pidfd the exit is only noticed by checking regularly.
            let wake_at = match exit_signal {
                Some(_) => wake_at,
                None => Some(wake_at.map_or(now + exec::EXIT_CHECK_INTERVAL, |at| {
                    at.min(now + exec::EXIT_CHECK_INTERVAL)
                })),
            };
            let mut fds: Vec<libc::pollfd> = outputs
                .iter()
                .map(|(_, pipe)| poll_entry(Some(pipe), libc::POLLIN))
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
            oom_killed: status.signal().is_some()
                && matches!((oom_kills_before, oom_kills_after), (Some(b), Some(a)) if a > b),
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
    fn reap(&self, child: &mut Child) -> Option<ExitStatus> {
        match child.try_wait() {
            Ok(status) => status,
            // Cannot happen for a child only this thread waits for; never leave it running
            // unsupervised all the same.
            Err(_) => {
                sys::kill_process_group(self.pid);
                child.wait().ok()
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
            !ready || self.read_once(*kind, pipe, buffer)
        });
    }

    /// Reads what `pipe` holds into the ring; returns whether it is still open.
    fn read_once(&self, kind: FrameKind, mut pipe: &File, buffer: &mut [u8]) -> bool {
        match pipe.read(buffer) {
            Ok(0) => false,
            Ok(read) => {
                self.append(kind, &buffer[..read]);
                true
            }
            // A terminal's master gives EIO once the process side has closed it: its end.
            Err(e) => matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock),
        }
    }

    /// Keeps reading the outputs until all are closed or `until`.
    fn read_until(&self, outputs: &mut Vec<(FrameKind, File)>, buffer: &mut [u8], until: Instant) {
        while !outputs.is_empty() {
            let now = Instant::now();
            if now >= until {
                return;
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

/// The newest output of a process, stdout and stderr together in the order they came.
/// Offsets count every byte the process wrote to either since it started.
struct Ring {
    chunks: VecDeque<Chunk>,
    /// The offset of the oldest byte kept.
    start: u64,
    /// The offset of the next byte.
    end: u64,
    /// Bytes kept plus [`CHUNK_OVERHEAD`] per chunk; at most `capacity`.
    cost: u64,
    capacity: u64,
    stdout_bytes: u64,
    stderr_bytes: u64,
}

struct Chunk {
    kind: FrameKind,
    start: u64,
    data: Vec<u8>,
}

impl Chunk {
    fn end(&self) -> u64 {
        self.start + self.data.len() as u64
    }
}

impl Ring {
    fn new(capacity: u64) -> Self {
        Self {
            chunks: VecDeque::new(),
            start: 0,
            end: 0,
            cost: 0,
            capacity,
            stdout_bytes: 0,
            stderr_bytes: 0,
        }
    }

    fn push(&mut self, kind: FrameKind, data: &[u8]) {
        let len = data.len() as u64;
        match self.chunks.back_mut() {
            Some(last) if last.kind == kind && last.data.len() + data.len() <= OUTPUT_CHUNK_LEN => {
                last.data.extend_from_slice(data);
                self.cost += len;
            }
            _ => {
                self.chunks.push_back(Chunk {
                    kind,
                    start: self.end,
                    data: data.to_vec(),
                });
                self.cost += len + CHUNK_OVERHEAD;
            }
        }
        self.end += len;
        match kind {
            FrameKind::Stderr => self.stderr_bytes += len,
            _ => self.stdout_bytes += len,
        }
        // Drops the oldest bytes, never the newest: a chunk that is only partly in excess is
        // trimmed at its front (a chunk can grow larger than a small ring's capacity).
        while self.cost > self.capacity {
            let excess = self.cost - self.capacity;
            let Some(oldest) = self.chunks.front_mut() else {
                break;
            };
            let len = oldest.data.len() as u64;
            if len <= excess {
                self.chunks.pop_front();
                self.cost -= len + CHUNK_OVERHEAD;
            } else {
                oldest.data.drain(..excess as usize);
                oldest.start += excess;
                self.cost -= excess;
            }
            self.start = self.chunks.front().map_or(self.end, |c| c.start);
        }
    }

    /// Copies up to about `budget` bytes from `offset` on (or from the oldest byte kept, if
    /// that is later); returns where the copy starts and the pieces.
    fn read_from(&self, offset: u64, budget: usize) -> (u64, Vec<(FrameKind, Vec<u8>)>) {
        let from = offset.max(self.start);
        let first = self.chunks.partition_point(|c| c.end() <= from);
        let mut pieces = Vec::new();
        let mut taken = 0;
        for chunk in self.chunks.range(first..) {
            let skip = usize::try_from(from.saturating_sub(chunk.start)).unwrap_or(usize::MAX);
            let data = &chunk.data[skip.min(chunk.data.len())..];
            if taken > 0 && taken + data.len() > budget {
                break;
            }
            taken += data.len();
            pieces.push((chunk.kind, data.to_vec()));
        }
        (from, pieces)
    }
}

/// One of the [`MAX_STREAMS`] attach slots, given back when dropped.
struct StreamSlot;

impl StreamSlot {
    fn take() -> Option<Self> {
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
struct Attachment<'a> {
    process: &'a Process,
    wakeup: Arc<EventFd>,
    /// The offset of the next byte to send.
    cursor: u64,
    interactive: bool,
    /// Input from an interactive connection, written as the process makes room.
    input: Input,
}

impl<'a> Attachment<'a> {
    fn new(process: &'a Process, since: u64, interactive: bool) -> Result<Self, ProtoError> {
        let wakeup = Arc::new(EventFd::new()?);
        lock(&process.state).watchers.push(wakeup.clone());
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
            interactive,
            input,
        })
    }

    fn stream(&mut self, connection: &mut UnixStream) -> Result<(), ProtoError> {
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
                write_json(connection, &Event::OutputFrom { offset: from })?;
                self.cursor = from;
                announced = true;
            }
            for (kind, data) in &pieces {
                write_frame(connection, *kind, data)?;
                self.cursor += data.len() as u64;
            }
            if let Some(info) = exit {
                return write_json(connection, &Event::Process(info));
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
                if let Ok(Request::ProcessResize { size, .. }) = frame.parse_json() {
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
        lock(&self.process.state)
            .watchers
            .retain(|w| !Arc::ptr_eq(w, &self.wakeup));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring_contents(ring: &Ring, offset: u64) -> (u64, Vec<(FrameKind, Vec<u8>)>) {
        ring.read_from(offset, usize::MAX)
    }

    #[test]
    fn ring_keeps_order_merges_small_writes_and_counts_per_stream() {
        let mut ring = Ring::new(1 << 20);
        ring.push(FrameKind::Stdout, b"ab");
        ring.push(FrameKind::Stdout, b"c");
        ring.push(FrameKind::Stderr, b"E");
        ring.push(FrameKind::Stdout, b"d");
        assert_eq!(ring.chunks.len(), 3);
        assert_eq!((ring.start, ring.end), (0, 5));
        assert_eq!((ring.stdout_bytes, ring.stderr_bytes), (4, 1));
        assert_eq!(
            ring_contents(&ring, 1),
            (
                1,
                vec![
                    (FrameKind::Stdout, b"bc".to_vec()),
                    (FrameKind::Stderr, b"E".to_vec()),
                    (FrameKind::Stdout, b"d".to_vec()),
                ]
            )
        );
        assert_eq!(ring_contents(&ring, 5), (5, vec![]));
    }

    #[test]
    fn ring_drops_the_oldest_beyond_its_capacity() {
        let mut ring = Ring::new(2 * (10 + CHUNK_OVERHEAD));
        for (kind, data) in [
            (FrameKind::Stdout, [b'a'; 10]),
            (FrameKind::Stderr, [b'b'; 10]),
            (FrameKind::Stdout, [b'c'; 10]),
        ] {
            ring.push(kind, &data);
        }
        assert_eq!((ring.start, ring.end), (10, 30));
        assert!(ring.cost <= ring.capacity);
        // Asking for what is gone starts at the oldest byte kept.
        let (from, pieces) = ring_contents(&ring, 3);
        assert_eq!(from, 10);
        assert_eq!(pieces[0], (FrameKind::Stderr, vec![b'b'; 10]));
        assert_eq!((ring.stdout_bytes, ring.stderr_bytes), (20, 10));

        // A ring too small for one chunk keeps nothing, and says so.
        let mut tiny = Ring::new(4);
        tiny.push(FrameKind::Stdout, b"hello");
        assert_eq!((tiny.start, tiny.end), (5, 5));
        assert_eq!(ring_contents(&tiny, 0), (5, vec![]));
    }

    #[test]
    fn a_growing_chunk_loses_its_oldest_bytes_never_its_newest() {
        let mut ring = Ring::new(CHUNK_OVERHEAD + 8);
        ring.push(FrameKind::Stdout, b"aaaa");
        ring.push(FrameKind::Stdout, b"bbbbbbbb");
        assert_eq!((ring.start, ring.end), (4, 12));
        assert_eq!(
            ring_contents(&ring, 0),
            (4, vec![(FrameKind::Stdout, b"bbbbbbbb".to_vec())])
        );
        assert_eq!(ring.cost, ring.capacity);
    }

    #[test]
    fn ring_reads_are_batched() {
        let mut ring = Ring::new(1 << 20);
        for kind in [FrameKind::Stdout, FrameKind::Stderr, FrameKind::Stdout] {
            ring.push(kind, &[0; 100]);
        }
        let (_, first) = ring.read_from(0, 150);
        assert_eq!(first.len(), 1);
        // A batch always makes progress, even past its budget.
        let (_, one) = ring.read_from(50, 10);
        assert_eq!(one, vec![(FrameKind::Stdout, vec![0; 50])]);
    }

    #[test]
    fn stream_slots_are_bounded_and_given_back() {
        let slots: Vec<StreamSlot> = std::iter::from_fn(StreamSlot::take).take(100).collect();
        assert_eq!(slots.len(), MAX_STREAMS);
        assert!(StreamSlot::take().is_none());
        drop(slots);
        assert!(StreamSlot::take().is_some());
    }
}
