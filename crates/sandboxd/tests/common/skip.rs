//! A test that cannot run where it is run says so, never passes in silence: outside CI it
//! prints a `SKIPPED:` line (scripts/test.sh counts them per step); in CI, which provides
//! every dependency, it fails. Shared by the service's suites and the crates' unit tests.

use std::io::Write;

/// Whether this is a CI run (`CI` set and not `false`; scripts/test.sh sets it).
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// The running test's name: libtest names each test's thread after it.
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("unnamed test")
        .to_string()
}

/// Reports the running test as skipped, `why` saying what it needs.
pub fn skipped(why: &str) {
    report("SKIPPED", why);
}

/// A `MARK: TEST: WHY` line for scripts/test.sh to count. Written to the process's stderr
/// itself, past libtest's capture, so the line shows for a passing test too; in one write, so
/// parallel tests' output cannot split it.
pub fn report(mark: &str, why: &str) {
    let line = format!("{mark}: {}: {why}\n", test_name());
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// For a test missing a dependency (`why`): a skip outside CI, a failure in CI. The caller
/// returns after it.
pub fn skip_or_fail(why: &str) {
    if in_ci() {
        panic!("CI must provide what this test needs: {why}");
    }
    skipped(why);
}
