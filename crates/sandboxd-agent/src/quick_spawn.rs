//! Starts an exec's command with as few system calls as a child can make, where the sandbox's
//! kernel has no OOM killer (gVisor).
//!
//! std starts a command with glibc's posix_spawn, whose child resets the disposition of every
//! signal before it execs: 121 `rt_sigaction` calls counted by `runsc --strace`, made while the
//! agent waits. In gVisor a system call costs tens of microseconds, and those calls were most
//! of what an exec added over the sandbox's own spawn. Here the child shares the agent's memory
//! until it execs, as posix_spawn's and vfork's do, and resets only the dispositions the agent
//! holds changed (learned once), with every signal blocked until just before the exec, as
//! glibc does; the pidfd comes with the clone.
//!
//! Elsewhere a command needs a fork of its own, to start as the sandbox's first OOM victim
//! (`sys::spawn_as_oom_victim`), and std starts it.

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::raw::{c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

/// The child's own stack: it makes a dozen system calls and no deeper calls than libc's.
const CHILD_STACK_LEN: usize = 64 * 1024;
/// Where no PATH is set, execvp's search path.
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// What to start: the program, found as execvp finds it, with `argv` and exactly `env`.
pub struct Program<'a> {
    pub argv: &'a [String],
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<&'a str>,
}

/// A started command: its pid (it leads a process group of its own) and its pidfd.
pub struct Started {
    pub pid: u32,
    pub pidfd: OwnedFd,
}

/// Starts `program` with `stdio` as its descriptors 0, 1 and 2, in a process group of its own.
/// `ENOEXEC` (a script without `#!`) and `Unsupported` (stdio among descriptors 0-2, a kernel
/// without pidfds) are for the caller to start another way.
pub fn spawn(program: &Program, stdio: [RawFd; 3]) -> io::Result<Started> {
    if stdio.iter().any(|fd| *fd < 3) {
        return Err(io::ErrorKind::Unsupported.into());
    }
    let argv = c_strings(program.argv.iter().map(|arg| arg.as_bytes().to_vec()))?;
    let candidates = c_strings(candidates(&program.argv[0], &program.env).into_iter())?;
    let envp = c_strings(program.env.iter().map(|(name, value)| {
        let mut entry = name.as_bytes().to_vec();
        entry.push(b'=');
        entry.extend_from_slice(value.as_bytes());
        entry
    }))?;
    let cwd = program.cwd.map(|cwd| c_string(cwd.into())).transpose()?;
    let (argv_ptrs, candidate_ptrs, envp_ptrs) = (
        null_terminated(&argv),
        null_terminated(&candidates),
        null_terminated(&envp),
    );
    let plan = ChildPlan {
        candidates: candidate_ptrs.as_ptr(),
        argv: argv_ptrs.as_ptr(),
        envp: envp_ptrs.as_ptr(),
        cwd: cwd.as_ref().map_or(std::ptr::null(), |cwd| cwd.as_ptr()),
        stdio,
        reset: changed_dispositions(),
        error: AtomicI32::new(0),
    };
    let mut stack = vec![0_u8; CHILD_STACK_LEN];
    let mut pidfd: c_int = -1;
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD;
    let cloned = with_signals_blocked(|| {
        // SAFETY: the stack's top is handed over (glibc aligns it) and outlives the child's
        // use of it: CLONE_VFORK holds this thread until the child has exec'd or exited, and
        // so does every pointer of `plan`. The child runs `child_main` only, which makes
        // system calls and writes nothing of the agent's but `plan.error`, an atomic.
        let pid = unsafe {
            libc::clone(
                child_main,
                stack.as_mut_ptr().add(CHILD_STACK_LEN).cast(),
                flags,
                std::ptr::from_ref(&plan).cast_mut().cast(),
                &raw mut pidfd,
            )
        };
        if pid < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(pid)
        }
    });
    let pid = cloned.map_err(|error| match error.raw_os_error() {
        // No pidfds (before Linux 5.2) or no clone at all: std's way still works.
        Some(libc::EINVAL | libc::ENOSYS | libc::EPERM) => io::ErrorKind::Unsupported.into(),
        _ => error,
    })?;
    // SAFETY: the clone returned this new descriptor for the child and nothing else owns it.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let pid = u32::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    match plan.error.load(Ordering::Acquire) {
        0 => Ok(Started { pid, pidfd }),
        errno => {
            // The child exited with 127 without running anything: reaped here.
            let _ = crate::sys::wait_for_exit(pid, true);
            Err(io::Error::from_raw_os_error(errno))
        }
    }
}

/// The paths execvp would try for `program`: itself when it names a path, else the program in
/// each directory of the command's PATH (an empty entry is the working directory).
fn candidates(program: &str, env: &[(OsString, OsString)]) -> Vec<Vec<u8>> {
    if program.contains('/') {
        return vec![program.as_bytes().to_vec()];
    }
    let path = env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map_or(DEFAULT_PATH, |(_, value)| value.as_bytes());
    path.split(|byte| *byte == b':')
        .map(|dir| {
            let mut candidate = if dir.is_empty() {
                b".".to_vec()
            } else {
                dir.to_vec()
            };
            candidate.push(b'/');
            candidate.extend_from_slice(program.as_bytes());
            candidate
        })
        .collect()
}

