//! `sandboxd exec ID -- CMD...`: runs a command in an open session, its output streamed as it
//! is produced, and exits with its exit code. The command's pieces shared with `sandboxd run`
//! live here.

use super::connection::{block_on, ServiceArgs, SessionArg};
use super::output::{print_json, OutputArgs};
use super::streamed::{self, Signals};
use anyhow::{bail, Context, Result};
use clap::Args;
use sandboxd_api::{ExecRequest, ExecResult, StartProcess};
use sandboxd_client::{Client, ClientError, Interface};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};

#[derive(Args)]
pub struct ExecArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
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
    /// An environment variable for the command, as KEY=VALUE; repeat for more.
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Send this program's standard input to the command, as bytes (with --json: as text).
    #[arg(short = 'i', long)]
    stdin: bool,
    /// Run CMD as a shell line through `sh -c` (its words joined by spaces): pipes, `&&`,
    /// redirections and variables work.
    #[arg(short = 's', long)]
    shell: bool,
    /// The program and its arguments, run as given (with --shell: a shell line).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    argv: Vec<String>,
}

impl CommandArgs {
    /// What runs: the words as given, or with `--shell` the line they make, run by `sh -c`.
    fn argv(&self) -> Vec<String> {
        if self.shell {
            vec!["sh".into(), "-c".into(), self.argv.join(" ")]
        } else {
            self.argv.clone()
        }
    }

    fn env(&self) -> Result<BTreeMap<String, String>> {
        let mut env = BTreeMap::new();
        for pair in &self.env {
            match pair.split_once('=') {
                Some((key, value)) if !key.is_empty() => {
                    env.insert(key.to_string(), value.to_string());
                }
                // As docker: a bare name passes this program's own value on.
                _ => match std::env::var(pair) {
                    Ok(value) if !pair.is_empty() => {
                        env.insert(pair.clone(), value);
                    }
                    _ => bail!("-e {pair:?} is not KEY=VALUE (nor a variable set here)"),
                },
            }
        }
        Ok(env)
    }

    /// The request for a streamed run, as a background process of the session.
    pub fn start_request(&self) -> Result<StartProcess> {
        if self.stdin && std::io::stdin().is_terminal() {
            eprintln!(
                "sandboxd: reading the command's input from the terminal; end it with Ctrl-D"
            );
        }
        Ok(StartProcess {
            argv: Some(self.argv()),
            cwd: self.cwd.clone(),
            env: self.env()?,
            stdin: self.stdin,
            timeout_secs: self.timeout,
            // Every byte: the command waits for this program rather than lose output.
            paced: true,
            ..StartProcess::default()
        })
    }

    /// The request for a run whose result is printed as the API's JSON at the end: its
    /// output is then text, and its input too.
    pub fn exec_request(&self) -> Result<ExecRequest> {
        let stdin = if self.stdin {
            let mut input = String::new();
            std::io::stdin().read_to_string(&mut input).context(
                "cannot read standard input as text (--stdin with --json sends UTF-8 text)",
            )?;
            Some(input)
        } else {
            None
        };
        Ok(ExecRequest {
            argv: Some(self.argv()),
            cwd: self.cwd.clone(),
            env: self.env()?,
            stdin,
            timeout_secs: self.timeout,
            ..ExecRequest::default()
        })
    }
}

pub fn run(args: ExecArgs) -> Result<u8> {
    let client = args.service.client(Interface::Cli)?;
    block_on(async {
        let mut signals = Signals::listen()?;
        let id = args.id.resolve(&client).await?;
        run_command(&client, &id, &args.command, args.output.json, &mut signals).await
    })?
}

/// Runs the command in session `id`: streamed, or with `json` to its end and printed as the
/// API's JSON. Returns the exit code.
pub async fn run_command(
    client: &Client,
    id: &str,
    command: &CommandArgs,
    json: bool,
    signals: &mut Signals,
) -> Result<u8> {
    if json {
        let request = command.exec_request()?;
        let argv = request.argv.as_deref().unwrap_or_default();
        return tokio::select! {
            result = client.exec(id, &request) => {
                if let Err(ClientError::Api { code, message, .. }) = &result {
                    if code == "spawn_failed" {
                        streamed::hint_shell_line(argv, message);
                    }
                }
                report_json(&result?)
            }
            signal = signals.recv() => Ok(streamed::Ending::Signalled(signal).exit_code()),
        };
    }
    let ending = streamed::run(client, id, &command.start_request()?, signals).await?;
    if let streamed::Ending::Signalled(_) = ending {
        eprintln!("sandboxd: interrupted");
    }
    Ok(ending.exit_code())
}

/// Prints a command's result as the API's JSON and returns the exit code this program ends
/// with: the command's own, 128+N when signal N killed it, 124 on timeout.
fn report_json(result: &ExecResult) -> Result<u8> {
    print_json(result)?;
    std::io::stdout().flush()?;
    if result.timed_out {
        return Ok(streamed::EXIT_TIMED_OUT);
    }
    Ok(streamed::code_of(result.exit_code, result.signal))
}
