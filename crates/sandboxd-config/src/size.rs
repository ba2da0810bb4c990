//! Byte sizes as operators write them: `"512m"`, `"1g"`, `"1.5g"`, `"1048576"`.

use crate::error::invalid;
use crate::error::ConfigError;
use serde::Deserialize;

const UNITS: [(&str, u64); 5] = [
    ("t", 1 << 40),
    ("g", 1 << 30),
    ("m", 1 << 20),
    ("k", 1 << 10),
    ("b", 1),
];

/// Parses a size with an optional binary suffix (k, m, g, t; also kb, mib, ...).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let lower = text.trim().to_ascii_lowercase();
    let bad = || {
        format!("\"{text}\" is not a size; write a number with an optional unit, e.g. \"512m\" or \"1g\"")
    };
    let trimmed = lower
        .strip_suffix("ib")
        .or_else(|| {
            lower
                .strip_suffix('b')
                .filter(|rest| rest.ends_with(|c: char| c.is_ascii_alphabetic()))
        })
        .unwrap_or(&lower);
    let (number, multiplier) = UNITS
        .iter()
        .find_map(|(suffix, mult)| trimmed.strip_suffix(suffix).map(|n| (n, *mult)))
        .unwrap_or((trimmed, 1));
    let number = number.trim();
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    // Finite, not negative (digits and a point only) and at most u64::MAX: the cast keeps it.
    #[allow(clippy::cast_possible_truncation)]
    let bytes = bytes.round() as u64;
    Ok(bytes)
}

/// The shortest exact form: `1g`, `512m`, or plain bytes.
pub fn format_bytes(bytes: u64) -> String {
    for (suffix, mult) in UNITS {
        if mult > 1 && bytes >= mult && bytes.is_multiple_of(mult) {
            return format!("{}{suffix}", bytes / mult);
        }
    }
    format!("{bytes}b")
}

/// A size written as a number of bytes or a string such as `"512m"`.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum SizeValue {
    Bytes(u64),
    Text(String),
}

impl SizeValue {
    pub(crate) fn resolve(&self, field: &str) -> Result<u64, ConfigError> {
        match self {
            SizeValue::Bytes(n) => Ok(*n),
            SizeValue::Text(text) => parse_bytes(text).map_err(|message| invalid(field, message)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_operators_write() {
        assert_eq!(parse_bytes("512m"), Ok(512 << 20));
        assert_eq!(parse_bytes("1g"), Ok(1 << 30));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(parse_bytes("1.5g"), Ok(3 << 29));
        assert_eq!(parse_bytes("64kb"), Ok(64 << 10));
        assert_eq!(parse_bytes("2MiB"), Ok(2 << 20));
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("100b"), Ok(100));
    }

    #[test]
    fn refuses_what_is_not_a_size() {
        for text in ["", "g", "lots", "-1g", "1x", "1..2m", "1 g b"] {
            assert!(parse_bytes(text).is_err(), "{text:?} should be refused");
        }
    }

    #[test]
    fn formats_exactly() {
        assert_eq!(format_bytes(1 << 30), "1g");
        assert_eq!(format_bytes(512 << 20), "512m");
        assert_eq!(format_bytes(1000), "1000b");
    }
}
