//! "Did you mean": the known key closest to a misspelt one, for serde's `unknown field` errors.
//!
//! Serde names the fields a table takes in its error ("expected one of ..."), except for the
//! tables whose struct flattens the limits in (the top level, `[runtimes.NAME]`,
//! `[recipes.NAME]`): their own keys are listed here, checked against the structs by the tests.

use crate::limits::LimitsFile;

/// `ConfigFile`'s own keys (the limits are flattened in).
const TOP_LEVEL_KEYS: &[&str] = &[
    "token",
    "token_file",
    "default_runtime",
    "max_sessions",
    "runtimes",
    "policy",
    "recipes",
    "build",
    "tenants",
    "extra_allowed_origins",
    "backend",
    "e2b",
    "ports",
    "egress",
    "secrets",
    "webhooks",
];
/// `RuntimeFile`'s own keys.
const RUNTIME_KEYS: &[&str] = &[
    "description",
    "image",
    "runtime",
    "interpreter",
    "pool_size",
    "kernels",
    "egress",
    "secrets",
];
/// `RecipeFile`'s own keys.
const RECIPE_KEYS: &[&str] = &["description", "base", "steps", "interpreter", "kernels"];

/// The parse error's text, with "did you mean `KEY`?" when it is an unknown key close to a
/// known one of its table.
pub(crate) fn explain(error: &toml::de::Error, text: &str) -> String {
    let message = error.to_string();
    let Some(key) = suggestion(error.message(), text) else {
        return message;
    };
    let mut explained = format!("{}\ndid you mean `{key}`?", message.trim_end());
    // For a flattened table the parser points at the table, not at the key.
    if let Some(line) = unknown_key_line(error.message(), text) {
        explained.push_str(&format!(" (on line {line})"));
    }
    explained
}

/// The line of an unknown key serde lists no alternatives for, when one line starts with it.
fn unknown_key_line(message: &str, text: &str) -> Option<usize> {
    if message.contains(", expected ") {
        return None;
    }
    let unknown = message.strip_prefix("unknown field `")?.split('`').next()?;
    let mut lines = text.lines().enumerate().filter(|(_, line)| {
        line.trim_start()
            .strip_prefix(unknown)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    });
    match (lines.next(), lines.next()) {
        (Some((index, _)), None) => Some(index + 1),
        _ => None,
    }
}

fn suggestion(message: &str, text: &str) -> Option<String> {
    let unknown = message.strip_prefix("unknown field `")?.split('`').next()?;
    let candidates = match message.split_once(", expected ") {
        Some((_, expected)) => quoted_names(expected),
        None => flattened_table_keys(unknown, text)?,
    };
    closest(unknown, &candidates).map(str::to_string)
}

