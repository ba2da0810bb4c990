//! The in-sandbox agent. It dials the service's unix socket (bind-mounted read-only into the
//! sandbox), keeps spare connections open there, and runs the processes requested on them; or,
//! where the platform reaches into the sandbox instead (Kubernetes), it listens on a loopback
//! port (`--listen`). `--install DEST` copies the agent to DEST, for an init container;
//! `--own UID DIR...` gives each directory to UID, for the init container that readies a
//! pod's volumes; `--install DEST --no-network` also takes the pod's interfaces down, for the
//! init container of a sandbox without a network.
//! It uses std and libc only, so it links statically and runs in images without a libc or
//! a shell.

mod dialer;
mod exec;
mod files;
mod head_tail;
mod headroom;
mod init;
mod kernel;
mod listener;
mod no_network;
mod ports;
mod process;
mod quick_spawn;
mod seccomp;
mod serve;
mod sys;
mod wake;

use sandboxd_agent_proto::{AgentSecret, AGENT_NO_OOM_KILLER_FLAG, AGENT_SECRET_FILE};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const DEFAULT_SOCKET: &str = "/.sandboxd/agent.sock";
const USAGE: &str =
    "usage: sandboxd-agent [--connect SOCKET_PATH | --listen ADDRESS:PORT | --install DEST [--no-network] | --own UID DIR...] [--no-oom-killer] [--claim-digest HEX]";

/// What the agent was started to do.
#[derive(Debug, PartialEq, Eq)]
enum Mode {
    /// Dial the service's socket at this path.
    Connect(PathBuf),
    /// Accept the service's connections on this address.
    Listen(String),
    /// Copy the agent's binary to this path, read-only and executable (with `no_network`,
    /// first take every interface but the loopback down), and exit.
    Install {
        dest: PathBuf,
        no_network: bool,
    },
    /// Give each directory (not what is in it) to this uid and its group, and exit.
    Own(u32, Vec<PathBuf>),
    Help,
}

/// What the agent was started to do, and what it is told of the sandbox's kernel.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    mode: Mode,
    /// False with [`AGENT_NO_OOM_KILLER_FLAG`]: the kernel kills nothing by OOM score.
    oom_killer: bool,
    /// With `--claim-digest HEX`, a listening agent accepts only claims of the secret with
    /// this digest ([`AgentSecret::digest`]), not the first one sent.
    claim_digest: Option<String>,
}

