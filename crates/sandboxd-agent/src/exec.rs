//! Runs one exec request: spawns the process in its own process group, streams its output,
//! feeds its input and enforces the timeout, all on the connection's thread with poll(2), so
//! an exec costs no extra threads while the process runs.

use crate::head_tail::HeadTail;
use crate::{quick_spawn, sys};
use sandboxd_agent_proto::{
    read_frame, write_frame, write_json, ErrorCode, Event, ExecRequest, ExitReport, Frame,
    FrameKind, ProtoError, OUTPUT_CHUNK_LEN,
};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// After the process exits, how long output still held open by its background children is
/// forwarded before the exit is reported.
pub(crate) const DRAIN_GRACE: Duration = Duration::from_millis(50);
/// The most a pipe can hold (`fs.pipe-max-size`, as a process may raise its pipe's size).
pub(crate) const MAX_PIPE_BYTES: u64 = 1 << 20;
/// How often to check for the exit where pidfds are unavailable.
pub(crate) const EXIT_CHECK_INTERVAL: Duration = Duration::from_millis(10);
/// Threads that discard output of background processes only need a small stack.
const DRAIN_STACK_SIZE: usize = 32 * 1024;
/// The agent's own variables are not the command's business.
const PRIVATE_ENV_PREFIX: &[u8] = b"SANDBOXD_";
/// The cgroup OOM-kill counters, v2 then v1, each with an `oom_kill N` line.
const OOM_COUNTER_FILES: [&str; 2] = [
    "/sys/fs/cgroup/memory.events",
    "/sys/fs/cgroup/memory/memory.oom_control",
];
/// More than either file holds (six counters of v2's, three of v1's).
const COUNTERS_MAX_LEN: usize = 512;

/// Answers `request` on `connection`. An error means the connection is unusable; the
/// process group has been killed then, since nobody is listening any more.
pub fn run(connection: &mut UnixStream, request: &ExecRequest) -> Result<(), ProtoError> {
    let Some(program) = request.argv.first() else {
        return write_json(
            connection,
            &error_event(ErrorCode::BadRequest, "argv is empty".into()),
        );
    };
    let oom_kills_before = oom_kill_count();
    let started = match start_piped(request) {
        Ok(started) => started,
        Err(e) => {
            let message = spawn_failure(program, request, &e);
            return write_json(connection, &error_event(ErrorCode::SpawnFailed, message));
        }
    };
    let mut exec = Supervised::new(started, request)?;
    // No word before the output or the exit: nobody waits for one, and it would wake the
    // service in the middle of every command.
    let outcome = exec.supervise(connection, request);
    let (status, timed_out) = match outcome {
        Ok(finished) => finished,
        Err(e) => {
            exec.kill();
            return Err(e);
        }
    };
    let oom_kills_after = oom_kill_count();
    let report = ExitReport {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        oom_killed: oom_killed_between(oom_kills_before, oom_kills_after),
        stdout_bytes: exec.stdout.total,
        stderr_bytes: exec.stderr.total,
        duration_ms: exec.duration.as_millis().try_into().unwrap_or(u64::MAX),
    };
    exec.stdout.send_tail(connection)?;
    exec.stderr.send_tail(connection)?;
    exec.stdout.drain_in_background();
    exec.stderr.drain_in_background();
    write_json(connection, &Event::Exited(report))
}

pub(crate) fn error_event(code: ErrorCode, message: String) -> Event {
    Event::Error { code, message }
}

/// A started command: its pid (also its process group), its pipes and, where allowed, its
/// pidfd. It is waited for by its pid (`sys::wait_for_exit`).
pub(crate) struct Piped {
    pub(crate) pid: u32,
    pub(crate) stdin: Option<File>,
    pub(crate) stdout: File,
    pub(crate) stderr: File,
    pub(crate) exit_signal: Option<OwnedFd>,
}

