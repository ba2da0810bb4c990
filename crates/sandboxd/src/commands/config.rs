//! `sandboxd config`: the embedded default config to start editing from, and a check of a
//! config file as `serve --check` makes it.

use super::serve::{print_allowed, report_worst_case};
use anyhow::Result;
use clap::Subcommand;
use sandboxd_config::{Config, EMBEDDED_DEFAULT};
use std::io::Write;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print the embedded default config (what `serve` uses without --config), to start
    /// editing from: `sandboxd config default > config.toml`.
    Default,
    /// Check a config file as `serve --check` does: exit 0 when it is valid, 2 (saying what is
    /// wrong, and for a misspelt key the closest known one) when it is not.
    Check {
        /// The config file (TOML).
        file: PathBuf,
    },
}

pub fn run(command: ConfigCommand) -> Result<()> {
    match command {
        ConfigCommand::Default => {
            let written = std::io::stdout().write_all(EMBEDDED_DEFAULT.as_bytes());
            // A reader that stopped early (`| head`) wanted no more.
            if let Err(e) = written {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(e.into());
                }
            }
        }
        ConfigCommand::Check { file } => {
            let config = Config::load(&file)?;
            report_worst_case(&config);
            print_allowed(&config);
        }
    }
    Ok(())
}
