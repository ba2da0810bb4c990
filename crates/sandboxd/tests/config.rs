//! Config errors stop the service at start with a precise message and a non-zero exit.

mod common;

use common::sandboxd_bin;
use std::process::Command;

fn serve_with(config: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config).unwrap();
    let output = Command::new(sandboxd_bin())
        .args(["serve", "--check", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned()
            + &String::from_utf8_lossy(&output.stdout),
    )
}

const OK_RUNTIME: &str = "[runtimes.sh]\nimage = \"sandboxd/busybox:local\"\n";

#[test]
fn each_config_error_has_its_message_and_a_nonzero_exit() {
    let cases = [
        (
            format!("colour = \"blue\"\n{OK_RUNTIME}"),
            "unknown field `colour`",
        ),
        (
            "[runtimes.sh]\nimage = \"x\"\nmem_limit = \"1 gigabyte\"\n".to_string(),
            "runtimes.sh.mem_limit: \"1 gigabyte\" is not a size",
        ),
        (
            "[runtimes.sh]\nimage = \"x\"\ncpus = 0\n".to_string(),
            "runtimes.sh.cpus: must be a number above 0",
        ),
        (
            "[runtimes.sh]\nimage = \"x\"\nnetwork_mode = \"host\"\n".to_string(),
            "runtimes.sh.network_mode: unknown network mode \"host\"",
        ),
        (
            format!("default_runtime = \"python\"\n{OK_RUNTIME}"),
            "default_runtime: \"python\" is not one of the configured runtimes (sh)",
        ),
        (
            "max_sessions = 5\n".to_string(),
            "runtimes: no runtimes are configured",
        ),
        ("this is not toml".to_string(), "config is not valid"),
    ];
    for (config, expected) in cases {
        let (code, output) = serve_with(&config);
        assert_ne!(code, 0, "config {config:?} must be refused");
        assert!(
            output.contains(expected),
            "config {config:?}\n  printed {output:?}\n  expected {expected:?}"
        );
    }
    let missing = Command::new(sandboxd_bin())
        .args(["serve", "--config", "/nonexistent/sandboxd.toml"])
        .output()
        .unwrap();
    assert_ne!(missing.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&missing.stderr)
        .contains("cannot read config file /nonexistent/sandboxd.toml"));
}

#[test]
fn the_worst_case_is_shown_and_warned_about() {
    let (code, output) = serve_with(&format!(
        "max_sessions = 1000\nmem_limit = \"64g\"\n{OK_RUNTIME}"
    ));
    assert_eq!(code, 0, "{output}");
    assert!(output.contains("1000 sessions x 64g"), "{output}");
    assert!(
        output.contains("WARNING: that is more than this host's memory"),
        "{output}"
    );
    // Its tmpfs places fit in its memory too, so nothing is warned of.
    let (code, output) = serve_with(&format!(
        "max_sessions = 2\nmem_limit = \"64m\"\ntmpfs_size = \"16m\"\n{OK_RUNTIME}"
    ));
    assert_eq!(code, 0);
    assert!(!output.contains("WARNING"), "{output}");
}

#[test]
fn the_embedded_default_is_the_seed() {
    let output = Command::new(sandboxd_bin())
        .args(["serve", "--check"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "6 runtimes (code-interpreter, datascience, desktop, interpreter, python, scraping)"
        ),
        "{stdout}"
    );
}

#[test]
fn a_public_address_needs_an_explicit_flag() {
    let output = Command::new(sandboxd_bin())
        .args(["serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--allow-remote"));
}

fn sandboxd(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(sandboxd_bin()).args(args).output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn config_default_prints_a_config_that_config_check_accepts() {
    let (code, default, _) = sandboxd(&["config", "default"]);
    assert_eq!(code, 0);
    assert!(default.contains("[runtimes.python]"), "{default}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, &default).unwrap();
    let (code, stdout, stderr) = sandboxd(&["config", "check", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "6 runtimes (code-interpreter, datascience, desktop, interpreter, python, scraping)"
        ),
        "{stdout}"
    );
}

#[test]
fn config_check_names_the_key_a_misspelt_one_meant() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let cases = [
        (format!("max_sesions = 3\n{OK_RUNTIME}"), "max_sessions"),
        (
            format!("{OK_RUNTIME}[policy]\nidle_timeout_sec = 60\n"),
            "idle_timeout_secs",
        ),
    ];
    for (config, expected) in cases {
        std::fs::write(&path, &config).unwrap();
        let (code, _, stderr) = sandboxd(&["config", "check", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{config:?}: {stderr}");
        assert!(
            stderr.contains(&format!("did you mean `{expected}`?")),
            "{config:?}: {stderr}"
        );
    }
    let (code, _, stderr) = sandboxd(&["config", "check", "/nonexistent/sandboxd.toml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read config file"), "{stderr}");
}

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let (code, stdout, _) = sandboxd(&["--version"]);
    assert_eq!(code, 0);
    let commit = stdout
        .trim()
        .strip_prefix(&format!("sandboxd {} (commit ", env!("CARGO_PKG_VERSION")))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{stdout:?} does not name the version and the commit"));
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{commit:?} is not a commit"
    );
}