/// Starts the request's command with its output piped: by [`quick_spawn`] where the sandbox's
/// kernel has no OOM killer; else, and for a script without `#!` (which only execvp's fallback
/// to the shell runs), by std, as the sandbox's preferred victim.
pub(crate) fn start_piped(request: &ExecRequest) -> io::Result<Piped> {
    if sys::commands_need_no_fork() {
        match start_quickly(request) {
            Err(e)
                if e.kind() == ErrorKind::Unsupported
                    || e.raw_os_error() == Some(libc::ENOEXEC) => {}
            started => return started,
        }
    }
    let mut child = start(command(request))?;
    let file = |pipe: Option<OwnedFd>| pipe.map(File::from);
    let (stdin, stdout, stderr) = (
        file(child.stdin.take().map(OwnedFd::from)),
        file(child.stdout.take().map(OwnedFd::from)),
        file(child.stderr.take().map(OwnedFd::from)),
    );
    let pid = child.id();
    // Waited for by its pid from here: std's handle holds nothing else.
    drop(child);
    Ok(Piped {
        pid,
        stdin,
        stdout: stdout.ok_or_else(|| io::Error::from(ErrorKind::BrokenPipe))?,
        stderr: stderr.ok_or_else(|| io::Error::from(ErrorKind::BrokenPipe))?,
        exit_signal: sys::pidfd_open(pid),
    })
}

fn start_quickly(request: &ExecRequest) -> io::Result<Piped> {
    crate::headroom::room_to_start()?;
    let (stdout, stdout_end) = quick_spawn::pipe()?;
    let (stderr, stderr_end) = quick_spawn::pipe()?;
    let (stdin, stdin_end) = if request.stdin {
        let (end, stdin) = quick_spawn::pipe()?;
        (Some(stdin), Some(end))
    } else {
        (None, None)
    };
    let stdin_fd = match (&stdin_end, dev_null_file()) {
        (Some(end), _) | (None, Some(end)) => end.as_raw_fd(),
        (None, None) => return Err(ErrorKind::Unsupported.into()),
    };
    let program = quick_spawn::Program {
        argv: &request.argv,
        env: environment(&request.env),
        cwd: request.cwd.as_deref(),
    };
    let started = quick_spawn::spawn(
        &program,
        [stdin_fd, stdout_end.as_raw_fd(), stderr_end.as_raw_fd()],
    )?;
    Ok(Piped {
        pid: started.pid,
        stdin,
        stdout,
        stderr,
        exit_signal: Some(started.pidfd),
    })
}

/// Starts a command, as the sandbox's preferred victim should memory run out.
pub(crate) fn start(mut command: Command) -> io::Result<Child> {
    crate::headroom::room_to_start()?;
    sys::spawn_as_oom_victim(&mut command, |command| match command.spawn() {
        // posix_spawn runs what the kernel can run; a script without `#!` is left to
        // execvp's fallback to the shell, which std uses when it forks (as it does for a
        // command with a pre-exec step).
        Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {
            // SAFETY: the step does nothing, so it is async-signal-safe.
            unsafe { command.pre_exec(|| Ok(())) };
            command.spawn()
        }
        spawned => spawned,
    })
}

/// Why `program` could not be started, for an [`ErrorCode::SpawnFailed`] answer. When the sandbox
/// is at its process limit, it says so and what frees it.
pub(crate) fn spawn_failure(program: &str, request: &ExecRequest, error: &io::Error) -> String {
    let place = request
        .cwd
        .as_ref()
        .map(|cwd| format!(" in {cwd:?}"))
        .unwrap_or_default();
    let mut message = format!("cannot run {program:?}{place}: {error}");
    if error.raw_os_error() == Some(libc::EAGAIN) {
        let limit = sys::process_limit()
            .map(|limit| format!(" of {limit} processes"))
            .unwrap_or_default();
        message.push_str(&format!(
            "; the sandbox is at its process limit{limit}: processes left running hold it. Kill them all with kill-all (DELETE /v1/sessions/{{id}}/processes, the MCP tool kill_all_processes, or `sandboxd kill-all ID`); the session and its files stay"
        ));
    }
    message
}

