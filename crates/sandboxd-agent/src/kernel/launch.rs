//! Starting a kernel: its connection file (loopback ports, a fresh key), its process (in its
//! own group, like any command of the sandbox) and the client's sockets, ready once the kernel
//! answers a `kernel_info_request` and its iopub messages arrive.

use super::capped::{self, Relay};
use jupyter_protocol::{ConnectionInfo, JupyterMessage, JupyterMessageContent, KernelInfoRequest};
use jupyter_zmq_client::{ClientIoPubConnection, ClientShellConnection};
use sandboxd_agent_proto::kernel::{KernelRunRequest, KERNEL_CONNECTION_FILE};
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Where kernels keep their connection files and settings, one directory each.
const KERNELS_DIR: &str = "/tmp/.sandboxd-kernels";
/// How long a kernel has to start and answer.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a starting kernel is asked whether it is ready.
const READY_POLL: Duration = Duration::from_millis(250);
/// How often a kernel is checked for having exited.
pub const EXIT_POLL: Duration = Duration::from_millis(50);
/// The end of a kernel's own stderr that a failed start reports.
const STDERR_TAIL: u64 = 2048;
/// The agent's own variables are not the kernel's business.
const PRIVATE_ENV_PREFIX: &str = "SANDBOXD_";

pub struct Kernel {
    child: Child,
    /// Also its process group id.
    pub pid: u32,
    pub shell: ClientShellConnection,
    pub iopub: ClientIoPubConnection,
    /// Notified when the kernel sent a message over the cap: its connection was cut.
    pub too_large: Arc<Notify>,
    /// Whether all a run printed reaches iopub before the kernel says it is idle: a run of
    /// any other kernel ends behind a fence (`run.rs`).
    pub output_before_idle: bool,
    /// The client's sockets reach the kernel through these.
    _relays: [Relay; 2],
    dir: PathBuf,
}

impl Kernel {
    /// Whether the kernel has exited, and how.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Interrupts the running code as Jupyter's signal interrupt mode does.
    pub fn interrupt(&self) {
        // SAFETY: a plain kill(2) of the kernel's process (not its group: a child the code
        // started keeps running, as in Jupyter).
        unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGINT) };
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        crate::sys::kill_process_group(self.pid);
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts the kernel `request` names; an error says why, for the caller.
pub async fn start(request: &KernelRunRequest) -> Result<Kernel, String> {
    let dir = PathBuf::from(KERNELS_DIR).join(&request.context);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let (ports, listeners) = jupyter_zmq_client::peek_ports_with_listeners(ip, 5)
        .await
        .map_err(|e| format!("cannot find free loopback ports: {e}"))?;
    let info = ConnectionInfo {
        transport: jupyter_protocol::connection_info::Transport::TCP,
        ip: ip.to_string(),
        stdin_port: ports[0],
        control_port: ports[1],
        hb_port: ports[2],
        shell_port: ports[3],
        iopub_port: ports[4],
        signature_scheme: "hmac-sha256".into(),
        key: random_hex()?,
        kernel_name: None,
    };
    let connection_file = dir.join("connection.json");
    write_private(
        &connection_file,
        &serde_json::to_vec(&info).map_err(|e| e.to_string())?,
    )?;
    let stderr_file = dir.join("kernel.log");
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&stderr_file)
        .map_err(|e| format!("cannot make {}: {e}", stderr_file.display()))?;
    let mut command = command(request, &connection_file.to_string_lossy(), &dir);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0);
    // The relays' ports are taken while the kernel's are still held, so none is one of them.
    let too_large = Arc::new(Notify::new());
    let relays = [
        capped::relay(info.shell_port, too_large.clone()).await,
        capped::relay(info.iopub_port, too_large.clone()).await,
    ];
    let [Ok(shell_relay), Ok(iopub_relay)] = relays else {
        return Err("the kernel did not start: cannot listen on loopback for its messages".into());
    };
    let client_info = ConnectionInfo {
        shell_port: shell_relay.port,
        iopub_port: iopub_relay.port,
        ..info.clone()
    };
    // The ports are held until the kernel exists, then freed for it to bind.
    let child = crate::exec::start(command)
        .map_err(|e| format!("cannot run {:?}: {e}", request.kernel[0]))?;
    drop(listeners);
    let pid = child.id();
    let mut starting = Starting {
        child: Some(child),
        pid,
        dir,
        stderr_file,
    };
    let session = random_hex()?;
    let info = client_info;
    let connected = tokio::time::timeout(START_TIMEOUT, async {
        let iopub = jupyter_zmq_client::create_client_iopub_connection(&info, "", &session)
            .await
            .map_err(|e| e.to_string())?;
        let identity =
            jupyter_zmq_client::peer_identity_for_session(&session).map_err(|e| e.to_string())?;
        let shell = jupyter_zmq_client::create_client_shell_connection_with_identity(
            &info, &session, identity,
        )
        .await
        .map_err(|e| e.to_string())?;
        Ok::<_, String>((shell, iopub))
    });
    let (mut shell, mut iopub) = tokio::select! {
        connected = connected => match connected {
            Ok(Ok(sockets)) => sockets,
            Ok(Err(e)) => return Err(starting.failure(&format!("cannot connect to it: {e}"))),
            Err(_) => return Err(starting.failure("it did not open its ports in time")),
        },
        status = starting.exited() => return Err(starting.failure(&format!("it exited ({status})"))),
    };
    let ready = wait_until_ready(&mut shell, &mut iopub);
    let implementation = tokio::select! {
        ready = tokio::time::timeout(START_TIMEOUT, ready) => match ready {
            Ok(Ok(implementation)) => implementation,
            Ok(Err(e)) => return Err(starting.failure(&e)),
            Err(_) => return Err(starting.failure("it did not answer in time")),
        },
        status = starting.exited() => return Err(starting.failure(&format!("it exited ({status})"))),
    };
    let child = starting
        .child
        .take()
        .expect("the child is kept until the kernel is ready");
    Ok(Kernel {
        child,
        pid,
        shell,
        iopub,
        too_large,
        output_before_idle: IMPLEMENTATIONS_WITH_OUTPUT_BEFORE_IDLE
            .contains(&implementation.as_str()),
        _relays: [shell_relay, iopub_relay],
        dir: std::mem::take(&mut starting.dir),
    })
}

