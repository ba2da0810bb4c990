//! `sandboxd shell ID`: an interactive shell in a session, on a real terminal: this terminal
//! in raw mode, its keystrokes sent as they are typed, its window size followed (SIGWINCH),
//! until the shell exits; this program then exits with the shell's exit code.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::streamed::{code_of, Signals};
use anyhow::{bail, Context, Result};
use clap::Args;
use sandboxd_client::{Interface, TerminalEvent};
use std::io::{IsTerminal, Read, Write};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

/// The size of a terminal that reports none.
const DEFAULT_SIZE: (u16, u16) = (80, 24);

#[derive(Args)]
pub struct ShellArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    #[command(flatten)]
    service: ServiceArgs,
}

enum Step {
    Event(Option<TerminalEvent>),
    Keys(Option<Vec<u8>>),
    Resized,
    Signalled(i32),
}

pub fn run(args: ShellArgs) -> Result<u8> {
    let client = args.service.client(Interface::Cli)?;
    block_on(async {
        let id = args.id.resolve(&client).await?;
        let (cols, rows) = window_size().unwrap_or(DEFAULT_SIZE);
        let mut terminal = client.open_terminal(&id, cols, rows).await?;
        let mut resized = signal(SignalKind::window_change()).context("cannot follow resizes")?;
        // Raw, the terminal sends Ctrl-C as a key; these come from elsewhere (a closed window).
        let mut signals = Signals::listen()?;
        // Restored when dropped, however this ends.
        let _raw = RawMode::enable()?;
        let mut keys = read_keys();
        let mut typing = true;
        loop {
            let step = tokio::select! {
                event = terminal.next() => Step::Event(event?),
                keys = keys.recv(), if typing => Step::Keys(keys),
                _ = resized.recv() => Step::Resized,
                signal = signals.recv() => Step::Signalled(signal),
            };
            match step {
                Step::Event(Some(TerminalEvent::Output(bytes))) => {
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(&bytes)?;
                    stdout.flush()?;
                }
                Step::Event(Some(TerminalEvent::Exit { exit_code, signal })) => {
                    return Ok(code_of(exit_code, signal))
                }
                Step::Event(None) => bail!("the terminal closed before the shell exited"),
                Step::Keys(Some(bytes)) => terminal.send(&bytes).await?,
                // Standard input ended (it was not a terminal): the shell reads no more.
                Step::Keys(None) => typing = false,
                // Dropping the socket hangs the shell up; the terminal's mode is restored.
                Step::Signalled(signal) => return Ok(code_of(None, Some(signal))),
                Step::Resized => {
                    if let Some((cols, rows)) = window_size() {
                        terminal.resize(cols, rows).await?;
                    }
                }
            }
        }
    })?
}

/// Standard input as it is typed, read on a thread of its own.
fn read_keys() -> mpsc::Receiver<Vec<u8>> {
    let (keys, received) = mpsc::channel(16);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = [0u8; 4096];
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => return,
                Ok(read) => {
                    if keys.blocking_send(buffer[..read].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    received
}

/// This terminal's size in cells, when standard output is one.
fn window_size() -> Option<(u16, u16)> {
    // SAFETY: TIOCGWINSZ fills the winsize it is given.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: as above, on a descriptor this process holds.
    let got = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (got == 0 && size.ws_col > 0 && size.ws_row > 0).then_some((size.ws_col, size.ws_row))
}

/// The terminal in raw mode (keys are passed on as typed, Ctrl-C included, and not echoed
/// here: the shell's terminal echoes them), restored on drop. Nothing when standard input is
/// not a terminal.
struct RawMode(Option<libc::termios>);

impl RawMode {
    fn enable() -> Result<RawMode> {
        if !std::io::stdin().is_terminal() {
            return Ok(RawMode(None));
        }
        // SAFETY: tcgetattr fills the termios it is given.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: as above, on standard input, a terminal.
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut saved) } != 0 {
            return Err(std::io::Error::last_os_error()).context("cannot read the terminal's mode");
        }
        let mut raw = saved;
        // SAFETY: cfmakeraw changes the termios it is given.
        unsafe { libc::cfmakeraw(&mut raw) };
        // SAFETY: a termios made from the terminal's own.
        if unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &raw) } != 0 {
            return Err(std::io::Error::last_os_error()).context("cannot set the terminal raw");
        }
        Ok(RawMode(Some(saved)))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if let Some(saved) = &self.0 {
            // SAFETY: the terminal's own mode, read before.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, saved) };
        }
    }
}
