//! `sandboxd e2b env`: the shell lines that point the E2B SDKs at this service, from the same
//! URL and token discovery as the other client commands (`eval "$(sandboxd e2b env)"`).

use super::connection::ServiceArgs;
use anyhow::Result;
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum E2bCommand {
    /// Print `export E2B_API_URL=... E2B_SANDBOX_URL=... E2B_API_KEY=...` for a shell.
    Env(EnvArgs),
}

#[derive(Args)]
pub struct EnvArgs {
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(command: E2bCommand) -> Result<()> {
    let E2bCommand::Env(args) = command;
    print!("{}", env_lines(args.service.url(), &args.service.token()?));
    Ok(())
}

/// The control plane and every sandbox's envd are both at the service's own address: the
/// SDKs name the sandbox in a header.
fn env_lines(url: &str, token: &str) -> String {
    let url = url.trim_end_matches('/');
    format!(
        "export E2B_API_URL={url}\nexport E2B_SANDBOX_URL={url}\nexport E2B_API_KEY={}\n",
        shell_quote(token),
        url = shell_quote(url)
    )
}

/// One shell word, single-quoted when it holds anything but plain characters.
fn shell_quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.:/@%+=,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_name_one_address_twice_and_quote_what_needs_it() {
        assert_eq!(
            env_lines("http://127.0.0.1:7717/", "e2b_00ff"),
            "export E2B_API_URL=http://127.0.0.1:7717\nexport E2B_SANDBOX_URL=http://127.0.0.1:7717\nexport E2B_API_KEY=e2b_00ff\n"
        );
        assert_eq!(shell_quote("it's $x"), r"'it'\''s $x'");
    }
}