/// The command with piped output, stdin piped or `/dev/null`, in its own process group.
pub(crate) fn command(request: &ExecRequest) -> Command {
    let mut command = program(request);
    command
        .stdin(if request.stdin {
            Stdio::piped()
        } else {
            dev_null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a timeout kills whatever it started too.
        .process_group(0);
    command
}

/// `/dev/null` for a process's stdin, from a descriptor opened once (a copy of a descriptor is
/// cheaper than a path walk at every exec).
fn dev_null() -> Stdio {
    dev_null_file()
        .and_then(|file| file.try_clone().ok())
        .map_or_else(Stdio::null, Stdio::from)
}

fn dev_null_file() -> Option<&'static File> {
    static DEV_NULL: OnceLock<Option<File>> = OnceLock::new();
    DEV_NULL
        .get_or_init(|| File::open("/dev/null").ok())
        .as_ref()
}

/// The program with its arguments, environment and working directory; its stdio and process
/// group are the caller's to set.
///
/// The agent's environment is inherited less its own variables, rather than cleared and set
/// again: std starts a program named without a path with posix_spawn (no copy of the agent's
/// memory, as fork makes) only while PATH is the agent's own.
pub(crate) fn program(request: &ExecRequest) -> Command {
    let mut command = Command::new(&request.argv[0]);
    command.args(&request.argv[1..]);
    for (name, _) in std::env::vars_os() {
        if is_private_variable(&name) {
            command.env_remove(name);
        }
    }
    command.envs(&request.env);
    if let Some(cwd) = &request.cwd {
        command.current_dir(cwd);
    }
    command
}

/// Whether `name` is one of the agent's own variables, which no command inherits.
fn is_private_variable(name: &OsStr) -> bool {
    name.as_bytes().starts_with(PRIVATE_ENV_PREFIX)
}

/// The same environment as [`program`] gives, as a list (for [`quick_spawn`]): the agent's own
/// less its `SANDBOXD_` variables, with `set` over it.
pub(crate) fn environment(set: &BTreeMap<String, String>) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            !is_private_variable(name) && name.to_str().is_none_or(|name| !set.contains_key(name))
        })
        .collect();
    env.extend(set.iter().map(|(name, value)| (name.into(), value.into())));
    env
}

/// Whether the sandbox's OOM-kill count rose while a command ran: the kernel killed one of its
/// processes, whichever (a child of `sh -c` too, after which the shell exits 137 or goes on).
pub(crate) fn oom_killed_between(before: Option<u64>, after: Option<u64>) -> bool {
    matches!((before, after), (Some(before), Some(after)) if after > before)
}

/// The sandbox's OOM-kill count. The counter file is opened once and read from its start each
/// time ([`sys::read_generated`]): an exec reads it twice, and opening a cgroup file, a path
/// walk through sysfs, was the largest part of the agent's own system time per exec.
pub(crate) fn oom_kill_count() -> Option<u64> {
    static COUNTERS: OnceLock<Option<File>> = OnceLock::new();
    let counters = COUNTERS
        .get_or_init(|| {
            OOM_COUNTER_FILES
                .iter()
                .find_map(|path| File::open(path).ok())
        })
        .as_ref()?;
    sys::read_generated(counters, &mut [0; COUNTERS_MAX_LEN])?
        .lines()
        .find_map(|line| line.strip_prefix("oom_kill ")?.trim().parse().ok())
}

/// A running process and its pipes.
struct Supervised {
    /// Also the process group id.
    pid: u32,
    started: Instant,
    /// Becomes readable when the process exits; absent where pidfds are not allowed.
    exit_signal: Option<OwnedFd>,
    stdin: Input,
    stdout: Output,
    stderr: Output,
    duration: Duration,
}

/// Positions in the poll set.
const POLL_CONNECTION: usize = 0;
const POLL_STDOUT: usize = 1;
const POLL_STDERR: usize = 2;
const POLL_STDIN: usize = 3;
const POLL_EXIT: usize = 4;

impl Supervised {
    fn new(started: Piped, request: &ExecRequest) -> Result<Self, ProtoError> {
        let Piped {
            pid,
            stdin,
            stdout,
            stderr,
            exit_signal,
        } = started;
        let mut supervised = Self {
            pid,
            started: Instant::now(),
            exit_signal,
            stdin: Input::default(),
            stdout: Output::new(FrameKind::Stdout, Some(stdout), request.output_limit),
            stderr: Output::new(FrameKind::Stderr, Some(stderr), request.output_limit),
            duration: Duration::ZERO,
        };
        if let Some(stdin) = stdin {
            // Written only when poll says there is room, so a process that never reads its
            // input cannot block the agent.
            if let Err(e) = sys::set_nonblocking(&stdin) {
                supervised.kill();
                return Err(e.into());
            }
            supervised.stdin.pipe = Some(stdin);
        }
        Ok(supervised)
    }

    fn kill(&mut self) {
        sys::kill_process_group(self.pid);
        let _ = sys::wait_for_exit(self.pid, true);
    }

