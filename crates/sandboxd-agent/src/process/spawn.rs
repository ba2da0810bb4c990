//! Spawning: a requested process started with pipes or on a terminal, and its supervisor.

use super::refusal::Refusal;
use super::ring::Ring;
use super::table::{lock, make_room, Process, State, PROCESSES};
use crate::exec;
use crate::sys;
use sandboxd_agent_proto::{ErrorCode, FrameKind, ProcessStartRequest, TermSize};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

/// Supervisors keep their read buffer on the heap.
const SUPERVISOR_STACK_SIZE: usize = 128 * 1024;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(super) fn spawn(request: &ProcessStartRequest) -> Result<Arc<Process>, Refusal> {
    let command = &request.command;
    let Some(program) = command.argv.first() else {
        return Err(Refusal::new(ErrorCode::BadRequest, "argv is empty"));
    };
    if request
        .pty
        .is_some_and(|size| size.cols == 0 || size.rows == 0)
    {
        let message = "a terminal needs at least one column and one row";
        return Err(Refusal::new(ErrorCode::BadRequest, message));
    }
    // Held until the process is registered, so two starts cannot both take the last slot.
    let mut processes = lock(&PROCESSES);
    make_room(&mut processes)?;
    let spawned = match request.pty {
        None => spawn_with_pipes(request),
        Some(size) => spawn_on_terminal(request, size),
    };
    let Spawned {
        pid,
        exit_signal,
        outputs,
        stdin,
        terminal,
    } = spawned.map_err(|e| {
        Refusal::new(
            ErrorCode::SpawnFailed,
            exec::spawn_failure(program, command, &e),
        )
    })?;
    let process = Arc::new(Process {
        id: format!("p{}", NEXT_ID.fetch_add(1, Ordering::Relaxed)),
        pid,
        program: request.program.clone(),
        pty: request.pty.is_some(),
        started_at_ms: unix_millis(SystemTime::now()),
        started: Instant::now(),
        timeout: Duration::from_millis(command.timeout_ms),
        stdin_open: AtomicBool::new(stdin.is_some()),
        stdin: Mutex::new(stdin),
        terminal: Mutex::new(terminal),
        paced: request.paced,
        state: Mutex::new(State {
            output: Ring::new(command.output_limit, !request.paced),
            exit: None,
            watchers: Vec::new(),
            cursors: Vec::new(),
        }),
    });
    let supervised = process.clone();
    let supervisor = thread::Builder::new()
        .name("process".into())
        .stack_size(SUPERVISOR_STACK_SIZE)
        .spawn(move || supervised.supervise(exit_signal, outputs));
    if let Err(e) = supervisor {
        // Its group must not run unsupervised.
        abandon(process.pid);
        let message = format!("cannot supervise {program:?}: {e}");
        return Err(Refusal::new(ErrorCode::SpawnFailed, message));
    }
    processes.push(process.clone());
    Ok(process)
}

/// A started process (waited for by its pid), its pidfd where allowed, its output (kind and
/// pipe or terminal master), its stdin for writing and its terminal for resizing.
struct Spawned {
    pid: u32,
    exit_signal: Option<OwnedFd>,
    outputs: Vec<(FrameKind, File)>,
    stdin: Option<File>,
    terminal: Option<File>,
}

fn spawn_with_pipes(request: &ProcessStartRequest) -> io::Result<Spawned> {
    let piped = exec::start_piped(&request.command)?;
    if let Some(stdin) = &piped.stdin {
        // Written only as the process makes room, so it can never block the agent.
        if let Err(e) = sys::set_nonblocking(stdin) {
            abandon(piped.pid);
            return Err(e);
        }
    }
    Ok(Spawned {
        pid: piped.pid,
        exit_signal: piped.exit_signal,
        outputs: vec![
            (FrameKind::Stdout, piped.stdout),
            (FrameKind::Stderr, piped.stderr),
        ],
        stdin: piped.stdin,
        terminal: None,
    })
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
        exec::start(command)?
    };
    // Waited for by its pid from here: std's handle holds nothing else.
    let pid = child.id();
    drop(child);
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
        Ok((outputs, stdin, terminal)) => Ok(Spawned {
            pid,
            exit_signal: sys::pidfd_open(pid),
            outputs,
            stdin,
            terminal,
        }),
        Err(e) => {
            abandon(pid);
            Err(e)
        }
    }
}

/// Kills and reaps a child that cannot be supervised.
fn abandon(pid: u32) {
    sys::kill_process_group(pid);
    let _ = sys::wait_for_exit(pid, true);
}

fn unix_millis(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis().try_into().unwrap_or(u64::MAX))
}
