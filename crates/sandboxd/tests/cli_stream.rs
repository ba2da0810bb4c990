//! The command line as people use it, the built binary against a real service and Docker:
//! bytes in and out unchanged, output streamed as it is produced, signals and closed pipes,
//! timeouts, directory copies both ways, and the interactive shell under a real terminal (tmux).

mod common;

use common::{base_config, sandboxd_bin, TestService, TOKEN};
use rand::Rng;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The service keeps 64 KiB of a command's output: a megabyte must pass through it paced.
fn config() -> String {
    base_config(4, "")
}

fn command(service: &TestService, args: &[&str]) -> Command {
    let mut command = Command::new(sandboxd_bin());
    command
        .args(args)
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs `sandboxd ARGS` with `stdin`; its exit code, stdout bytes and stderr.
fn sandboxd(service: &TestService, args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = command(service, args)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let feeding = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let output = child.wait_with_output().unwrap();
    feeding.join().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code().unwrap_or(-1), output.stdout, stderr)
}

fn ok(service: &TestService, args: &[&str]) -> String {
    let (code, stdout, stderr) = sandboxd(service, args, b"");
    assert_eq!(code, 0, "sandboxd {args:?}: {stderr}");
    String::from_utf8(stdout).unwrap()
}

fn running_sessions(service: &TestService) -> Vec<String> {
    ok(service, &["sessions", "-q"])
        .lines()
        .map(str::to_string)
        .collect()
}

fn wait_for_session(service: &TestService) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(id) = running_sessions(service).pop() {
            return id;
        }
        assert!(Instant::now() < deadline, "no session opened");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: a plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

#[test]
fn a_megabyte_of_random_bytes_round_trips_byte_exact_both_ways() {
    let service = TestService::start(&config());
    let id = ok(&service, &["open"]).trim().to_string();
    let mut data = vec![0u8; 1 << 20];
    rand::rng().fill(&mut data[..]);

    // In through stdin, back out through stdout, as bytes.
    let (code, out, stderr) = sandboxd(&service, &["exec", "-i", &id, "--", "cat"], &data);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        out == data,
        "cat changed the bytes ({} of {})",
        out.len(),
        data.len()
    );

    // Into a file in the sandbox, then out of it.
    let args = ["exec", "-i", &id, "--", "sh", "-c", "cat > r.bin"];
    let (code, _, stderr) = sandboxd(&service, &args, &data);
    assert_eq!(code, 0, "{stderr}");
    let sum = ok(&service, &["exec", &id, "--", "sh", "-c", "wc -c < r.bin"]);
    assert_eq!(sum.trim(), (1 << 20).to_string());
    let (code, out, stderr) = sandboxd(&service, &["exec", &id, "--", "cat", "r.bin"], b"");
    assert_eq!(code, 0, "{stderr}");
    assert!(out == data, "the file came back changed");
}

/// Each line is printed only once the test has seen the one before (the command waits for a
/// file the test makes then): output held back until the command ends never arrives.
#[test]
fn output_is_streamed_as_it_is_printed() {
    let service = TestService::start(&config());
    let id = ok(&service, &["open"]).trim().to_string();
    let script = "for i in 1 2 3 4; do echo line $i; n=0; \
        while [ ! -e /tmp/seen$i ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done; done";
    let mut child = command(&service, &["exec", &id, "--", "sh", "-c", script])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for expected in 1..=4 {
        let line = lines.next().and_then(Result::ok);
        assert_eq!(
            line,
            Some(format!("line {expected}")),
            "line {expected} arrives before the command goes on"
        );
        ok(
            &service,
            &["exec", &id, "--", "touch", &format!("/tmp/seen{expected}")],
        );
    }
    assert!(child.wait().unwrap().success());
}

#[test]
fn signals_stop_the_command_with_docker_exit_codes_and_run_closes_its_session() {
    let service = TestService::start(&config());
    for (sig, expected) in [
        (libc::SIGHUP, 129),
        (libc::SIGTERM, 143),
        (libc::SIGINT, 130),
    ] {
        let mut child = command(
            &service,
            &["run", "--", "sh", "-c", "echo started; sleep 60"],
        )
        .spawn()
        .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert_eq!(first, "started\n", "partial output comes before the signal");
        wait_for_session(&service);
        signal(&child, sig);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(expected), "signal {sig}");
        assert!(
            running_sessions(&service).is_empty(),
            "signal {sig}: session left open"
        );
    }
}

