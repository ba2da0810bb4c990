//! The sandbox's init: the agent is the container's PID 1 on every platform (no engine init
//! runs beside it, which saves a process per sandbox).
//!
//! PID 1 must reap the orphans the sandbox's processes leave behind, or their zombies fill the
//! process limit; but a reaper in the agent's own process would take the exit statuses of the
//! agent's commands. So the agent forks before anything else exists: PID 1 only reaps and
//! passes the stop signals the platform sends it (`docker stop`, a pod's deletion) on to the
//! agent, and ends when the agent does, with its status; the agent runs as PID 1's child.
//! The kernel drops signals to PID 1 that it neither handles nor blocks, also SIGKILL from
//! inside its namespace, so the sandbox cannot take its init down; the signals PID 1 passes on
//! reach only the agent, which the sandbox's processes (of the agent's uid) can signal anyway.

/// The signals PID 1 passes on to the agent.
const FORWARDED: [libc::c_int; 6] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// In PID 1, forks: returns in the child (the agent), and never in PID 1, which reaps until
/// the agent is gone. Elsewhere it returns at once.
pub fn become_init_parent() -> Result<(), String> {
    if std::process::id() != 1 {
        return Ok(());
    }
    // SAFETY: no threads exist yet (called first in main), so the child may run anything.
    let agent = unsafe { libc::fork() };
    match agent {
        -1 => Err(format!(
            "cannot fork the agent from the sandbox's init: {}",
            std::io::Error::last_os_error()
        )),
        0 => Ok(()),
        agent => std::process::exit(serve_as_init(agent)),
    }
}

/// Reaps every child and passes the [`FORWARDED`] signals on until `agent` exits; returns
/// the exit code the sandbox ends with: the agent's fate is the sandbox's.
fn serve_as_init(agent: libc::pid_t) -> i32 {
    // Non-dumpable like the agent, so the sandbox's processes cannot ptrace their init.
    let _ = crate::sys::forbid_ptrace();
    // Blocked signals wait in PID 1's queue (the kernel never drops a blocked one) until
    // sigwaitinfo takes them: no handler runs, so nothing here is async-signal-unsafe.
    // SAFETY: the set is initialised by sigemptyset before use; the calls write only to it.
    let waited = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in FORWARDED.iter().chain(&[libc::SIGCHLD]) {
            libc::sigaddset(&mut set, *signal);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    loop {
        // Reaped before every wait: a child that exited before the mask was set sent a
        // SIGCHLD nobody saw.
        if let Some(code) = reap_exited(agent) {
            return code;
        }
        // SAFETY: `waited` is an initialised set; no siginfo is asked for.
        let signal = unsafe { libc::sigwaitinfo(&waited, std::ptr::null_mut()) };
        if FORWARDED.contains(&signal) {
            // SAFETY: kill takes no pointers; the agent is our child, so its pid is not reused
            // while we have not reaped it.
            unsafe { libc::kill(agent, signal) };
        }
    }
}

/// Reaps every child that has exited; the sandbox's exit code once the agent is among them
/// (or no child is left).
fn reap_exited(agent: libc::pid_t) -> Option<i32> {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only to `status`.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid == agent {
            return Some(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            });
        }
        match pid {
            0 => return None,
            -1 => match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                _ => return Some(1),
            },
            _ => continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks or unblocks the forwarded signals in the calling thread.
    unsafe fn mask_forwarded(how: libc::c_int) {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in FORWARDED {
            libc::sigaddset(&mut set, signal);
        }
        libc::sigprocmask(how, &set, std::ptr::null_mut());
    }

    #[test]
    fn init_passes_a_stop_signal_on_and_ends_with_the_agents_status() {
        // SAFETY: between fork and _exit the children make only async-signal-safe calls.
        unsafe {
            // Blocked from before init exists (it inherits the mask), so the signal cannot
            // come too early.
            mask_forwarded(libc::SIG_BLOCK);
            let init = libc::fork();
            assert!(init >= 0);
            if init == 0 {
                let agent = libc::fork();
                if agent == 0 {
                    mask_forwarded(libc::SIG_UNBLOCK);
                    loop {
                        libc::pause();
                    }
                }
                libc::_exit(serve_as_init(agent));
            }
            mask_forwarded(libc::SIG_UNBLOCK);
            libc::kill(init, libc::SIGTERM);
            let mut status = 0;
            assert_eq!(libc::waitpid(init, &mut status, 0), init);
            assert!(libc::WIFEXITED(status), "init itself died: {status}");
            assert_eq!(libc::WEXITSTATUS(status), 128 + libc::SIGTERM);
        }
    }
}
