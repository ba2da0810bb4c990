//! The in-sandbox agent. It dials the service's unix socket (bind-mounted read-only into the
//! sandbox), keeps spare connections open there, and runs the processes requested on them.
//! It uses std and libc only, so it links statically and runs in images without a libc or
//! a shell.

mod dialer;
mod exec;
mod files;
mod kill_all;
mod process;
mod seccomp;
mod sys;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

const DEFAULT_SOCKET: &str = "/.sandboxd/agent.sock";
const USAGE: &str = "usage: sandboxd-agent [--connect SOCKET_PATH]";

fn main() -> ExitCode {
    match parse_args(std::env::args_os().skip(1)) {
        Ok(Some(socket)) => {
            // Before any thread or process exists, so all of them inherit the filter. Without
            // it the sandbox would be weaker than promised: refuse to serve.
            let hardened = seccomp::deny_io_uring()
                .map_err(|e| format!("cannot install the seccomp filter refusing io_uring: {e}"))
                .and_then(|()| {
                    sys::forbid_ptrace()
                        .map_err(|e| format!("cannot make the agent non-dumpable: {e}"))
                });
            if let Err(message) = hardened {
                eprintln!("sandboxd-agent: {message}");
                return ExitCode::FAILURE;
            }
            dialer::run(&socket)
        }
        Ok(None) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("sandboxd-agent: {message}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// The socket to dial, or `None` when help was asked for.
fn parse_args(mut args: impl Iterator<Item = OsString>) -> Result<Option<PathBuf>, String> {
    let mut socket = PathBuf::from(DEFAULT_SOCKET);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--connect") => {
                socket = args.next().ok_or("--connect needs a path")?.into();
            }
            Some("-h" | "--help") => return Ok(None),
            _ => match arg.to_str().and_then(|a| a.strip_prefix("--connect=")) {
                Some(path) => socket = path.into(),
                None => return Err(format!("unknown argument {arg:?}")),
            },
        }
    }
    Ok(Some(socket))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<PathBuf>, String> {
        parse_args(args.iter().map(OsString::from))
    }

    #[test]
    fn arguments() {
        assert_eq!(parse(&[]), Ok(Some(DEFAULT_SOCKET.into())));
        assert_eq!(parse(&["--connect", "/s"]), Ok(Some("/s".into())));
        assert_eq!(parse(&["--connect=/t"]), Ok(Some("/t".into())));
        assert_eq!(parse(&["--help"]), Ok(None));
        assert!(parse(&["--connect"]).is_err());
        assert!(parse(&["--bogus"]).is_err());
    }
}