    /// Runs the process to its end; returns its status and whether it timed out.
    fn supervise(
        &mut self,
        connection: &mut UnixStream,
        request: &ExecRequest,
    ) -> Result<(ExitStatus, bool), ProtoError> {
        let deadline = self
            .started
            .checked_add(Duration::from_millis(request.timeout_ms));
        let mut timed_out = false;
        let mut exited: Option<(ExitStatus, Instant)> = None;
        // With a pidfd the exit is looked for once it says so (a system call less per exec,
        // tens of microseconds on gVisor); without one, at every turn.
        let mut exit_signalled = false;
        let mut buffer = vec![0; OUTPUT_CHUNK_LEN];
        loop {
            if exited.is_none() && (exit_signalled || self.exit_signal.is_none()) {
                if let Some(status) = sys::wait_for_exit(self.pid, false)? {
                    exited = Some((status, Instant::now()));
                    self.duration = self.started.elapsed();
                    self.exit_signal = None;
                    self.stdin.close();
                }
            }
            let now = Instant::now();
            let mut wake_at = match exited {
                Some((status, exited_at)) => {
                    let drained_by = exited_at + DRAIN_GRACE;
                    if (self.stdout.is_closed() && self.stderr.is_closed()) || now >= drained_by {
                        // What the process itself wrote may still be in the pipes: the grace
                        // is for its background children, and on a loaded host (or behind a
                        // slow reader) it can pass before the pipes were read.
                        self.stdout.pump_ready(connection, &mut buffer)?;
                        self.stderr.pump_ready(connection, &mut buffer)?;
                        return Ok((status, timed_out));
                    }
                    Some(drained_by)
                }
                // Killed: only the exit is left to wait for.
                None if timed_out => None,
                None => match deadline {
                    Some(deadline) if now >= deadline => {
                        sys::kill_process_group(self.pid);
                        timed_out = true;
                        continue;
                    }
                    deadline => deadline,
                },
            };
            if exited.is_none() && self.exit_signal.is_none() {
                // Without a pidfd the exit is only noticed by checking regularly.
                let next_check = now + EXIT_CHECK_INTERVAL;
                wake_at = Some(wake_at.map_or(next_check, |at| at.min(next_check)));
            }

            // While stdin input waits for room in the pipe the service is not read; poll
            // still reports it hanging up.
            let service_events = if self.stdin.accepts_frames() {
                libc::POLLIN
            } else {
                0
            };
            let mut fds = [libc::pollfd {
                fd: -1,
                events: 0,
                revents: 0,
            }; 5];
            fds[POLL_CONNECTION] = poll_entry(Some(&*connection), service_events);
            fds[POLL_STDOUT] = poll_entry(self.stdout.pipe.as_ref(), libc::POLLIN);
            fds[POLL_STDERR] = poll_entry(self.stderr.pipe.as_ref(), libc::POLLIN);
            if !self.stdin.pending.is_empty() {
                fds[POLL_STDIN] = poll_entry(self.stdin.pipe.as_ref(), libc::POLLOUT);
            }
            fds[POLL_EXIT] = poll_entry(self.exit_signal.as_ref(), libc::POLLIN);
            sys::poll(&mut fds, poll_timeout(wake_at, now))?;
            exit_signalled = fds[POLL_EXIT].revents != 0;

            let from_service = fds[POLL_CONNECTION].revents;
            if from_service & libc::POLLIN != 0 {
                self.stdin.accept(read_frame(connection)?);
            } else if from_service & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                return Err(ProtoError::Closed);
            }
            if fds[POLL_STDOUT].revents != 0 {
                self.stdout.pump(connection, &mut buffer)?;
            }
            if fds[POLL_STDERR].revents != 0 {
                self.stderr.pump(connection, &mut buffer)?;
            }
            if fds[POLL_STDIN].revents != 0 {
                self.stdin.write_pending();
            }
        }
    }
}

pub(crate) fn poll_entry(fd: Option<&impl AsRawFd>, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd: fd.map_or(-1, AsRawFd::as_raw_fd),
        events,
        revents: 0,
    }
}

/// Milliseconds until `wake_at`, rounded up so the loop does not spin just before it.
pub(crate) fn poll_timeout(wake_at: Option<Instant>, now: Instant) -> i32 {
    wake_at.map_or(-1, |at| {
        let nanos = at.saturating_duration_since(now).as_nanos();
        i32::try_from(nanos.div_ceil(1_000_000)).unwrap_or(i32::MAX)
    })
}

/// The process's stdin: frames from the service, written as the process reads.
#[derive(Default)]
pub(crate) struct Input {
    pub(crate) pipe: Option<File>,
    /// One frame's payload at most: the connection is not read while it waits.
    pub(crate) pending: Vec<u8>,
    written: usize,
    eof_requested: bool,
}

impl Input {
    /// Whether to read frames from the service now. With no pipe (no stdin requested, or
    /// already closed) frames are read and dropped, which also notices a closed connection.
    pub(crate) fn accepts_frames(&self) -> bool {
        self.pipe.is_none() || self.pending.is_empty()
    }

