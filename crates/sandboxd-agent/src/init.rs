//! The sandbox's init, for platforms that start the agent itself as PID 1 (Kubernetes; on
//! Docker, the engine's init is PID 1 and the agent its child).
//!
//! PID 1 must reap the orphans the sandbox's processes leave behind, or their zombies fill the
//! process limit; but a reaper in the agent's own process would take the exit statuses of the
//! agent's commands. So the agent forks before anything else exists: PID 1 only reaps, and
//! ends when the agent does, with its status; the agent runs as PID 1's child, as on Docker.
//! The kernel drops signals to PID 1 that it has no handler for, also SIGKILL from inside its
//! namespace, so the sandbox cannot take its init down.

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
        agent => std::process::exit(reap_until(agent)),
    }
}

/// Reaps every child until `agent` exits, and returns the exit code the sandbox ends with:
/// the agent's fate is the sandbox's.
fn reap_until(agent: libc::pid_t) -> i32 {
    // Non-dumpable like the agent, so the sandbox's processes cannot ptrace their init.
    let _ = crate::sys::forbid_ptrace();
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only to `status`.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == agent {
            return if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            };
        }
        if pid == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            return 1;
        }
    }
}
