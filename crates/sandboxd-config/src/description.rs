//! Descriptions of runtimes and recipes: one line for people and agents.

use crate::error::{invalid, ConfigError};

/// The longest description a runtime or recipe may have: a line in a listing, not a manual.
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 200;

/// A description as shown: trimmed, one line of printable text, at most
/// [`MAX_DESCRIPTION_CHARS`] characters.
pub(crate) fn check_description(text: &str, field: &str) -> Result<String, ConfigError> {
    let text = text.trim();
    if text.chars().any(char::is_control) {
        return Err(invalid(
            field,
            "must be one line of text, without line breaks or control characters",
        ));
    }
    let length = text.chars().count();
    if length > MAX_DESCRIPTION_CHARS {
        return Err(invalid(
            field,
            format!("is {length} characters; at most {MAX_DESCRIPTION_CHARS} (one line saying what the runtime is for)"),
        ));
    }
    Ok(text.to_string())
}
