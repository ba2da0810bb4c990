//! The few system calls std does not wrap.

use sandboxd_agent_proto::TermSize;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};

/// Waits for events on `fds` for up to `timeout_ms` (-1: no limit). An interrupted wait
/// returns normally with no events.
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> io::Result<()> {
    // SAFETY: the pointer and length describe a live, writable slice of pollfd.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if ready >= 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    if error.kind() == io::ErrorKind::Interrupted {
        fds.iter_mut().for_each(|fd| fd.revents = 0);
        return Ok(());
    }
    Err(error)
}

/// Makes the agent non-dumpable: processes of the same uid (everything in the sandbox) can
/// then neither ptrace it nor read its memory and environment through /proc. Children get
/// the usual setting back when they exec.
pub fn forbid_ptrace() -> io::Result<()> {
    let unused: libc::c_ulong = 0;
    // SAFETY: prctl with integer arguments has no memory effects; the unused arguments are
    // full words, as the kernel checks them.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, unused, unused, unused, unused) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// SIGKILLs every process in the group `pgid`.
pub fn kill_process_group(pgid: u32) {
    // A group that is already gone gives ESRCH: nothing left to kill.
    let _ = signal_process_group(pgid, libc::SIGKILL);
}

/// Sends `signal` to every process in the group `pgid`.
pub fn signal_process_group(pgid: u32, signal: i32) -> io::Result<()> {
    // 0 and 1 would address the agent's own group and every process it may signal.
    let pgid = libc::pid_t::try_from(pgid)
        .ok()
        .filter(|pgid| *pgid > 1)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill has no memory effects.
    if unsafe { libc::kill(-pgid, signal) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A descriptor that becomes readable when the (not yet reaped) child `pid` exits, where the
/// kernel and the seccomp profile allow it.
pub fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes two integers and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: the kernel just returned this descriptor to us and nothing else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn set_nonblocking(file: &impl AsRawFd) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own have no memory effects.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Turns a system call's `-1` into the error it set.
fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// A new pseudo-terminal of `size`: its master and its slave, both close-on-exec.
pub fn open_pty(size: TermSize) -> io::Result<(File, File)> {
    let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: posix_openpt returns a new descriptor or -1.
    let master = check(unsafe { libc::posix_openpt(flags) })?;
    // SAFETY: the kernel just returned this descriptor to us and nothing else owns it.
    let master = unsafe { OwnedFd::from_raw_fd(master) };
    // SAFETY: unlockpt and TIOCGPTPEER take the descriptor and integers only.
    check(unsafe { libc::unlockpt(master.as_raw_fd()) })?;
    // Opens the slave from the master: no path in /dev/pts to look up or race on.
    // SAFETY: as for unlockpt.
    let slave = check(unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCGPTPEER, flags) })?;
    // SAFETY: as for the master.
    let slave = unsafe { OwnedFd::from_raw_fd(slave) };
    set_window_size(&master, size)?;
    Ok((File::from(master), File::from(slave)))
}

pub fn set_window_size(terminal: &impl AsRawFd, size: TermSize) -> io::Result<()> {
    let window = libc::winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one winsize from the pointer, which is live for the call.
    check(unsafe { libc::ioctl(terminal.as_raw_fd(), libc::TIOCSWINSZ, &window) })?;
    Ok(())
}

/// In a child between fork and exec (async-signal-safe): starts a new session and makes the
/// terminal on its stdin its controlling terminal, so job control and hangups work.
pub fn take_controlling_terminal() -> io::Result<()> {
    // SAFETY: setsid takes nothing.
    check(unsafe { libc::setsid() })?;
    // SAFETY: TIOCSCTTY takes an integer, no pointer.
    check(unsafe { libc::ioctl(0, libc::TIOCSCTTY, 0) })?;
    Ok(())
}

/// A counter that a poll waits on: readable from [`EventFd::notify`] until [`EventFd::clear`].
pub struct EventFd(OwnedFd);

impl EventFd {
    pub fn new() -> io::Result<Self> {
        // SAFETY: eventfd returns a new descriptor or -1.
        let fd = check(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
        // SAFETY: the kernel just returned this descriptor to us and nothing else owns it.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn notify(&self) {
        // Cannot fail short of the counter overflowing, which leaves it readable anyway.
        // SAFETY: writes the 8 bytes of a live u64.
        unsafe { libc::eventfd_write(self.0.as_raw_fd(), 1) };
    }

    pub fn clear(&self) {
        let mut count: libc::eventfd_t = 0;
        // Non-blocking: a counter already at zero gives EAGAIN, which is fine.
        // SAFETY: reads 8 bytes into a live u64.
        unsafe { libc::eventfd_read(self.0.as_raw_fd(), &mut count) };
    }
}

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// One heap for all the agent's threads. The allocator would give each connection thread an
/// arena of its own, each keeping what a busy moment freed; thousands of idle sandboxes each
/// hold that for nothing, and the agent's threads rarely allocate at once.
pub fn share_one_heap() {
    // SAFETY: mallopt takes integers and only changes the allocator's settings.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
}

/// Puts SIGHUP, SIGINT, SIGQUIT and SIGTERM back to their default action. A sandbox starts the
/// agent so; an agent started where they were ignored (in the background, under nohup) would
/// otherwise hand that down to every command, and Ctrl-C or a hang-up would do nothing.
pub fn restore_default_signals() {
    for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
        // SAFETY: signal() takes no pointers; SIG_DFL is always a valid disposition.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }
}

/// What a started command's `oom_score_adj` is: the kernel's first choice when the sandbox runs
/// out of memory, before the agent.
const OOM_VICTIM_SCORE: &[u8] = b"1000";

/// The agent's own `oom_score_adj`, opened while the agent may still open its /proc files
/// (once non-dumpable they are root's), and its value then.
struct OwnOomScore {
    file: File,
    own: Vec<u8>,
    /// Spawns take turns: the agent's score is raised for the length of one.
    turn: std::sync::Mutex<()>,
}

/// How the agent makes the commands it starts the first victims of memory running out.
enum OomVictims {
    /// Raised for the fork that starts each (see [`spawn_as_oom_victim`]).
    RaisedForTheFork(OwnOomScore),
    /// The sandbox's kernel has no OOM killer (gVisor's, the backend says so with
    /// `--no-oom-killer`): a score chooses nothing, so commands are started with posix_spawn
    /// and keep the agent's.
    NoneChosen,
}

static OOM_VICTIMS: std::sync::OnceLock<OomVictims> = std::sync::OnceLock::new();

/// Learns how commands are made the first OOM victims, for [`spawn_as_oom_victim`]: keeps the
/// agent's `oom_score_adj` at hand, unless the kernel has no OOM killer. Before
/// [`forbid_ptrace`]. Without either, commands are raised after they start.
pub fn keep_own_oom_score(oom_killer: bool) {
    if !oom_killer {
        let _ = OOM_VICTIMS.set(OomVictims::NoneChosen);
        return;
    }
    let path = "/proc/self/oom_score_adj";
    let own = std::fs::read(path).map(|v| v.trim_ascii().to_vec());
    let file = std::fs::OpenOptions::new().write(true).open(path);
    if let (Ok(own), Ok(file)) = (own, file) {
        let _ = OOM_VICTIMS.set(OomVictims::RaisedForTheFork(OwnOomScore {
            file,
            own,
            turn: std::sync::Mutex::new(()),
        }));
    }
}

/// Runs `spawn` so that the process it starts is the sandbox's preferred victim should memory
/// run out, from its first instruction: the agent raises its own score for the moment (which
/// needs no privilege, nor does lowering it back to where it started) and the child inherits
/// it, so no child of the command is ever forked at the agent's score. The child cannot raise
/// its own before exec (it is non-dumpable like the agent, so its /proc files are root's), and
/// raising it after the spawn left a window. The first thing the child does is put the agent's
/// score back, through the agent's descriptor, so the agent is raised only for the fork itself.
/// That needs a fork: a vfork child (posix_spawn's) shares the agent's memory until exec, and
/// the kernel kills every process sharing the memory of the one it picks, so memory running out
/// in that window took the agent with it.
pub fn spawn_as_oom_victim(
    command: &mut Command,
    spawn: impl FnOnce(&mut Command) -> io::Result<Child>,
) -> io::Result<Child> {
    use std::os::unix::fs::FileExt;
    use std::os::unix::process::CommandExt;
    let score = match OOM_VICTIMS.get() {
        Some(OomVictims::RaisedForTheFork(score)) => score,
        Some(OomVictims::NoneChosen) => return spawn(command),
        None => {
            let child = spawn(command)?;
            let _ = std::fs::write(
                format!("/proc/{}/oom_score_adj", child.id()),
                OOM_VICTIM_SCORE,
            );
            return Ok(child);
        }
    };
    let (agent_score, own) = (score.file.as_raw_fd(), score.own.as_slice());
    let restore_agent = move || {
        // SAFETY: pwrite is async-signal-safe; the descriptor and bytes live as long as the
        // process (a static), and nothing here allocates or locks.
        unsafe { libc::pwrite(agent_score, own.as_ptr().cast(), own.len(), 0) };
        Ok(())
    };
    // SAFETY: the hook only makes one async-signal-safe system call (above).
    unsafe { command.pre_exec(restore_agent) };
    let _turn = score
        .turn
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let _ = score.file.write_at(OOM_VICTIM_SCORE, 0);
    let spawned = spawn(command);
    let _ = score.file.write_at(&score.own, 0);
    spawned
}

/// Whether commands start without a fork of their own: the sandbox's kernel has no OOM killer
/// to make them the first victims of (see [`spawn_as_oom_victim`]).
pub fn commands_need_no_fork() -> bool {
    matches!(OOM_VICTIMS.get(), Some(OomVictims::NoneChosen))
}

/// The exit status of the child `pid`, reaping it: waiting for it with `block`, else `None`
/// while it runs.
pub fn wait_for_exit(pid: u32, block: bool) -> io::Result<Option<ExitStatus>> {
    let pid =
        libc::pid_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let options = if block { 0 } else { libc::WNOHANG };
    let mut status = 0;
    loop {
        // SAFETY: waits for a child of ours; `status` is a live int.
        match unsafe { libc::waitpid(pid, &mut status, options) } {
            0 => return Ok(None),
            reaped if reaped > 0 => return Ok(Some(ExitStatus::from_raw(status))),
            _ => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
}

/// What a file the kernel writes afresh for every read (cgroup and proc figures) holds, read
/// from its start in one `pread` into `buffer`: a descriptor kept open reads the current
/// figures with no path walk, which in gVisor costs more than the read. `None` when it cannot
/// be read or may go on past the buffer.
pub fn read_generated<'a>(file: &File, buffer: &'a mut [u8]) -> Option<&'a str> {
    use std::os::unix::fs::FileExt;
    let len = loop {
        match file.read_at(buffer, 0) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            read => break read.ok()?,
        }
    };
    if len >= buffer.len() {
        return None;
    }
    std::str::from_utf8(&buffer[..len]).ok()
}

/// The sandbox's process limit, from its pids cgroup (v2, then v1), when it has one.
pub fn process_limit() -> Option<u64> {
    ["/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok()?.trim().parse().ok())
}

/// Renames `from` to `to` unless something is at `to` (`EEXIST`), atomically where the kernel
/// can (`RENAME_NOREPLACE`).
pub fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (from_c, to_c) = (c(from)?, c(to)?);
    // SAFETY: two valid NUL-terminated paths; renameat2 touches no memory of ours beyond them.
    let renamed = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            from_c.as_ptr(),
            libc::AT_FDCWD,
            to_c.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if renamed == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() != Some(libc::EINVAL) {
        return Err(error);
    }
    // gVisor's file systems refuse RENAME_NOREPLACE. Checked, then renamed: only the sandbox's
    // own processes could slip a file in between, and what they lose is their own file.
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(io::Error::from_raw_os_error(libc::EEXIST));
    }
    std::fs::rename(from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_file_is_read_whole_each_time_or_not_at_all() {
        let status = File::open("/proc/self/status").unwrap();
        let mut buffer = [0; 8192];
        let first = read_generated(&status, &mut buffer).unwrap().to_owned();
        assert!(
            first.starts_with("Name:") && first.ends_with('\n'),
            "{first}"
        );
        // Read again from its start through the same descriptor: the whole file again.
        let again = read_generated(&status, &mut buffer).unwrap();
        assert_eq!(again.lines().next(), first.lines().next());
        // A buffer it fills may have cut it short.
        assert_eq!(read_generated(&status, &mut [0; 16]), None);
    }
}