    pub(crate) fn accept(&mut self, frame: Frame) {
        // Control messages during an exec are reserved for future ops (signals, resizes).
        if frame.kind != FrameKind::Stdin || self.pipe.is_none() {
            return;
        }
        if frame.payload.is_empty() {
            self.eof_requested = true;
            self.close_if_done();
        } else {
            self.pending = frame.payload;
            self.written = 0;
            self.write_pending();
        }
    }

    pub(crate) fn write_pending(&mut self) {
        let Some(pipe) = &mut self.pipe else { return };
        match pipe.write(&self.pending[self.written..]) {
            Ok(written) => {
                self.written += written;
                if self.written == self.pending.len() {
                    self.pending.clear();
                    self.close_if_done();
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            // The process closed its stdin: the rest of the input has no reader.
            Err(_) => self.close(),
        }
    }

    fn close_if_done(&mut self) {
        if self.eof_requested && self.pending.is_empty() {
            self.close();
        }
    }

    fn close(&mut self) {
        self.pipe = None;
        self.pending = Vec::new();
    }
}

/// One output pipe of the process.
struct Output {
    kind: FrameKind,
    pipe: Option<File>,
    /// What is sent of it: its head at once, its tail after the exit; `limit` bytes at most.
    kept: HeadTail,
    /// Bytes the process wrote.
    total: u64,
}

impl Output {
    fn new(kind: FrameKind, pipe: Option<File>, limit: u64) -> Self {
        Self {
            kind,
            pipe,
            kept: HeadTail::new(limit),
            total: 0,
        }
    }

    fn is_closed(&self) -> bool {
        self.pipe.is_none()
    }

    /// Reads what the pipe holds (poll said it would not block) and forwards what fits in
    /// the head; the rest is kept as the tail. Past the limit the pipe is still emptied, so
    /// the process never blocks on a full pipe.
    fn pump(&mut self, connection: &mut UnixStream, buffer: &mut [u8]) -> Result<(), ProtoError> {
        let Some(pipe) = &mut self.pipe else {
            return Ok(());
        };
        match pipe.read(buffer) {
            Ok(0) => self.pipe = None,
            Ok(read) => {
                self.total += read as u64;
                let forward = self.kept.take(&buffer[..read]);
                if !forward.is_empty() {
                    write_frame(connection, self.kind, forward)?;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.pipe = None,
        }
        Ok(())
    }

    /// Pumps what the pipe holds right now, without waiting for more: at most
    /// [`MAX_PIPE_BYTES`], so a background child writing on cannot keep the report back.
    fn pump_ready(
        &mut self,
        connection: &mut UnixStream,
        buffer: &mut [u8],
    ) -> Result<(), ProtoError> {
        let budget = self.total + MAX_PIPE_BYTES;
        while self.total < budget {
            let Some(pipe) = &self.pipe else { break };
            let mut fds = [poll_entry(Some(pipe), libc::POLLIN)];
            if sys::poll(&mut fds, 0).is_err() || fds[0].revents == 0 {
                break;
            }
            let before = self.total;
            self.pump(connection, buffer)?;
            if self.total == before {
                break;
            }
        }
        Ok(())
    }

    /// Sends the tail, after saying how much was left out before it, if anything was.
    fn send_tail(&mut self, connection: &mut UnixStream) -> Result<(), ProtoError> {
        let (omitted, tail) = self.kept.finish();
        if omitted > 0 {
            let stderr = self.kind == FrameKind::Stderr;
            write_json(
                connection,
                &Event::OutputOmitted {
                    stderr,
                    bytes: omitted,
                },
            )?;
        }
        for chunk in tail.chunks(OUTPUT_CHUNK_LEN) {
            write_frame(connection, self.kind, chunk)?;
        }
        Ok(())
    }

    /// Background processes may keep the pipe open long after the exit was reported; a
    /// thread empties it until they close it, so they never block writing.
    fn drain_in_background(&mut self) {
        if let Some(pipe) = self.pipe.take() {
            drain_in_background(pipe);
        }
    }
}

/// Empties `pipe` on a thread of its own until its writers close it, so they never block.
pub(crate) fn drain_in_background(mut pipe: File) {
    // If no thread can be had, dropping the pipe closes it instead.
    let _ = thread::Builder::new()
        .name("drain".into())
        .stack_size(DRAIN_STACK_SIZE)
        .spawn(move || io::copy(&mut pipe, &mut io::sink()));
}
