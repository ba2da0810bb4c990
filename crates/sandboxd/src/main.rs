//! The sandboxd command: `sandboxd serve` runs the service; the other commands are its client
//! (sessions, commands, files) and its MCP server for agents (`sandboxd mcp`).
//!
//! Exit codes scripts can rely on:
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | done |
//! | 2 | usage or configuration error (bad flags, no token; `serve`: any failure to start; `config check`: a config that is not valid) |
//! | 3 | cannot connect to the service (or it stopped answering) |
//! | 4 | unauthorized: the service refused the token |
//! | 5 | the service answered with an error (its code and message are printed) |
//! | 6 | a local file could not be read or written (`cp`, `--stdin`) |
//!
//! `run`, `exec` and `shell` exit with the command's own exit code instead, 128+N when signal N
//! killed it, 124 when it ran past its timeout, 127 when the program was not found and 126 when
//! it could not be executed; `run` and `exec` exit 128+N when signal N stopped them (130 for
//! Ctrl-C, 143 for SIGTERM, 129 for SIGHUP), and 0 when their output was closed (`| head -1`).

mod commands;
mod exit;
mod remedy;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use exit::{client_exit_code, fail, is_broken_pipe, EXIT_USAGE};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sandboxd",
    // The commit comes from build.rs ("unknown" outside a git checkout).
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("SANDBOXD_COMMIT"), ")"),
    about = "Sandboxes for AI agents, on your own host"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service: the HTTP API on localhost, sandboxes on the local Docker engine.
    Serve(commands::serve::ServeArgs),
    /// Open a session, run one command in it, print its output and close it; exits with the
    /// command's exit code.
    Run(commands::run::RunArgs),
    /// List the open sessions.
    Sessions(commands::sessions::SessionsArgs),
    /// Open a session and print its id.
    Open(commands::open::OpenArgs),
    /// Run a command in an open session; exits with the command's exit code.
    Exec(commands::exec::ExecArgs),
    /// Copy a file or a directory into a session (LOCAL ID:PATH) or out of one (ID:PATH LOCAL).
    Cp(commands::cp::CpArgs),
    /// An interactive shell in an open session, on a terminal.
    Shell(commands::shell::ShellArgs),
    /// List a directory in a session.
    Ls(commands::files::LsArgs),
    /// Delete files (and with -r directories) in a session.
    Rm(commands::files::RmArgs),
    /// Close sessions at once (`--all`: every running one).
    Close(commands::close::CloseArgs),
    /// Kill every process in a session (also what left its command's process group, which a
    /// timeout cannot reach); the session stays open.
    KillAll(commands::kill_all::KillAllArgs),
    /// Show a session's activity log, newest first.
    Activity(commands::activity::ActivityArgs),
    /// Show the audit log (refused cross-tenant attempts), newest first; administrator only.
    Audit(commands::audit::AuditArgs),
    /// The runtimes the service allows (`sandboxd runtimes` lists them).
    Runtimes(commands::runtimes::RuntimesArgs),
    /// Serve MCP on stdin/stdout for an agent, forwarding to a running service.
    Mcp(commands::mcp::McpArgs),
    /// Make a new token: for a tenant (prints the config lines with its hash) or the service.
    Token(commands::token::TokenArgs),
    /// Print the completion script for a shell: bash, zsh, fish, elvish or powershell.
    Completions(commands::completions::CompletionsArgs),
    /// The E2B SDKs pointed at this service: `eval "$(sandboxd e2b env)"`.
    #[command(subcommand)]
    E2b(commands::e2b::E2bCommand),
    /// Freeze every process of a session: no CPU, memory, processes and files kept.
    Pause(commands::pause::PauseArgs),
    /// Thaw a paused session.
    Resume(commands::pause::PauseArgs),
    /// Snapshots of sessions: create, list, get, delete (open one with `open --snapshot`).
    Snapshot(commands::snapshot::SnapshotArgs),
    /// Volumes: storage that outlives sessions (create, list, show, delete; mount one with
    /// `open --volume`).
    Volumes(commands::volumes::VolumesArgs),
    /// Open independent sessions with a session's files.
    Fork(commands::fork::ForkArgs),
    /// The TCP ports listening in a session's sandbox, with their processes.
    Ports(commands::ports::PortsArgs),
    /// A link that opens a port of a session in a browser without the token (`--list`,
    /// `--revoke SHARE_ID`).
    Share(commands::ports::ShareArgs),
    /// Forward a local port on 127.0.0.1 to a port in a session's sandbox, until Ctrl-C.
    Forward(commands::forward::ForwardArgs),
    /// Run code in a code context of a session (state kept between runs): prints its output
    /// and results, saves its images to files; exits 1 on an exception, 124 on a timeout.
    Code(commands::code::CodeArgs),
    /// The names a session of an egress runtime may reach; `--set` narrows them.
    Network(commands::network::NetworkArgs),
    /// The config file: `default` prints the embedded one, `check FILE` checks one.
    #[command(subcommand)]
    Config(commands::config::ConfigCommand),
}

