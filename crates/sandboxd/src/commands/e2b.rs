//! `sandboxd e2b env`: the shell lines that point the E2B SDKs at this service, from the same
//! URL and token discovery as the other client commands (`eval "$(sandboxd e2b env)"`).

use super::connection::ServiceArgs;
use anyhow::Result;
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum E2bCommand {
    /// Print `export E2B_API_URL=... E2B_SANDBOX_URL=... E2B_VOLUME_API_URL=... E2B_API_KEY=...` for a shell (and
    /// `E2B_VALIDATE_API_KEY=false` for a token not in E2B's `e2b_<hex>` form).
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

/// The control plane, every sandbox's envd and the volumes' files are all at the service's
/// own address: the SDKs name the sandbox in a header, a volume in the path. SDK releases from about 2.45 refuse an API key that is
/// not `e2b_<hex>` unless told not to check it: a token of another form gets that line too.
fn env_lines(url: &str, token: &str) -> String {
    let url = url.trim_end_matches('/');
    let mut lines = format!(
        "export E2B_API_URL={url}\nexport E2B_SANDBOX_URL={url}\nexport E2B_VOLUME_API_URL={url}\nexport E2B_API_KEY={}\n",
        shell_quote(token),
        url = shell_quote(url)
    );
    if !in_e2b_key_form(token) {
        lines.push_str("export E2B_VALIDATE_API_KEY=false\n");
    }
    lines
}

/// Whether the SDKs' own check passes: `e2b_` and lower-case hex digits.
fn in_e2b_key_form(token: &str) -> bool {
    token.strip_prefix("e2b_").is_some_and(|hex| {
        !hex.is_empty()
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
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
    fn the_lines_name_one_address_for_all_and_quote_what_needs_it() {
        assert_eq!(
            env_lines("http://127.0.0.1:7717/", "e2b_00ff"),
            "export E2B_API_URL=http://127.0.0.1:7717\nexport E2B_SANDBOX_URL=http://127.0.0.1:7717\nexport E2B_VOLUME_API_URL=http://127.0.0.1:7717\nexport E2B_API_KEY=e2b_00ff\n"
        );
        assert_eq!(shell_quote("it's $x"), r"'it'\''s $x'");
        for other_form in ["00ff00ff00ff00ff", "e2b_00FF", "e2b_", "sk_00ff"] {
            assert!(
                env_lines("http://h", other_form).ends_with("export E2B_VALIDATE_API_KEY=false\n"),
                "{other_form}"
            );
        }
    }
}
