//! The in-sandbox agent. It dials the service's unix socket (bind-mounted read-only into the
//! sandbox), keeps spare connections open there, and runs the processes requested on them.
//! It uses std and libc only, so it links statically and runs in images without a libc or
//! a shell.

mod dialer;
mod exec;
mod files;
mod kill_all;
mod ports;
mod process;
mod seccomp;
mod sys;

use sandboxd_agent_proto::{AgentSecret, AGENT_SECRET_FILE};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
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
            sys::restore_default_signals();
            let secret = hardened.and_then(|()| read_secret(&socket));
            match secret {
                Ok(secret) => dialer::run(&socket, &secret),
                Err(message) => {
                    eprintln!("sandboxd-agent: {message}");
                    ExitCode::FAILURE
                }
            }
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

/// The secret the agent proves itself with, from [`AGENT_SECRET_FILE`] beside the socket. Read
/// once at start: the service removes the file once the agent has said hello, so later
/// sandbox processes (which run as the same uid) never find it. A file rather than an
/// environment variable because PID 1 (docker-init) would keep the variable in its own
/// environment, which every process of the sandbox's uid can read in /proc/1/environ.
fn read_secret(socket: &Path) -> Result<AgentSecret, String> {
    let path = socket.with_file_name(AGENT_SECRET_FILE);
    let mut text = String::new();
    // A secret is 64 hex digits; reading a little more is enough to refuse a longer file.
    std::fs::File::open(&path)
        .and_then(|file| file.take(256).read_to_string(&mut text))
        .map_err(|e| format!("cannot read the agent secret {}: {e}", path.display()))?;
    AgentSecret::parse(&text)
        .ok_or_else(|| format!("{} does not hold a well-formed secret", path.display()))
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
    fn the_secret_is_read_beside_the_socket_and_must_be_well_formed() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("agent.sock");
        let missing = read_secret(&socket).unwrap_err();
        assert!(
            missing.contains("cannot read the agent secret"),
            "{missing}"
        );
        let file = dir.path().join(AGENT_SECRET_FILE);
        std::fs::write(&file, "not hex").unwrap();
        assert!(read_secret(&socket).unwrap_err().contains("well-formed"));
        std::fs::write(&file, "ab".repeat(1000)).unwrap();
        assert!(read_secret(&socket).is_err(), "a long file is refused");
        let secret = AgentSecret::from_bytes(&[9; sandboxd_agent_proto::AGENT_SECRET_LEN]);
        std::fs::write(&file, format!("{}\n", secret.expose())).unwrap();
        assert_eq!(read_secret(&socket).unwrap(), secret);
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