fn main() -> ExitCode {
    let cli = match Cli::from_arg_matches(&command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        // Any failure of the service to start is a configuration problem to fix.
        Command::Serve(args) => return usage_exit(commands::serve::run(args)),
        // A config that does not load is the same problem as at the service's start.
        Command::Config(command) => return usage_exit(commands::config::run(command)),
        Command::Run(args) => commands::run::run(args),
        Command::Exec(args) => commands::exec::run(args),
        Command::Sessions(args) => commands::sessions::run(args).map(|()| 0),
        Command::Open(args) => commands::open::run(args).map(|()| 0),
        Command::Cp(args) => commands::cp::run(args).map(|()| 0),
        Command::Shell(args) => commands::shell::run(args),
        Command::Ls(args) => commands::files::ls(args).map(|()| 0),
        Command::Rm(args) => commands::files::rm(args).map(|()| 0),
        Command::Close(args) => commands::close::run(args).map(|()| 0),
        Command::KillAll(args) => commands::kill_all::run(args).map(|()| 0),
        Command::Activity(args) => commands::activity::run(args).map(|()| 0),
        Command::Audit(args) => commands::audit::run(args).map(|()| 0),
        Command::Token(args) => commands::token::run(args).map(|()| 0),
        Command::Runtimes(args) => commands::runtimes::run(args).map(|()| 0),
        Command::Mcp(args) => commands::mcp::run(args).map(|()| 0),
        Command::Completions(args) => {
            commands::completions::run(args, command());
            Ok(0)
        }
        Command::E2b(command) => commands::e2b::run(command).map(|()| 0),
        Command::Pause(args) => commands::pause::run(args, false).map(|()| 0),
        Command::Resume(args) => commands::pause::run(args, true).map(|()| 0),
        Command::Snapshot(args) => commands::snapshot::run(args).map(|()| 0),
        Command::Volumes(args) => commands::volumes::run(args).map(|()| 0),
        Command::Fork(args) => commands::fork::run(args).map(|()| 0),
        Command::Ports(args) => commands::ports::ports(args).map(|()| 0),
        Command::Share(args) => commands::ports::share(args).map(|()| 0),
        Command::Forward(args) => commands::forward::run(args).map(|()| 0),
        Command::Code(args) => commands::code::run(args),
        Command::Network(args) => commands::network::run(args).map(|()| 0),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // The reader went away (`| head`): nothing left to say, and no one to say it to.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => fail(&e, client_exit_code(&e)),
    }
}

/// The command line: the derived one, with the service's arguments also before a command.
fn command() -> clap::Command {
    commands::connection::with_leading_service_args(Cli::command())
}

fn usage_exit(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e, EXIT_USAGE),
    }
}
