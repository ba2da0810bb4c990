//! `sandboxd completions bash|zsh|fish`: the shell's completion script, from the command's
//! own definition.

use clap::Args;
use clap_complete::Shell;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for (e.g. `sandboxd completions bash > /etc/bash_completion.d/sandboxd`).
    shell: Shell,
}

pub fn run(args: CompletionsArgs, mut command: clap::Command) {
    clap_complete::generate(args.shell, &mut command, "sandboxd", &mut std::io::stdout());
}
