//! What the end-to-end agent tests share: the real agent binary, started as a local child
//! process, dialing an `AgentHub` in a temporary directory.
#![allow(dead_code)] // each test file uses its own part

use sandboxd_agent_proto::host::make_wake_fifo;
use sandboxd_agent_proto::{
    run_exec, AgentHub, AgentLease, AgentSecret, ExecRequest, ExecResult, ProtoError,
    AGENT_SECRET_FILE, AGENT_SECRET_LEN, AGENT_SPARES,
};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const READY_TIMEOUT: Duration = Duration::from_secs(10);
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// What the service adds to a command's timeout for the agent to report.
pub const REPORT_GRACE: Duration = Duration::from_secs(5);

/// The hub's secret, written beside the socket where the agent reads it at start.
pub fn secret_beside(socket: &Path) -> AgentSecret {
    let secret = AgentSecret::from_bytes(&[7; AGENT_SECRET_LEN]);
    std::fs::write(socket.with_file_name(AGENT_SECRET_FILE), secret.expose()).unwrap();
    secret
}

/// The agent process; killed when dropped.
pub struct Agent(pub Child);

/// How the agent starts commands.
#[derive(Clone, Copy)]
pub enum Spawning {
    /// A fork of their own, to start as the sandbox's first OOM victims (runc).
    Forked,
    /// Its quick spawn, where the sandbox's kernel has no OOM killer (gVisor).
    Quick,
}

impl Agent {
    pub fn spawn(socket: &Path) -> Self {
        Self::spawn_with(socket, Spawning::Forked)
    }

    pub fn spawn_with(socket: &Path, spawning: Spawning) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sandboxd-agent"));
        command.arg("--connect").arg(socket);
        if let Spawning::Quick = spawning {
            command.arg(sandboxd_agent_proto::AGENT_NO_OOM_KILLER_FLAG);
        }
        command
            .env("SANDBOXD_AGENT_TOKEN", "must not leak")
            .env("FROM_AGENT", "agent")
            .stdin(Stdio::null());
        // In a sandbox the agent starts with every signal at its default action. A test run
        // started in the background (`cmd &` ignores SIGINT and SIGQUIT) or under nohup
        // (SIGHUP) would hand its ignored signals down to the agent and so to the processes
        // it starts, and Ctrl-C or a hang-up would then do nothing.
        // SAFETY: signal() is async-signal-safe and takes no pointers; the closure touches
        // nothing else between fork and exec.
        unsafe {
            command.pre_exec(|| {
                for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
                    libc::signal(signal, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        Self(command.spawn().expect("start the agent"))
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Fields drop in order: the agent first, then the hub, then its directory.
pub struct Fixture {
    pub agent: Agent,
    pub hub: Arc<AgentHub>,
    pub socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Fixture {
    pub async fn start() -> Self {
        Self::start_with(Spawning::Forked).await
    }

    pub async fn start_with(spawning: Spawning) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("agent.sock");
        let hub = AgentHub::bind(&socket, secret_beside(&socket)).unwrap();
        make_wake_fifo(&socket).unwrap();
        let agent = Agent::spawn_with(&socket, spawning);
        hub.wait_ready(READY_TIMEOUT)
            .await
            .expect("the agent says hello");
        Self {
            agent,
            hub,
            socket,
            _dir: dir,
        }
    }

    /// Waits until the agent holds all its spares open, for at most `within`.
    pub async fn await_spares(&self, within: Duration) {
        let give_up = Instant::now() + within;
        while self.hub.idle_count() < AGENT_SPARES {
            assert!(
                Instant::now() < give_up,
                "only {} spares",
                self.hub.idle_count()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Closes the hub, lets the agent's dial fail and its wait begin, and binds a new hub at
    /// the same path: a service restart, without its word to the agent.
    pub async fn restart_hub(&mut self) {
        self.hub.close();
        tokio::time::sleep(Duration::from_millis(500)).await;
        self.hub = AgentHub::bind(&self.socket, secret_beside(&self.socket)).unwrap();
    }

    pub async fn connection(&self) -> AgentLease {
        self.hub
            .acquire(ACQUIRE_TIMEOUT)
            .await
            .expect("an idle connection")
    }

    pub async fn exec(
        &self,
        request: &ExecRequest,
        stdin: Option<Vec<u8>>,
    ) -> Result<ExecResult, ProtoError> {
        exec_on(&self.hub, request, stdin).await
    }
}

pub async fn exec_on(
    hub: &AgentHub,
    request: &ExecRequest,
    stdin: Option<Vec<u8>>,
) -> Result<ExecResult, ProtoError> {
    let connection = hub.acquire(ACQUIRE_TIMEOUT).await?;
    let deadline = Duration::from_millis(request.timeout_ms) + REPORT_GRACE;
    run_exec(connection, request, stdin, deadline).await
}

pub fn request(argv: &[&str]) -> ExecRequest {
    ExecRequest {
        argv: argv.iter().map(|arg| arg.to_string()).collect(),
        timeout_ms: 20_000,
        output_limit: 1 << 20,
        ..ExecRequest::default()
    }
}

pub fn sh(script: &str) -> ExecRequest {
    request(&["sh", "-c", script])
}

pub fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

/// Makes each named test run twice, on two worker threads: with the agent forking every command
/// (runc, where a command starts as the sandbox's first OOM victim) and with its quick spawn
/// (gVisor, whose kernel has none). Each is an `async fn NAME(fixture: FIXTURE)`, and FIXTURE
/// has `start_with(Spawning)`.
#[macro_export]
macro_rules! on_both_spawns {
    ($fixture:ident: $($test:ident),+ $(,)?) => {
        $(mod $test {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn forked() {
                super::$test($fixture::start_with(Spawning::Forked).await).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn quick() {
                super::$test($fixture::start_with(Spawning::Quick).await).await;
            }
        })+
    };
}