#[test]
fn a_closed_pipe_is_quiet_and_exit_codes_are_as_a_shell_says() {
    let service = TestService::start(&config());
    let id = ok(&service, &["open"]).trim().to_string();
    let mut child = command(&service, &["exec", &id, "--", "seq", "1", "10000000"])
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, "1\n");
    drop(stdout); // as `| head -1` does
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "", "quiet");

    let (code, _, stderr) = sandboxd(&service, &["exec", &id, "--", "no-such-program"], b"");
    assert_eq!(code, 127, "{stderr}");
    assert!(stderr.contains("no-such-program"), "{stderr}");
    ok(
        &service,
        &[
            "exec",
            &id,
            "--",
            "sh",
            "-c",
            "echo x > plain && chmod 644 plain",
        ],
    );
    let (code, _, stderr) = sandboxd(&service, &["exec", &id, "--", "./plain"], b"");
    assert_eq!(code, 126, "{stderr}");
    let (code, out, _) = sandboxd(
        &service,
        &[
            "exec",
            "-e",
            "GREETING=hi there",
            &id,
            "--",
            "sh",
            "-c",
            "echo $GREETING; exit 7",
        ],
        b"",
    );
    assert_eq!((code, out.as_slice()), (7, &b"hi there\n"[..]));

    let (code, _, stderr) = sandboxd(
        &service,
        &["exec", "--timeout", "1", &id, "--", "sleep", "30"],
        b"",
    );
    assert_eq!(code, 124, "{stderr}");
    assert!(stderr.contains("timeout"), "{stderr}");

    // Ids by a unique prefix; closing twice says it was closed already.
    let prefix = &id[..6];
    assert_eq!(ok(&service, &["exec", prefix, "--", "echo", "ok"]), "ok\n");
    assert_eq!(ok(&service, &["close", prefix]), format!("closed {id}\n"));
    let again = ok(&service, &["close", &id]);
    assert!(again.contains("already closed"), "{again}");
    // Errors name the command to run, not the route.
    let (code, _, stderr) = sandboxd(&service, &["exec", &id, "--", "true"], b"");
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("`sandboxd open`") && !stderr.contains("/v1"),
        "{stderr}"
    );
}

#[test]
fn a_service_that_never_answers_gives_exit_3_within_the_timeout() {
    // Accepted by the kernel, never answered.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let started = Instant::now();
    let output = Command::new(sandboxd_bin())
        .args([
            "sessions",
            "--url",
            &url,
            "--token",
            "t",
            "--request-timeout",
            "2",
        ])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(3), "{:?}", output);
    assert!(took < Duration::from_secs(10), "took {took:?}");
    drop(listener);

    // URL mistakes: without http://, or with the API's /v1, are corrected.
    let service = TestService::start(&config());
    let bare = service.url.strip_prefix("http://").unwrap().to_string();
    for url in [bare.clone(), format!("{}/v1/", service.url)] {
        let output = Command::new(sandboxd_bin())
            .args(["sessions", "-q", "--url", &url, "--token", TOKEN])
            .output()
            .unwrap();
        assert!(output.status.success(), "{url}: {output:?}");
    }
    let output = Command::new(sandboxd_bin())
        .args([
            "sessions",
            "--url",
            &format!("{}/api", service.url),
            "--token",
            TOKEN,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("without a path"));
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

#[test]
fn directories_copy_both_ways_with_modes_and_symlinks_never_followed_out() {
    let service = TestService::start(&config());
    let id = ok(&service, &["open"]).trim().to_string();
    let local = tempfile::tempdir().unwrap();
    let tree = local.path().join("proj");
    std::fs::create_dir_all(tree.join("bin")).unwrap();
    std::fs::write(tree.join("bin/run"), b"#!/bin/sh\necho run\n").unwrap();
    std::fs::set_permissions(tree.join("bin/run"), PermissionsExt::from_mode(0o750)).unwrap();
    std::fs::write(tree.join("data.csv"), b"a,b\n1,2\n").unwrap();
    std::os::unix::fs::symlink("bin/run", tree.join("run-link")).unwrap();
    let tree_arg = tree.to_str().unwrap();

    // Into the working directory (`ID:`), keeping its name; then into a named directory.
    let copied = ok(&service, &["cp", tree_arg, &format!("{id}:")]);
    assert!(
        copied.contains("to ") && copied.contains("proj"),
        "{copied}"
    );
    ok(&service, &["cp", tree_arg, &format!("{id}:/tmp/dest/")]);
    let inside = ok(
        &service,
        &["exec", &id, "--", "sh", "-c", "stat -c '%a %F' proj/bin/run /tmp/dest/proj/bin/run && readlink proj/run-link && ./proj/run-link"],
    );
    assert_eq!(inside, "750 regular file\n750 regular file\nbin/run\nrun\n");
    // A single file into a directory and to `ID:`.
    let file_arg = tree.join("data.csv");
    ok(
        &service,
        &["cp", file_arg.to_str().unwrap(), &format!("{id}:")],
    );
    ok(
        &service,
        &["cp", file_arg.to_str().unwrap(), &format!("{id}:proj/bin")],
    );
    let listed = ok(&service, &["ls", &id, "proj/bin"]);
    assert!(
        listed.contains("data.csv") && listed.contains("-0750"),
        "{listed}"
    );
    assert_eq!(
        ok(&service, &["exec", &id, "--", "cat", "data.csv"]),
        "a,b\n1,2\n"
    );

    // Out again, with symlinks the sandbox planted to lead outside the copy.
    let outside = local.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let plant = format!(
        "ln -s {0} proj/escape && ln -s ../../.. proj/bin/up && ln -s /etc/shadow proj/shadow",
        outside.display()
    );
    ok(&service, &["exec", &id, "--", "sh", "-c", &plant]);
    let back = local.path().join("back");
    let (code, _, stderr) = sandboxd(
        &service,
        &["cp", &format!("{id}:proj"), back.to_str().unwrap()],
        b"",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read(back.join("bin/run")).unwrap(),
        b"#!/bin/sh\necho run\n"
    );
    assert_eq!(mode(&back.join("bin/run")), 0o750);
    assert_eq!(
        std::fs::read_link(back.join("run-link")).unwrap(),
        Path::new("bin/run")
    );
    for planted in ["escape", "bin/up", "shadow"] {
        assert!(
            std::fs::symlink_metadata(back.join(planted)).is_err(),
            "{planted} was made"
        );
        assert!(stderr.contains(planted), "{stderr}");
    }
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    // Into an existing directory: under its own name.
    let into = local.path().join("into");
    std::fs::create_dir(&into).unwrap();
    ok(
        &service,
        &["cp", &format!("{id}:proj"), into.to_str().unwrap()],
    );
    assert!(into.join("proj/bin/data.csv").exists());

    let removed = ok(&service, &["rm", "-r", &id, "proj", "data.csv"]);
    assert_eq!(
        removed,
        "deleted /workspace/proj\ndeleted /workspace/data.csv\n"
    );
    let json: Value = serde_json::from_str(&ok(&service, &["ls", "--json", &id])).unwrap();
    assert_eq!(json["entries"].as_array().unwrap().len(), 0, "{json}");
}

/// A tmux server of its own, so no user's session is touched.
struct Tmux {
    socket: tempfile::TempDir,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        // No user's config either.
        let output = Command::new("tmux")
            .args(["-f", "/dev/null", "-S"])
            .arg(self.socket.path().join("tmux"))
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "tmux {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.run(&["capture-pane", "-p", "-t", "shell"]);
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "{text:?} never showed:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(self.socket.path().join("tmux"))
            .arg("kill-server")
            .output();
    }
}

