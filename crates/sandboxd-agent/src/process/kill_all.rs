//! Answers [`ProcessRequest::KillAll`](sandboxd_agent_proto::ProcessRequest::KillAll): SIGKILLs
//! every process in the sandbox but the agent and init. A timeout kills its command's process
//! group; processes that left the group (setsid) are out of its reach, and this is the way to be
//! rid of them without closing the session.
//!
//! Everything in the sandbox runs as the agent's uid, so `kill(-1)` reaches all of it. A fork
//! bomb may fork between two rounds, so the agent repeats until nothing is left, a bounded
//! number of times. `kill(-1)` reaches only the agent's PID namespace, which is the sandbox's
//! when the agent runs as the sandbox's entrypoint (its parent is the sandbox's init, PID 1,
//! and it is not root). An agent started otherwise (by hand, or by tests on a host) refuses:
//! there `kill(-1)` would reach every process of its user.

use crate::exec::error_event;
use sandboxd_agent_proto::{write_json, ErrorCode, ProcessEvent, ProtoError};
use std::collections::HashSet;
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::Duration;

const MAX_ROUNDS: usize = 200;
/// Lets the kernel finish the kills of one round before the next count.
const ROUND_PAUSE: Duration = Duration::from_millis(5);

pub fn kill_all(connection: &mut UnixStream) -> Result<(), ProtoError> {
    if !runs_as_sandbox_entrypoint() {
        return write_json(
            connection,
            &error_event(
                ErrorCode::BadRequest,
                "refused: this agent was not started by its sandbox's init as an unprivileged user, so killing every process could reach beyond the sandbox".into(),
            ),
        );
    }
    let (killed, remaining) = kill_every_process();
    write_json(connection, &ProcessEvent::KilledAll { killed, remaining })
}

fn runs_as_sandbox_entrypoint() -> bool {
    // SAFETY: getppid and geteuid cannot fail and have no memory effects.
    let (parent, euid) = unsafe { (libc::getppid(), libc::geteuid()) };
    parent == 1 && euid != 0
}

/// Returns how many processes were killed and how many were alive after the last round.
fn kill_every_process() -> (u32, u32) {
    let agent = std::process::id();
    let mut killed = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let alive = living_processes(agent);
        if alive.is_empty() {
            break;
        }
        killed.extend(alive);
        // SAFETY: kill has no memory effects. -1 addresses every process the agent may
        // signal except itself and init.
        unsafe { libc::kill(-1, libc::SIGKILL) };
        thread::sleep(ROUND_PAUSE);
    }
    let remaining = living_processes(agent).len();
    (count(killed.len()), count(remaining))
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The processes other than init and the agent that are not dead already (zombies wait
/// only for their parent, or init, to reap them).
fn living_processes(agent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != 1 && pid != agent)
        .filter(|&pid| is_alive(pid))
        .collect()
}

fn is_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false; // gone since the listing
    };
    // The state follows the command name, which is in parentheses and may contain anything.
    let state = stat
        .rfind(')')
        .and_then(|end| stat[end + 1..].split_whitespace().next());
    !matches!(state, Some("Z" | "X") | None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_outside_a_sandbox() {
        // Tests run from a test harness (not PID 1), so the agent's check says no here.
        assert!(!runs_as_sandbox_entrypoint());
    }

    #[test]
    fn counts_living_processes_only() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(living_processes(std::process::id()).contains(&pid));
        assert!(!living_processes(std::process::id()).contains(&std::process::id()));
        child.kill().unwrap();
        // Killed but not yet reaped: a zombie, which counts as dead.
        let mut waited = 0;
        while is_alive(pid) && waited < 100 {
            thread::sleep(Duration::from_millis(10));
            waited += 1;
        }
        assert!(!is_alive(pid));
        child.wait().unwrap();
        assert!(!is_alive(pid));
    }
}
