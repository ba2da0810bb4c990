//! Running a command with its output streamed as it is produced: it runs as a background
//! process of the session, its output comes over the event stream as bytes (base64 on the
//! wire) and is written here unchanged, and this program's stdin, when asked for, is sent to
//! it as bytes, chunk by chunk. Signals to this program reach the command.

use anyhow::{Context, Result};
use sandboxd_api::{ProcessInfo, StartProcess};
use sandboxd_client::{Client, ClientError, OutputEvent, OutputStream};
use std::io::{ErrorKind, Read, Write};
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;

/// The exit code when the command ran past its timeout and was killed (as `timeout(1)`).
pub const EXIT_TIMED_OUT: u8 = 124;
/// As a shell says: the command could not be executed, or was not found.
const EXIT_NOT_EXECUTABLE: u8 = 126;
const EXIT_NOT_FOUND: u8 = 127;
/// Bytes of stdin per request.
const STDIN_CHUNK: usize = 64 * 1024;
/// How long a signalled command has to exit (and its last output to arrive) before it is
/// killed.
const SIGNAL_GRACE: Duration = Duration::from_secs(2);

/// How a streamed command ended.
pub enum Ending {
    /// It exited: the code this program exits with.
    Exited(u8),
    /// This program got signal N: the command was sent it, and the exit code is 128+N.
    Signalled(i32),
    /// Standard output was closed (e.g. `| head -1`): the command was stopped, quietly.
    OutputClosed,
}

impl Ending {
    pub fn exit_code(&self) -> u8 {
        match self {
            Ending::Exited(code) => *code,
            Ending::Signalled(signal) => code_of(None, Some(*signal)),
            Ending::OutputClosed => 0,
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP, listened to from before anything starts, so that none is
/// missed while a session opens.
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Signals {
    pub fn listen() -> Result<Signals> {
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt()).context("cannot handle Ctrl-C")?,
            terminate: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
            hangup: signal(SignalKind::hangup()).context("cannot handle SIGHUP")?,
        })
    }

    /// The number of the next signal received.
    pub async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.interrupt.recv() => libc::SIGINT,
            _ = self.terminate.recv() => libc::SIGTERM,
            _ = self.hangup.recv() => libc::SIGHUP,
        }
    }
}

/// Runs `request` in session `id`, streaming its output, until it ends or a signal comes.
/// With `stdin`, this program's standard input is sent to it.
pub async fn run(
    client: &Client,
    id: &str,
    request: &StartProcess,
    signals: &mut Signals,
) -> Result<Ending> {
    // A command's default timeout, not a background process's (the longest allowed).
    let mut request = request.clone();
    if request.timeout_secs.is_none() {
        request.timeout_secs = Some(client.policy().await?.default_timeout_secs);
    }
    let process = match client.start_process(id, &request).await {
        Ok(process) => process,
        Err(ClientError::Api { code, message, .. }) if code == "spawn_failed" => {
            eprintln!("sandboxd: {message}");
            hint_shell_line(request.argv.as_deref().unwrap_or_default(), &message);
            return Ok(Ending::Exited(spawn_exit_code(&message)));
        }
        Err(e) => return Err(e.into()),
    };
    let mut output = client.process_output(id, &process.id).await?;
    let stdin = request.stdin.then(|| pump_stdin(client, id, &process.id));
    let ending = tokio::select! {
        ended = follow(&mut output) => ended?,
        signal = signals.recv() => Ending::Signalled(signal),
    };
    if let Ending::Signalled(signal) = ending {
        stop(client, id, &process.id, signal, &mut output).await;
    }
    if let Some(stdin) = stdin {
        stdin.abort();
    }
    if let Ending::OutputClosed = ending {
        // Its output has nowhere to go: stopped as a pipe's writer would be.
        let _ = client.signal_process(id, &process.id, libc::SIGPIPE).await;
    }
    Ok(ending)
}