#[test]
fn shell_is_a_real_terminal_that_resizes_and_exits_with_the_shell() {
    let service = TestService::start(&config());
    let id = ok(&service, &["open"]).trim().to_string();
    let tmux = Tmux {
        socket: tempfile::tempdir().unwrap(),
    };
    // The exit code is written by a wrapping shell: tmux's own record of a dead pane's status
    // came back empty under load.
    let exit_file = tmux.socket.path().join("exit-code");
    let shell = format!(
        "SANDBOXD_URL={} SANDBOXD_TOKEN={TOKEN} {} shell {id}; echo $? > {}",
        service.url,
        sandboxd_bin().display(),
        exit_file.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "shell",
        "-x",
        "80",
        "-y",
        "24",
        &shell,
    ]);
    tmux.run(&["set-option", "-t", "shell", "remain-on-exit", "on"]);
    // The quotes keep the echoed command line from matching the output.
    tmux.run(&[
        "send-keys",
        "-t",
        "shell",
        "echo hel''lo-from-the-sandbox",
        "Enter",
    ]);
    tmux.wait_for("hello-from-the-sandbox\n");
    tmux.run(&["send-keys", "-t", "shell", "stty size", "Enter"]);
    tmux.wait_for("24 80");
    tmux.run(&["resize-window", "-t", "shell", "-x", "100", "-y", "30"]);
    // The new size reaches the sandbox's terminal in its own time: asked until it shows.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        tmux.run(&["send-keys", "-t", "shell", "clear; stty size", "Enter"]);
        std::thread::sleep(Duration::from_millis(300));
        let screen = tmux.run(&["capture-pane", "-p", "-t", "shell"]);
        if screen.contains("30 100") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the resize never showed:\n{screen}"
        );
    }
    tmux.run(&["send-keys", "-t", "shell", "exit 3", "Enter"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = std::fs::read_to_string(&exit_file).unwrap_or_default();
        if status.trim() == "3" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the shell did not exit 3: {status:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn completions_and_json_everywhere() {
    for shell in ["bash", "zsh", "fish"] {
        let output = Command::new(sandboxd_bin())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(output.status.success());
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(
            script.contains("sandboxd") && script.contains("shell"),
            "{shell}"
        );
    }
    let output = Command::new(sandboxd_bin())
        .args(["token", "--tenant", "team", "--json"])
        .output()
        .unwrap();
    let token: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(token["tenant"], "team");
    assert_eq!(token["token"].as_str().unwrap().len(), 64);
    assert_eq!(token["token_sha256"].as_str().unwrap().len(), 64);
}
