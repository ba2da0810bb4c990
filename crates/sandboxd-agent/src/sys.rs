//! The few system calls std does not wrap.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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

/// SIGKILLs every process in the group `pgid`.
pub fn kill_process_group(pgid: u32) {
    if let Ok(pgid) = libc::pid_t::try_from(pgid) {
        // SAFETY: kill has no memory effects; a group that is already gone gives ESRCH.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
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