/// Writes the output as it comes until the exit.
async fn follow(output: &mut OutputStream) -> Result<Ending> {
    loop {
        match output.next().await? {
            Some(OutputEvent::Stdout(bytes)) => {
                if let Err(e) = write_out(&mut std::io::stdout().lock(), &bytes) {
                    if e.kind() == ErrorKind::BrokenPipe {
                        return Ok(Ending::OutputClosed);
                    }
                    return Err(e).context("cannot write to standard output");
                }
            }
            Some(OutputEvent::Stderr(bytes)) => {
                // Nowhere else to say it if standard error is gone.
                let _ = write_out(&mut std::io::stderr().lock(), &bytes);
            }
            Some(OutputEvent::Dropped(bytes)) => eprintln!(
                "sandboxd: {bytes} bytes of the command's output were lost: it wrote faster than they could be sent (the service keeps policy.max_output_bytes)"
            ),
            Some(OutputEvent::Exit(info)) => return Ok(Ending::Exited(exit_code(&info))),
            None => anyhow::bail!(ClientError::Transport {
                url: "the output stream".into(),
                cause: "it ended before the command exited".into(),
            }),
        }
    }
}

fn write_out(out: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}

/// Passes `signal` on to the command, lets it end and its last output arrive for a moment,
/// then kills it.
async fn stop(client: &Client, id: &str, process_id: &str, signal: i32, output: &mut OutputStream) {
    let _ = client.signal_process(id, process_id, signal).await;
    if tokio::time::timeout(SIGNAL_GRACE, follow(output))
        .await
        .is_err()
    {
        let _ = client.signal_process(id, process_id, libc::SIGKILL).await;
    }
}

/// Sends this program's standard input to the process as it is read, then closes its stdin.
fn pump_stdin(client: &Client, id: &str, process_id: &str) -> tokio::task::JoinHandle<()> {
    let (chunks, mut received) = mpsc::channel::<Vec<u8>>(4);
    // A blocking thread: a terminal or a pipe cannot be read asynchronously in general.
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        loop {
            let mut chunk = vec![0; STDIN_CHUNK];
            match stdin.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(read) => {
                    chunk.truncate(read);
                    if chunks.blocking_send(chunk).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let (client, id, process_id) = (client.clone(), id.to_string(), process_id.to_string());
    tokio::spawn(async move {
        while let Some(chunk) = received.recv().await {
            // A command that stopped reading (or exited) ends the input.
            if client
                .write_process_stdin(&id, &process_id, chunk)
                .await
                .is_err()
            {
                return;
            }
        }
        let _ = client.close_process_stdin(&id, &process_id).await;
    })
}

/// 127 when the program was not found, 126 when it could not be executed, as a shell says.
/// Whether a refusal to start says there is no such program.
fn not_found(spawn_failure: &str) -> bool {
    spawn_failure.contains("(os error 2)")
}

/// Characters a shell line has and a program's name hardly ever does.
const SHELL_SYNTAX: &[char] = &[
    ' ', '\t', '\n', '|', '&', ';', '<', '>', '(', ')', '$', '`', '*', '?', '\'', '"', '\\',
];

/// When a single word that is plainly a shell line (`'echo hi && ls'`) was taken for a
/// program that does not exist, says how to run it as one.
pub fn hint_shell_line(argv: &[String], spawn_failure: &str) {
    if let [word] = argv {
        if not_found(spawn_failure) && word.contains(SHELL_SYNTAX) {
            eprintln!(
                "sandboxd: hint: that is a shell line, not a program: add --shell (-s) to run it through sh -c, or give `sh -c '...'` as the command"
            );
        }
    }
}

fn spawn_exit_code(message: &str) -> u8 {
    if not_found(message) {
        EXIT_NOT_FOUND
    } else {
        EXIT_NOT_EXECUTABLE
    }
}

/// The command's own exit code, 128+N when signal N killed it, 124 on timeout.
pub fn exit_code(info: &ProcessInfo) -> u8 {
    if info.timed_out {
        eprintln!("sandboxd: the command ran past its timeout and was killed");
        return EXIT_TIMED_OUT;
    }
    if info.oom_killed {
        eprintln!("sandboxd: the command was killed: out of memory");
    }
    code_of(info.exit_code, info.signal)
}

/// An exit status as a shell reports it.
pub fn code_of(exit_code: Option<i32>, signal: Option<i32>) -> u8 {
    match (exit_code, signal) {
        (Some(code), _) => code.clamp(0, 255) as u8,
        (None, Some(signal)) => 128u8.saturating_add(signal.clamp(0, 127) as u8),
        (None, None) => 128,
    }
}
