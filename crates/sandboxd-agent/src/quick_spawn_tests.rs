use super::*;
use crate::exec::environment;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;

/// Runs `argv` with `env` and `cwd`, its stdout in a pipe: what it printed, its pid, and its
/// exit status.
fn run(argv: &[&str], env: &[(&str, &str)], cwd: Option<&str>) -> io::Result<(String, u32, i32)> {
    let argv: Vec<String> = argv.iter().map(ToString::to_string).collect();
    let set = env
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let program = Program {
        argv: &argv,
        env: environment(&set),
        cwd,
    };
    let null = File::open("/dev/null")?;
    let (mut stdout, stdout_end) = pipe()?;
    let started = spawn(
        &program,
        [null.as_raw_fd(), stdout_end.as_raw_fd(), null.as_raw_fd()],
    )?;
    drop(stdout_end);
    let mut printed = String::new();
    stdout.read_to_string(&mut printed)?;
    let status = crate::sys::wait_for_exit(started.pid, true)?.expect("waited for");
    Ok((printed, started.pid, status.code().unwrap_or(-1)))
}

#[test]
fn the_command_starts_with_no_signal_blocked_and_sigpipe_at_its_default() {
    // The test's own process ignores SIGPIPE (Rust's runtime does): the child must not.
    // SAFETY: reads a disposition into a zeroed struct.
    let own = unsafe {
        let mut own: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut own);
        own
    };
    assert_eq!(own.sa_sigaction, libc::SIG_IGN);
    let (printed, _, code) = run(
        &[
            "/bin/sh",
            "-c",
            "exec grep -E '^Sig(Blk|Ign)' /proc/self/status",
        ],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(code, 0, "{printed}");
    let field = |name: &str| {
        let line = printed.lines().find(|line| line.starts_with(name)).unwrap();
        u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
    };
    assert_eq!(field("SigBlk:"), 0, "{printed}");
    let sigpipe_bit = 1 << (libc::SIGPIPE - 1);
    assert_eq!(field("SigIgn:") & sigpipe_bit, 0, "{printed}");
}

#[test]
fn a_program_is_found_on_the_command_s_path_and_leads_a_group_of_its_own() {
    let (printed, pid, code) = run(
        &[
            "sh",
            "-c",
            "echo $$ $(cut -d' ' -f5 /proc/$$/stat) $PWD $GREETING; exit 7",
        ],
        &[
            ("PATH", "/nonexistent:/usr/bin:/bin"),
            ("GREETING", "hello"),
        ],
        Some("/tmp"),
    )
    .unwrap();
    assert_eq!(code, 7);
    assert_eq!(printed, format!("{pid} {pid} /tmp hello\n"));
}

#[test]
fn what_cannot_start_comes_back_as_the_exec_s_error() {
    let dir = tempfile::tempdir().unwrap();
    let not_executable = dir.path().join("data");
    std::fs::write(&not_executable, "not a program").unwrap();
    let no_interpreter = dir.path().join("script");
    std::fs::write(&no_interpreter, "echo hi\n").unwrap();
    std::fs::set_permissions(&no_interpreter, std::fs::Permissions::from_mode(0o755)).unwrap();
    let errno = |argv: &[&str], cwd| run(argv, &[], cwd).unwrap_err().raw_os_error();
    assert_eq!(errno(&["/nonexistent/program"], None), Some(libc::ENOENT));
    assert_eq!(
        errno(&["no-such-program-anywhere"], None),
        Some(libc::ENOENT)
    );
    assert_eq!(
        errno(&[not_executable.to_str().unwrap()], None),
        Some(libc::EACCES)
    );
    assert_eq!(
        errno(&[no_interpreter.to_str().unwrap()], None),
        Some(libc::ENOEXEC)
    );
    assert_eq!(
        errno(&["/bin/true"], Some("/nonexistent")),
        Some(libc::ENOENT)
    );
}

#[test]
fn stdio_among_the_first_three_descriptors_is_left_to_std() {
    let argv = ["/bin/true".to_string()];
    let program = Program {
        argv: &argv,
        env: Vec::new(),
        cwd: None,
    };
    let refused = spawn(&program, [0, 1, 2]).err().map(|e| e.kind());
    assert_eq!(refused, Some(io::ErrorKind::Unsupported));
}
