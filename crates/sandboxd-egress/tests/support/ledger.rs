//! What a test made that outlives its process when left behind (a service instance, its
//! egress network and chains, a network namespace), appended to the file
//! `SANDBOXD_TEST_LEDGER` names, one `KIND NAME TEST` a line. scripts/test.sh checks
//! afterwards that each is gone: the check covers the run's own things and no one else's.

use std::io::Write;

/// Notes that the current test made `name` of `kind`; nothing without `SANDBOXD_TEST_LEDGER`.
pub fn record_made(kind: &str, name: &str) {
    let Some(path) = std::env::var_os("SANDBOXD_TEST_LEDGER") else {
        return;
    };
    // The test's thread is named after the test.
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .replace(char::is_whitespace, "_");
    // One short write in append mode: lines of parallel tests do not interleave.
    let line = format!("{kind} {name} {test}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = written {
        panic!(
            "cannot note {kind} {name} in {}: {e}",
            path.to_string_lossy()
        );
    }
}