/// The names between backquotes, as serde lists expected fields.
fn quoted_names(list: &str) -> Vec<String> {
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The keys of the first table with a flattened struct that holds `unknown`.
fn flattened_table_keys(unknown: &str, text: &str) -> Option<Vec<String>> {
    let document: toml::Table = toml::from_str(text).ok()?;
    let own_keys = if document.contains_key(unknown) {
        TOP_LEVEL_KEYS
    } else if holds_in_a_child(&document, "runtimes", unknown) {
        RUNTIME_KEYS
    } else if holds_in_a_child(&document, "recipes", unknown) {
        RECIPE_KEYS
    } else {
        return None;
    };
    let mut keys: Vec<String> = own_keys.iter().map(|k| k.to_string()).collect();
    keys.extend(limits_keys());
    Some(keys)
}

/// Whether a table under `document[parent]` has the key.
fn holds_in_a_child(document: &toml::Table, parent: &str, key: &str) -> bool {
    document
        .get(parent)
        .and_then(toml::Value::as_table)
        .is_some_and(|children| {
            children
                .values()
                .filter_map(toml::Value::as_table)
                .any(|child| child.contains_key(key))
        })
}

/// The limits' keys, as serde lists them for a key the limits do not have.
fn limits_keys() -> Vec<String> {
    match toml::from_str::<LimitsFile>("\"\" = 0") {
        Ok(_) => Vec::new(),
        Err(e) => e
            .message()
            .split_once(", expected ")
            .map(|(_, expected)| quoted_names(expected))
            .unwrap_or_default(),
    }
}

/// The candidate nearest to `unknown`, if it is near enough to be a slip (at most a third of
/// its letters changed, at least one allowed).
fn closest<'a>(unknown: &str, candidates: &'a [String]) -> Option<&'a str> {
    let allowed = (unknown.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|candidate| (strsim::damerau_levenshtein(unknown, candidate), candidate))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    fn error_of(text: &str) -> String {
        Config::parse(text).unwrap_err().to_string()
    }

    const RUNTIME: &str = "[runtimes.sh]\nimage = \"x\"\n";

    #[test]
    fn a_misspelt_key_is_matched_in_its_own_table() {
        let cases = [
            (format!("max_sesions = 3\n{RUNTIME}"), "max_sessions"),
            (format!("mem_limt = \"1g\"\n{RUNTIME}"), "mem_limit"),
            (format!("{RUNTIME}imgae = \"y\"\n"), "image"),
            (format!("{RUNTIME}pids_limti = 3\n"), "pids_limit"),
            (
                format!("{RUNTIME}[policy]\nmax_timout_secs = 3\n"),
                "max_timeout_secs",
            ),
            (
                format!("{RUNTIME}[recipes.r]\nbase = \"x\"\nstep = []\n"),
                "steps",
            ),
            (
                "runtimes.sh = { image = \"x\", cpu = 1 }\n".to_string(),
                "cpus",
            ),
        ];
        for (text, expected) in cases {
            let error = error_of(&text);
            assert!(
                error.contains(&format!("did you mean `{expected}`?")),
                "{text:?} gave {error}"
            );
        }
    }

    #[test]
    fn a_misspelt_top_level_key_is_placed_on_its_line() {
        let error = error_of(&format!(
            "default_runtime = \"sh\"\nmax_sesions = 3\n{RUNTIME}"
        ));
        assert!(
            error.contains("did you mean `max_sessions`? (on line 2)"),
            "{error}"
        );
    }

    #[test]
    fn a_key_like_none_gets_no_guess() {
        let error = error_of(&format!("colour = \"blue\"\n{RUNTIME}"));
        assert!(error.contains("unknown field `colour`"), "{error}");
        assert!(!error.contains("did you mean"), "{error}");
    }

    /// The field names of `struct NAME` in a source file, but a flattened one.
    fn fields_in_source(source: &str, name: &str) -> Vec<String> {
        let body = source
            .split(&format!("struct {name} {{\n"))
            .nth(1)
            .and_then(|rest| rest.split("\n}").next())
            .unwrap_or_else(|| panic!("no struct {name}"));
        let mut fields = Vec::new();
        let mut flattened = false;
        for line in body.lines().map(str::trim) {
            if line == "#[serde(flatten)]" {
                flattened = true;
            } else if let Some((field, _)) = line.split_once(':') {
                if !line.starts_with("//") && !flattened {
                    fields.push(field.trim_start_matches("pub(crate) ").to_string());
                }
                flattened = false;
            }
        }
        fields
    }

    #[test]
    fn the_listed_keys_are_the_structs_fields() {
        let structs = [
            (include_str!("config.rs"), "ConfigFile", TOP_LEVEL_KEYS),
            (include_str!("runtimes.rs"), "RuntimeFile", RUNTIME_KEYS),
            (include_str!("recipes.rs"), "RecipeFile", RECIPE_KEYS),
        ];
        for (source, name, listed) in structs {
            assert_eq!(fields_in_source(source, name), listed, "{name}");
        }
        assert!(limits_keys().contains(&"mem_limit".to_string()));
    }
}