/// The kernels (by the `implementation` of their kernel info) known to flush what a run printed
/// to iopub before its idle status: ipykernel's output streams wait for their flush.
const IMPLEMENTATIONS_WITH_OUTPUT_BEFORE_IDLE: &[&str] = &["ipython"];

/// Asks for the kernel's info until it answers and its iopub messages reach us (a subscriber
/// misses what is published before its subscription took, so the first run could lose output);
/// answers the kernel's implementation.
async fn wait_until_ready(
    shell: &mut ClientShellConnection,
    iopub: &mut ClientIoPubConnection,
) -> Result<String, String> {
    loop {
        let request: JupyterMessage = KernelInfoRequest {}.into();
        shell.send(request).await.map_err(|e| e.to_string())?;
        let deadline = tokio::time::sleep(READY_POLL * 4);
        tokio::pin!(deadline);
        let mut implementation = None;
        loop {
            tokio::select! {
                reply = shell.read() => {
                    if let JupyterMessageContent::KernelInfoReply(info) = reply.map_err(|e| e.to_string())?.content {
                        implementation = Some(info.implementation);
                    }
                }
                message = iopub.read() => {
                    if let (Ok(_), Some(implementation)) = (message, implementation.as_ref()) {
                        return Ok(implementation.clone());
                    }
                }
                _ = &mut deadline => break,
            }
        }
    }
}

/// A kernel process until it is ready: on failure it is killed and its directory removed.
struct Starting {
    child: Option<Child>,
    pid: u32,
    dir: PathBuf,
    stderr_file: PathBuf,
}

impl Starting {
    /// Resolves once the process has exited.
    async fn exited(&mut self) -> String {
        loop {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                return status.to_string();
            }
            tokio::time::sleep(EXIT_POLL).await;
        }
    }

    fn failure(&mut self, what: &str) -> String {
        let tail = stderr_tail(&self.stderr_file);
        let mut message = format!("the kernel did not start: {what}");
        if !tail.is_empty() {
            message.push_str(&format!("; it wrote: {tail}"));
        }
        message
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            crate::sys::kill_process_group(self.pid);
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn command(request: &KernelRunRequest, connection_file: &str, dir: &std::path::Path) -> Command {
    let argv: Vec<String> = request
        .kernel
        .iter()
        .map(|arg| arg.replace(KERNEL_CONNECTION_FILE, connection_file))
        .collect();
    let mut command = Command::new(&argv[0]);
    let home = |name: &str| dir.join(name).to_string_lossy().into_owned();
    command
        .args(&argv[1..])
        .env_clear()
        .envs(
            std::env::vars_os()
                .filter(|(name, _)| !name.to_string_lossy().starts_with(PRIVATE_ENV_PREFIX)),
        )
        // The image's root is read-only: the kernel's settings and caches go to its directory.
        .env("IPYTHONDIR", home("ipython"))
        .env("MPLCONFIGDIR", home("matplotlib"))
        .env("JUPYTER_CONFIG_DIR", home("jupyter"))
        .env("JUPYTER_DATA_DIR", home("jupyter"))
        .env("JUPYTER_RUNTIME_DIR", home("jupyter"))
        .envs(&request.env);
    if let Some(cwd) = &request.cwd {
        command.current_dir(cwd);
    }
    command
}

fn random_hex() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn write_private(path: &std::path::Path, contents: &[u8]) -> Result<(), String> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| file.write_all(contents))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The last lines of what a kernel wrote to its stderr, one line.
fn stderr_tail(path: &std::path::Path) -> String {
    use std::io::{Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(size.saturating_sub(STDERR_TAIL)));
    let mut tail = Vec::new();
    let _ = file.take(STDERR_TAIL).read_to_end(&mut tail);
    let text = String::from_utf8_lossy(&tail);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}
