//! The fake sandbox's files: a map from path to contents, with the working directory's files
//! kept by their relative names, as tests seed them.

use sandboxd_backend::{HOME_DIR, WORKDIR};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Files of one fake sandbox: path to contents.
pub(in crate::fake) type Files = Arc<Mutex<BTreeMap<String, Vec<u8>>>>;

/// The key of the file the service names at `path` (always absolute): the fake keeps the
/// working directory's files by their relative names, as tests seed them, and `/home/user` is
/// the same directory, as in a real sandbox.
pub(super) fn fake_key(path: &str) -> String {
    let inside = path
        .strip_prefix(WORKDIR)
        .or_else(|| path.strip_prefix(HOME_DIR));
    match inside {
        Some("") => ".".into(),
        Some(rest) if rest.starts_with('/') => rest[1..].to_string(),
        _ => path.to_string(),
    }
}

/// The fake's directories: `/`, `.` and those holding a file.
pub(super) fn is_dir(files: &Files, path: &str) -> bool {
    let prefix = format!("{}/", path.trim_end_matches('/'));
    path == "."
        || prefix == "/"
        || files
            .lock()
            .is_ok_and(|f| f.keys().any(|name| name.starts_with(&prefix)))
}