fn c_string(bytes: Vec<u8>) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn c_strings(all: impl Iterator<Item = Vec<u8>>) -> io::Result<Vec<CString>> {
    all.map(c_string).collect()
}

fn null_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|string| string.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Everything the child needs, made ready by the agent: the child only makes system calls.
struct ChildPlan {
    candidates: *const *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
    /// Null to stay in the agent's working directory.
    cwd: *const c_char,
    stdio: [RawFd; 3],
    reset: &'static [c_int],
    /// The errno of the step that failed, 0 while none did.
    error: AtomicI32,
}

/// The child: its descriptors, its group, its directory and signals, then each candidate in
/// turn as execvp does (EACCES kept while a later one may still run; ENOENT and ENOTDIR go on).
extern "C" fn child_main(plan: *mut c_void) -> c_int {
    // SAFETY: `spawn` passes a ChildPlan that lives until this child has exec'd or exited.
    let plan = unsafe { &*plan.cast::<ChildPlan>() };
    // SAFETY: each call below is a system call on integers or on the plan's NUL-terminated
    // strings and arrays; none allocates, locks or unwinds.
    let error = unsafe { prepare_and_exec(plan) };
    plan.error.store(error, Ordering::Release);
    // SAFETY: _exit ends this child at once, leaving the shared memory as it is.
    unsafe { libc::_exit(127) }
}

/// # Safety
/// Only in the child of [`spawn`], with its plan.
unsafe fn prepare_and_exec(plan: &ChildPlan) -> c_int {
    // SAFETY: errno is this thread's (the agent's, shared until the exec), read at once.
    let errno = || unsafe { *libc::__errno_location() };
    for (target, source) in [0, 1, 2].into_iter().zip(plan.stdio) {
        // SAFETY: dup2 on two descriptors; it clears close-on-exec on the copy.
        if unsafe { libc::dup2(source, target) } < 0 {
            return errno();
        }
    }
    // SAFETY: setpgid takes integers.
    if unsafe { libc::setpgid(0, 0) } < 0 {
        return errno();
    }
    // SAFETY: a non-null `cwd` is a NUL-terminated path.
    if !plan.cwd.is_null() && unsafe { libc::chdir(plan.cwd) } < 0 {
        return errno();
    }
    // SAFETY: a zeroed sigaction is SIG_DFL with no flags and an empty mask.
    let default: libc::sigaction = unsafe { std::mem::zeroed() };
    for signal in plan.reset {
        // SAFETY: sets a disposition from a live struct.
        unsafe { libc::sigaction(*signal, &default, std::ptr::null_mut()) };
    }
    // SAFETY: an empty set, made and installed in place.
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
    let mut error = libc::ENOENT;
    let mut candidate = plan.candidates;
    // SAFETY: `candidates` is a null-terminated array of NUL-terminated paths.
    while let Some(path) = unsafe { candidate.as_ref() }.filter(|path| !path.is_null()) {
        // SAFETY: path, argv and envp are NUL-terminated strings and null-terminated arrays.
        unsafe { libc::execve(*path, plan.argv, plan.envp) };
        match errno() {
            libc::ENOENT | libc::ENOTDIR => {}
            libc::EACCES => error = libc::EACCES,
            other => return other,
        }
        // SAFETY: the array goes on to its null entry, which ends the loop.
        candidate = unsafe { candidate.add(1) };
    }
    error
}

/// The signals whose disposition the agent holds changed (a handler, or SIGPIPE ignored by
/// Rust's runtime), to be put back to default in the child before it execs. Read once: the
/// agent sets no handler after it starts.
fn changed_dispositions() -> &'static [c_int] {
    static CHANGED: OnceLock<Vec<c_int>> = OnceLock::new();
    CHANGED.get_or_init(|| {
        (1..=libc::SIGRTMAX())
            .filter(|signal| {
                // SAFETY: reads a disposition into a zeroed struct; glibc refuses its own
                // signals (EINVAL), which are left alone.
                let (read, current) = unsafe {
                    let mut current: libc::sigaction = std::mem::zeroed();
                    let read = libc::sigaction(*signal, std::ptr::null(), &mut current);
                    (read, current)
                };
                read == 0
                    && (current.sa_sigaction != libc::SIG_DFL
                        && (current.sa_sigaction != libc::SIG_IGN || *signal == libc::SIGPIPE))
            })
            .collect()
    })
}

/// Runs `clone` with every signal blocked on this thread, so no handler of the agent's runs
/// in the child while it shares the agent's memory; the mask is put back after.
fn with_signals_blocked<T>(clone: impl FnOnce() -> T) -> T {
    // SAFETY: sets and restores this thread's mask from live sets.
    unsafe {
        let (mut all, mut before): (libc::sigset_t, libc::sigset_t) =
            (std::mem::zeroed(), std::mem::zeroed());
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut before);
        let cloned = clone();
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        cloned
    }
}

/// A pipe whose ends close on exec: `(read, write)`.
pub fn pipe() -> io::Result<(File, File)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into a live array of two.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nothing else.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

#[cfg(test)]
#[path = "quick_spawn_tests.rs"]
mod tests;
