//! What is wrong with a configuration, said precisely and where.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config is not valid: {0}")]
    Syntax(String),
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
}

/// The error for a field whose value is wrong, with what is wrong about it.
pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}