fn main() -> ExitCode {
    let Args {
        mode,
        oom_killer,
        claim_digest,
    } = match parse_args(std::env::args_os().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("sandboxd-agent: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    sys::share_one_heap();
    let served = match mode {
        Mode::Help => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Mode::Install { dest, no_network } => {
            if let Err(message) = no_network
                .then(no_network::take_interfaces_down)
                .transpose()
            {
                eprintln!("sandboxd-agent: {message}");
                return ExitCode::FAILURE;
            }
            return install(&dest);
        }
        Mode::Own(uid, dirs) => return own(uid, &dirs),
        // Before any thread or process exists, so all of them inherit the filter. Without it
        // the sandbox would be weaker than promised: refuse to serve.
        Mode::Connect(socket) => init::become_init_parent()
            .and_then(|()| harden(oom_killer))
            .and_then(|()| read_secret(&socket))
            .and_then(|secret| dialer::run(&socket, &secret).map(|never| match never {})),
        Mode::Listen(address) => init::become_init_parent()
            .and_then(|()| harden(oom_killer))
            .and_then(|()| listener::run(&address, claim_digest.as_deref())),
    };
    if let Err(message) = served {
        eprintln!("sandboxd-agent: {message}");
    }
    ExitCode::FAILURE
}

fn harden(oom_killer: bool) -> Result<(), String> {
    seccomp::deny_io_uring()
        .map_err(|e| format!("cannot install the seccomp filter refusing io_uring: {e}"))?;
    sys::keep_own_oom_score(oom_killer);
    sys::forbid_ptrace().map_err(|e| format!("cannot make the agent non-dumpable: {e}"))?;
    sys::restore_default_signals();
    Ok(())
}

/// Copies the running binary to `dest` (mode 0555), for an init container that hands the
/// agent to the sandbox's container through a shared volume.
fn install(dest: &Path) -> ExitCode {
    use std::os::unix::fs::PermissionsExt;
    let copied = std::fs::copy("/proc/self/exe", dest)
        .and_then(|_| std::fs::set_permissions(dest, std::fs::Permissions::from_mode(0o555)));
    match copied {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sandboxd-agent: cannot install to {}: {e}", dest.display());
            ExitCode::FAILURE
        }
    }
}

/// Gives each directory to `uid` (group `uid` too) unless it has them: a volume's root, which
/// some storage drivers make root's. Opened without following a symlink, and only the
/// directory itself, never what is in it.
fn own(uid: u32, dirs: &[PathBuf]) -> ExitCode {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    for dir in dirs {
        let owned = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(dir)
            .and_then(|file| {
                let meta = file.metadata()?;
                if meta.uid() == uid && meta.gid() == uid {
                    return Ok(());
                }
                // SAFETY: fchown on a descriptor this function owns for the call's length.
                match unsafe { libc::fchown(file.as_raw_fd(), uid, uid) } {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        if let Err(e) = owned {
            eprintln!(
                "sandboxd-agent: cannot give {} to uid {uid}: {e}",
                dir.display()
            );
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The secret the agent proves itself with, from [`AGENT_SECRET_FILE`] beside the socket. Read
/// once at start: the service removes the file once the agent has said hello, so later
/// sandbox processes (which run as the same uid) never find it. A file rather than an
/// environment variable because PID 1 (the agent's init, or an engine's) would keep the
/// variable in its own environment, which every process of the sandbox's uid can read in
/// /proc/1/environ.
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

/// What to do, from the arguments: the last mode named wins; dialing the default socket when
/// none is.
fn parse_args(mut args: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let mut mode = Mode::Connect(PathBuf::from(DEFAULT_SOCKET));
    let mut oom_killer = true;
    let mut claim_digest = None;
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|arg| format!("unknown argument {arg:?}"))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_string(), Some(value.to_string())),
            None => (arg, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next().and_then(|v| v.into_string().ok()))
                .ok_or(format!("{flag} needs a value"))
        };
        mode = match flag.as_str() {
            AGENT_NO_OOM_KILLER_FLAG if inline.is_none() => {
                oom_killer = false;
                continue;
            }
            "--claim-digest" => {
                let digest = value()?;
                let well_formed = digest.len() == 64
                    && digest
                        .bytes()
                        .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
                if !well_formed {
                    return Err(format!(
                        "--claim-digest needs 64 lowercase hex digits, not {digest:?}"
                    ));
                }
                claim_digest = Some(digest);
                continue;
            }
            "--connect" => Mode::Connect(value()?.into()),
            "--listen" => Mode::Listen(value()?),
            "--install" => Mode::Install {
                dest: value()?.into(),
                no_network: false,
            },
            "--no-network" if inline.is_none() => match mode {
                Mode::Install { dest, .. } => Mode::Install {
                    dest,
                    no_network: true,
                },
                _ => return Err("--no-network goes after --install DEST".into()),
            },
            // The directories are the arguments after the uid.
            "--own" => {
                let uid = value()?;
                let uid = uid
                    .parse()
                    .map_err(|_| format!("--own needs a uid, not {uid:?}"))?;
                let mode = Mode::Own(uid, args.map(PathBuf::from).collect());
                return Ok(Args {
                    mode,
                    oom_killer,
                    claim_digest,
                });
            }
            "-h" | "--help" => {
                return Ok(Args {
                    mode: Mode::Help,
                    oom_killer,
                    claim_digest,
                })
            }
            _ => return Err(format!("unknown argument {flag:?}")),
        };
    }
    Ok(Args {
        mode,
        oom_killer,
        claim_digest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Mode, String> {
        parse_args(args.iter().map(OsString::from)).map(|args| args.mode)
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
    fn own_refuses_a_symlink_and_leaves_an_owned_directory_alone() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let me = std::fs::metadata(dir.path()).unwrap();
        // Already its owner's (uid and gid alike for the sandbox's uid): nothing to do.
        if me.uid() == me.gid() {
            assert_eq!(own(me.uid(), &[dir.path().into()]), ExitCode::SUCCESS);
        }
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert_eq!(own(me.uid(), &[link]), ExitCode::FAILURE);
    }

    #[test]
    fn arguments() {
        assert_eq!(parse(&[]), Ok(Mode::Connect(DEFAULT_SOCKET.into())));
        assert_eq!(parse(&["--connect", "/s"]), Ok(Mode::Connect("/s".into())));
        assert_eq!(parse(&["--connect=/t"]), Ok(Mode::Connect("/t".into())));
        assert_eq!(
            parse(&["--listen", "127.0.0.1:7"]),
            Ok(Mode::Listen("127.0.0.1:7".into()))
        );
        assert_eq!(
            parse(&["--install=/a/b"]),
            Ok(Mode::Install {
                dest: "/a/b".into(),
                no_network: false
            })
        );
        assert_eq!(parse(&["--help"]), Ok(Mode::Help));
        assert_eq!(
            parse(&["--install", "/a", "--no-network"]),
            Ok(Mode::Install {
                dest: "/a".into(),
                no_network: true
            })
        );
        assert!(parse(&["--no-network"]).is_err());
        let digest = "ab".repeat(32);
        let listening = parse_args(
            ["--listen", "0.0.0.0:7", "--claim-digest", &digest]
                .iter()
                .map(OsString::from),
        )
        .unwrap();
        assert_eq!(listening.claim_digest, Some(digest.clone()));
        assert!(parse(&["--claim-digest", "AB"]).is_err());
        assert!(parse(&["--claim-digest", &digest.to_uppercase()]).is_err());
        assert_eq!(
            parse(&["--own", "61000", "/v/0", "/v/1"]),
            Ok(Mode::Own(61000, vec!["/v/0".into(), "/v/1".into()]))
        );
        assert!(parse(&["--own", "x", "/v/0"]).is_err());
        assert!(parse(&["--connect"]).is_err());
        assert!(parse(&["--bogus"]).is_err());
        let told = |args: &[&str]| parse_args(args.iter().map(OsString::from)).unwrap();
        assert!(told(&["--connect", "/s"]).oom_killer);
        assert_eq!(
            told(&["--connect", "/s", "--no-oom-killer"]),
            Args {
                mode: Mode::Connect("/s".into()),
                oom_killer: false,
                claim_digest: None,
            }
        );
        assert!(
            parse(&["--no-oom-killer=1"]).is_err(),
            "a flag takes no value"
        );
    }
}
