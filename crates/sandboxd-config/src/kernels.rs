//! `kernels`: the Jupyter kernels a recipe or runtime holds, for stateful code execution.
//! Each is a language (what a context names) and the command that starts a kernel, with
//! `{connection_file}` where the kernel's connection file goes, as in a Jupyter kernelspec.

use crate::error::invalid;
use crate::error::ConfigError;
use std::collections::BTreeMap;

/// The placeholder in a kernel's command that the connection file's path replaces.
const CONNECTION_FILE_PLACEHOLDER: &str = "{connection_file}";

pub(crate) fn resolve_kernels(
    kernels: &BTreeMap<String, Vec<String>>,
    field: &str,
) -> Result<BTreeMap<String, Vec<String>>, ConfigError> {
    for (language, argv) in kernels {
        let entry = format!("{field}.kernels.{language}");
        let valid_name = !language.is_empty()
            && language.len() <= 32
            && language
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !valid_name {
            return Err(invalid(
                &entry,
                "a language name may only hold lowercase letters, digits and '-', at most 32 characters",
            ));
        }
        if argv.is_empty() || argv.iter().any(|arg| arg.is_empty()) {
            return Err(invalid(
                &entry,
                "must be a program and its arguments, none of them empty",
            ));
        }
        if !argv
            .iter()
            .any(|arg| arg.contains(CONNECTION_FILE_PLACEHOLDER))
        {
            return Err(invalid(
                &entry,
                format!("must pass the kernel its connection file: an argument holding {CONNECTION_FILE_PLACEHOLDER}"),
            ));
        }
    }
    Ok(kernels.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernels(argv: &[&str]) -> BTreeMap<String, Vec<String>> {
        BTreeMap::from([(
            "python".to_string(),
            argv.iter().map(|a| a.to_string()).collect(),
        )])
    }

    #[test]
    fn a_kernel_needs_its_connection_file() {
        let ok = kernels(&[
            "python3",
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
        ]);
        assert_eq!(resolve_kernels(&ok, "runtimes.a").unwrap(), ok);
        let error = resolve_kernels(&kernels(&["python3"]), "runtimes.a").unwrap_err();
        assert!(
            error.to_string().contains("runtimes.a.kernels.python"),
            "{error}"
        );
        assert!(error.to_string().contains("{connection_file}"), "{error}");
    }

    #[test]
    fn a_language_name_is_plain() {
        let bad = BTreeMap::from([("Py thon".to_string(), vec!["x {connection_file}".into()])]);
        assert!(resolve_kernels(&bad, "recipes.a").is_err());
    }
}
