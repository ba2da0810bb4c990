//! A seccomp filter of the agent's own, stacked on the engine's profile before anything runs,
//! so every process in the sandbox (all of them descend from the agent) inherits it.
//!
//! It refuses io_uring, a frequent source of kernel privilege escalations that Docker's
//! default profile allowed before Docker 25 and that no sandboxed program needs: without it,
//! programs fall back to ordinary system calls as on a kernel without io_uring (`ENOSYS`).

use std::io;

/// io_uring_setup, io_uring_enter and io_uring_register share these numbers on every
/// architecture (system calls from 424 on are numbered alike everywhere).
const IO_URING_FIRST: u32 = 425;
const IO_URING_LAST: u32 = 427;
/// x32 system calls are the x86-64 numbers with this bit set; masking it catches both.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// Where `struct seccomp_data` keeps the system call number.
const SECCOMP_DATA_NR_OFFSET: u32 = 0;

fn statement(code: u32, k: u32) -> libc::sock_filter {
    jump(code, k, 0, 0)
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    // The codes are libc's BPF opcode constants combined, all below 0x100.
    #[allow(clippy::cast_possible_truncation)]
    let code = code as u16;
    libc::sock_filter { code, jt, jf, k }
}

/// The filter: io_uring's calls fail with `ENOSYS`, everything else is left to the engine's
/// profile (a stacked filter can only take permissions away).
fn io_uring_filter() -> [libc::sock_filter; 6] {
    [
        statement(
            libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
            SECCOMP_DATA_NR_OFFSET,
        ),
        statement(
            libc::BPF_ALU | libc::BPF_AND | libc::BPF_K,
            !X32_SYSCALL_BIT,
        ),
        // Below the range: on to "allow" (skip 2); at or above it: check the top.
        jump(
            libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K,
            IO_URING_FIRST,
            0,
            2,
        ),
        // Above the range: allow (skip 1).
        jump(
            libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K,
            IO_URING_LAST,
            1,
            0,
        ),
        statement(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | (libc::ENOSYS as u32 & libc::SECCOMP_RET_DATA),
        ),
        statement(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ]
}

/// Installs the filter on the calling thread, which must be the only one, so every thread
/// and process started later inherits it.
pub fn deny_io_uring() -> io::Result<()> {
    let mut filter = io_uring_filter();
    let len = u16::try_from(filter.len())
        .map_err(|_| io::Error::other("the seccomp filter is over 65535 instructions"))?;
    let program = libc::sock_fprog {
        len,
        filter: filter.as_mut_ptr(),
    };
    // An unprivileged process may only install a filter under no_new_privs; the engine sets
    // it already, this makes the agent not depend on that.
    // The kernel wants the unused arguments 0 as full words: variadic ints would leave the
    // upper halves undefined.
    let unused: libc::c_ulong = 0;
    // SAFETY: prctl with integer arguments has no memory effects.
    if unsafe {
        libc::prctl(
            libc::PR_SET_NO_NEW_PRIVS,
            1 as libc::c_ulong,
            unused,
            unused,
            unused,
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `program` points at `filter`, which lives until the call returns; the kernel
    // copies the program.
    let installed = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER as libc::c_ulong,
            unused,
            &program as *const libc::sock_fprog,
        )
    };
    if installed != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filtered_numbers_are_this_platforms_io_uring_calls() {
        assert_eq!(
            u32::try_from(libc::SYS_io_uring_setup).unwrap(),
            IO_URING_FIRST
        );
        assert_eq!(
            u32::try_from(libc::SYS_io_uring_register).unwrap(),
            IO_URING_LAST
        );
    }

    #[test]
    fn io_uring_fails_with_enosys_and_other_calls_still_work() {
        // In a child process, so the test runner keeps its own system calls.
        // SAFETY: the child only makes system calls and exits; it touches no locks.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = match deny_io_uring() {
                Err(_) => 1,
                Ok(()) => {
                    let mut params = [0u8; 120];
                    // SAFETY: io_uring_setup with a zeroed, large-enough params buffer.
                    let ring =
                        unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, params.as_mut_ptr()) };
                    let errno = io::Error::last_os_error().raw_os_error();
                    // SAFETY: getpid has no effects.
                    let pid = unsafe { libc::getpid() };
                    if ring == -1 && errno == Some(libc::ENOSYS) && pid > 0 {
                        0
                    } else {
                        2
                    }
                }
            };
            // SAFETY: leaving the forked child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "child did not exit: {status}");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "1: not installed, 2: io_uring allowed"
        );
    }
}
