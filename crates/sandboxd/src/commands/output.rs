//! How the client commands print: the API's JSON for scripts (`--json`), aligned tables for
//! people.

use anyhow::Result;
use serde::Serialize;
use std::io::Write;

/// The `--json` flag of the commands that print something.
#[derive(clap::Args)]
pub struct OutputArgs {
    /// Print the API's JSON, for scripts, instead of text for people.
    #[arg(long)]
    pub json: bool,
}

/// Prints a value as the API's JSON, indented.
pub fn print_json<T: Serialize>(value: &T) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, value)?;
    writeln!(stdout)?;
    Ok(())
}

/// Columns of text, aligned on the widest cell; the last column is not padded.
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            rows: vec![header.iter().map(|h| h.to_string()).collect()],
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn print(&self) -> Result<()> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|row| row.get(c))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut stdout = std::io::stdout().lock();
        for row in &self.rows {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:<width$}  ", width = widths[c]));
                }
            }
            writeln!(stdout, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// A number of seconds as people say it: `42s`, `5m`, `3h`, `2d`.
pub fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

/// An optional value, or `-`.
pub fn or_dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}
