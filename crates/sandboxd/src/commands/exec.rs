//! `sandboxd exec ID -- CMD...`: runs a command in an open session, prints its output and
//! exits with its exit code. The command's pieces shared with `sandboxd run` live here.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, OutputArgs};
use anyhow::{Context, Result};
use clap::Args;
use sandboxd_api::{ExecRequest, ExecResult};
use sandboxd_client::Interface;
use std::io::{IsTerminal, Read, Write};

/// The exit code when the command ran past its timeout and was killed (as `timeout(1)`).
pub const EXIT_TIMED_OUT: u8 = 124;

#[derive(Args)]
pub struct ExecArgs {
    /// The session's id (`sandboxd sessions` lists them).
    id: String,
    #[command(flatten)]
    command: CommandArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

/// A command to run in a sandbox and how.
#[derive(Args)]
pub struct CommandArgs {
    /// Seconds before the command is killed (default: the service's policy).
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// The directory to run in (default: the sandbox's working directory, /workspace).
    #[arg(long)]
    cwd: Option<String>,
    /// Send this program's standard input to the command (text).
    #[arg(short = 'i', long)]
    stdin: bool,
    /// The program and its arguments, run as given (for a shell line: sh -c '...').
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    argv: Vec<String>,
}

impl CommandArgs {
    /// The API request, with this program's standard input read when asked for.
    pub fn request(&self) -> Result<ExecRequest> {
        let stdin = if self.stdin {
            let mut input = String::new();
            if std::io::stdin().is_terminal() {
                eprintln!(
                    "sandboxd: reading the command's input from the terminal; end it with Ctrl-D"
                );
            }
            std::io::stdin()
                .read_to_string(&mut input)
                .context("cannot read standard input as text (--stdin sends UTF-8 text)")?;
            Some(input)
        } else {
            None
        };
        Ok(ExecRequest {
            argv: Some(self.argv.clone()),
            cwd: self.cwd.clone(),
            stdin,
            timeout_secs: self.timeout,
            ..ExecRequest::default()
        })
    }
}

pub fn run(args: ExecArgs) -> Result<u8> {
    let client = args.service.client(Interface::Cli)?;
    let request = args.command.request()?;
    let result = block_on(client.exec(&args.id, &request))??;
    report(&result, args.output.json)
}

/// Prints a command's result (its output as is, or the API's JSON) and returns the exit code
/// this program ends with: the command's own, 128+N when signal N killed it, 124 on timeout.
pub fn report(result: &ExecResult, json: bool) -> Result<u8> {
    if json {
        print_json(result)?;
    } else {
        std::io::stdout().write_all(result.stdout.as_bytes())?;
        std::io::stdout().flush()?;
        std::io::stderr().write_all(result.stderr.as_bytes())?;
        for (truncated, stream) in [
            (result.stdout_truncated, "stdout"),
            (result.stderr_truncated, "stderr"),
        ] {
            if truncated {
                eprintln!("sandboxd: the command's {stream} was cut at the service's output limit");
            }
        }
        if result.timed_out {
            eprintln!("sandboxd: the command ran past its timeout and was killed");
        }
        if result.oom_killed {
            eprintln!("sandboxd: the command was killed: out of memory");
        }
    }
    Ok(exit_code(result))
}

fn exit_code(result: &ExecResult) -> u8 {
    if result.timed_out {
        return EXIT_TIMED_OUT;
    }
    match (result.exit_code, result.signal) {
        (Some(code), _) => code.clamp(0, 255) as u8,
        (None, Some(signal)) => 128u8.saturating_add(signal.clamp(0, 127) as u8),
        (None, None) => 128,
    }
}
