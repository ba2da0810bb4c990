//! How a test service runs: the built `sandboxd serve` in a child process, or inside the test
//! process through [`sandboxd_server::assemble`], the function the binary calls, given what
//! the binary's flags would give it (its own thread and Tokio runtime, as the binary has).

use super::{agent_binary, sandboxd_bin, LOG_FILE};
use sandboxd_server::{assemble, ServiceOptions};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

pub enum Running {
    Process(Child),
    InProcess(InProcess),
}

/// A service assembled in this process; stopped when dropped.
pub struct InProcess {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl InProcess {
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops the service (as Ctrl-C stops the binary) and waits until it has stopped.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Assembles the service with the state directory's config as `sandboxd serve --listen
/// 127.0.0.1:0 --config DIR/config.toml --state-dir DIR` would, and returns it with its URL
/// once it listens.
pub fn start_in_process(state_dir: &Path, engine_socket: Option<&Path>) -> (InProcess, String) {
    let config = sandboxd_config::Config::load(&state_dir.join("config.toml")).unwrap();
    let options = ServiceOptions {
        config,
        listen: "127.0.0.1:0".parse().unwrap(),
        state_dir: state_dir.to_path_buf(),
        docker_socket: engine_socket
            .map_or("/var/run/docker.sock".into(), |s| s.display().to_string()),
        agent: Some(agent_binary()),
        token: None,
        allowed_hosts: Vec::new(),
        header_timeout: Duration::from_secs(30),
    };
    let (listening, address) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("start a Tokio runtime");
        runtime.block_on(async move {
            let service = match assemble(options).await {
                Ok(service) => service,
                Err(e) => {
                    let _ = listening.send(Err(format!("{:#}", anyhow::Error::from(e))));
                    return;
                }
            };
            let _ = listening.send(Ok(service.address()));
            let stopped = async move {
                let _ = stopped.await;
            };
            service.serve(stopped).await.expect("serve the API");
        });
        // What the service left running in the background (the egress doors, the checks).
        runtime.shutdown_timeout(Duration::from_secs(5));
    });
    let service = InProcess {
        stop: Some(stop),
        thread: Some(thread),
    };
    match address.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(address)) => (service, format!("http://{address}")),
        Ok(Err(error)) => panic!("the service did not start: {error}"),
        Err(e) => panic!("the service did not listen within 60 s: {e}"),
    }
}

/// Starts `sandboxd serve` on a free loopback port with the state directory's config, and
/// returns it with its URL once it listens.
pub fn spawn_service(state_dir: &Path, engine_socket: Option<&Path>) -> (Child, String) {
    // A service started logged appends to its file, after a restart too.
    let log = std::fs::OpenOptions::new()
        .append(true)
        .open(state_dir.join(LOG_FILE))
        .ok();
    let (stderr, filter) = match &log {
        Some(file) => (Stdio::from(file.try_clone().unwrap()), "debug".to_string()),
        None => (
            Stdio::inherit(),
            std::env::var("SANDBOXD_LOG").unwrap_or_else(|_| "warn".into()),
        ),
    };
    let mut command = Command::new(sandboxd_bin());
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(state_dir.join("config.toml"))
        .arg("--state-dir")
        .arg(state_dir);
    if let Some(socket) = engine_socket {
        command.arg("--docker-socket").arg(socket);
    }
    let mut child = command
        .env_remove("SANDBOXD_TOKEN")
        .env("SANDBOXD_AGENT", agent_binary())
        .env("SANDBOXD_LOG", filter)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start sandboxd");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut log = log;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(file) = &mut log {
                use std::io::Write;
                let _ = writeln!(file, "{line}");
            }
            if let Some(url) = line.strip_prefix("sandboxd listening on ") {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(url) => (child, url),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let status = child.wait().unwrap();
            panic!("sandboxd exited ({status}) before listening; its stderr is above");
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            let _ = child.kill();
            panic!("sandboxd did not print its address within 60 s");
        }
    }
}
