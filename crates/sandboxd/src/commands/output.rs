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

/// A time the service gave in RFC 3339, to the second (as every table shows times):
/// `2026-05-09T07:29:33.123456789Z` is `2026-05-09T07:29:33Z`.
pub fn timestamp(rfc3339: &str) -> String {
    match rfc3339.split_once('.') {
        Some((to_seconds, fraction_and_zone)) => {
            let zone = fraction_and_zone.trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{to_seconds}{zone}")
        }
        None => rfc3339.to_string(),
    }
}

/// A size as people read it, in the configuration's units: `512b`, `3k`, `1.5m`, `34m`, `2g`
/// (one decimal below 10 of a unit, when it is not whole).
pub fn size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("t", 1 << 40),
        ("g", 1 << 30),
        ("m", 1 << 20),
        ("k", 1 << 10),
    ];
    let Some((suffix, unit)) = UNITS.into_iter().find(|(_, unit)| bytes >= *unit) else {
        return format!("{bytes}b");
    };
    let (bytes, unit) = (u128::from(bytes), u128::from(unit));
    let tenths = (bytes * 10 + unit / 2) / unit;
    if tenths < 100 && tenths % 10 != 0 {
        format!("{}.{}{suffix}", tenths / 10, tenths % 10)
    } else {
        format!("{}{suffix}", (bytes + unit / 2) / unit)
    }
}

/// `1 file`, `2 files`: the plural only when the count is not one.
pub fn counted(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

/// An optional value, or `-`.
pub fn or_dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_to_the_second() {
        assert_eq!(
            timestamp("2026-05-09T07:29:33.123456789Z"),
            "2026-05-09T07:29:33Z"
        );
        assert_eq!(
            timestamp("2026-05-09T07:29:33.5+02:00"),
            "2026-05-09T07:29:33+02:00"
        );
        assert_eq!(timestamp("2026-05-09T07:29:33Z"), "2026-05-09T07:29:33Z");
    }

    #[test]
    fn sizes_have_one_form() {
        for (bytes, shown) in [
            (0, "0b"),
            (1023, "1023b"),
            (3 * 1024, "3k"),
            (1536, "1.5k"),
            (35_589_632, "34m"),
            (256 << 20, "256m"),
            (10_695_475, "10m"),
            (5 << 30, "5g"),
            (u64::MAX, "16777216t"),
        ] {
            assert_eq!(size(bytes), shown, "{bytes}");
        }
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(counted(1, "file", "files"), "1 file");
        assert_eq!(counted(0, "file", "files"), "0 files");
        assert_eq!(counted(2, "directory", "directories"), "2 directories");
    }
}
