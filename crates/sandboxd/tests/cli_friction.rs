//! What new users of the command line tripped on (issue 55), the built binary against a real
//! service and Docker: copies keep their permission bits, every command takes an id prefix, a
//! shell line given as one word gets a hint (and `--shell` runs it), and tables show times to
//! the second, sizes in one form and singulars for one; `--url`/`--token` go before or after the
//! command name.

mod common;

use common::{base_config, sandboxd_bin, TestService, TOKEN};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

/// What a finished `sandboxd` command left: its exit code, stdout and stderr.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn ok(self) -> Ran {
        assert_eq!(self.code, 0, "stderr: {}", self.stderr);
        self
    }
}

/// `sandboxd ARGS` against `service`, with `stdin`.
fn sandboxd_with_stdin(service: &TestService, args: &[&str], stdin: &[u8]) -> Ran {
    let mut child = Command::new(sandboxd_bin())
        .args(args)
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let output = child.wait_with_output().unwrap();
    Ran {
        code: output.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn sandboxd(service: &TestService, args: &[&str]) -> Ran {
    sandboxd_with_stdin(service, args, b"")
}

/// A new session of the `sh` runtime, labelled as this suite's.
fn open(service: &TestService) -> String {
    let opened = sandboxd(service, &["open", "--label", "suite=cli-friction"]).ok();
    opened.stdout.trim().to_string()
}

#[tokio::test]
async fn cp_keeps_a_files_permission_bits_but_never_setuid() {
    let service = TestService::start(&base_config(2, ""));
    let id = open(&service);
    let local = tempfile::tempdir().unwrap();
    let script = local.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let setuid = local.path().join("setuid");
    std::fs::write(&setuid, "x").unwrap();
    std::fs::set_permissions(&setuid, std::fs::Permissions::from_mode(0o4750)).unwrap();
    let private = local.path().join("private");
    std::fs::write(&private, "x").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    for file in [&script, &setuid, &private] {
        sandboxd(&service, &["cp", file.to_str().unwrap(), &format!("{id}:")]).ok();
    }
    sandboxd_with_stdin(&service, &["cp", "-", &format!("{id}:piped")], b"x").ok();

    let modes = sandboxd(
        &service,
        &[
            "exec", &id, "--", "stat", "-c", "%n %a", "run.sh", "setuid", "private", "piped",
        ],
    )
    .ok();
    assert_eq!(
        modes.stdout, "run.sh 755\nsetuid 750\nprivate 600\npiped 644\n",
        "a file keeps its permission bits, setuid dropped; standard input is 0644"
    );
    let ran = sandboxd(&service, &["exec", &id, "./run.sh"]).ok();
    assert_eq!(ran.stdout, "ran\n");

    // The API refuses what is more than permission bits.
    let refused = service
        .put(&format!(
            "/v1/sessions/{id}/files/content?path=suid&mode=4755"
        ))
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    sandboxd(&service, &["close", &id]).ok();
}

#[test]
fn every_command_that_names_a_session_takes_an_id_prefix() {
    let service = TestService::start(&base_config(3, ""));
    let id = open(&service);
    let prefix = &id[..8];

    let activity = sandboxd(&service, &["activity", prefix, "--json"]).ok();
    assert!(activity.stdout.contains("\"open\""), "{}", activity.stdout);
    let killed = sandboxd(&service, &["kill-all", prefix]).ok();
    assert_eq!(killed.stdout, format!("killed 0 processes in {id}\n"));
    assert_eq!(
        sandboxd(&service, &["pause", prefix]).ok().stdout,
        format!("paused (in memory) {id}\n")
    );
    assert_eq!(
        sandboxd(&service, &["resume", prefix]).ok().stdout,
        format!("resumed {id}\n")
    );
    // `sh` has no kernel: the session was found, and said so.
    let code = sandboxd_with_stdin(&service, &["code", prefix], b"print(1)");
    assert_ne!(code.code, 0);
    assert!(code.stderr.contains("no_kernel"), "{}", code.stderr);
    let forked = sandboxd(&service, &["fork", prefix]).ok();
    let fork = forked.stdout.trim();
    assert_eq!(fork.len(), id.len(), "{}", forked.stdout);

    let unknown = sandboxd(&service, &["activity", "zzzzzz"]);
    assert_eq!(unknown.code, 5, "{}", unknown.stderr);
    assert!(unknown.stderr.contains("not_found"), "{}", unknown.stderr);
    sandboxd(&service, &["close", &id, fork]).ok();
}

#[test]
fn a_shell_line_given_as_one_word_gets_a_hint_and_runs_with_shell() {
    let service = TestService::start(&base_config(2, ""));
    let id = open(&service);
    let hint = "add --shell (-s)";

    let streamed = sandboxd(&service, &["exec", &id, "echo hi && ls"]);
    assert_eq!(streamed.code, 127, "{}", streamed.stderr);
    assert!(streamed.stderr.contains(hint), "{}", streamed.stderr);
    let as_json = sandboxd(&service, &["exec", &id, "--json", "echo hi && ls"]);
    assert_ne!(as_json.code, 0);
    assert!(as_json.stderr.contains(hint), "{}", as_json.stderr);
    // A plain missing program is not a shell line.
    let missing = sandboxd(&service, &["exec", &id, "no-such-program"]);
    assert_eq!(missing.code, 127);
    assert!(!missing.stderr.contains(hint), "{}", missing.stderr);

    let shell = sandboxd(&service, &["exec", "-s", &id, "echo hi && echo $((6 * 7))"]).ok();
    assert_eq!(shell.stdout, "hi\n42\n");
    let words = sandboxd(
        &service,
        &[
            "exec", &id, "--shell", "--", "echo", "a", "|", "tr", "a", "b",
        ],
    )
    .ok();
    assert_eq!(words.stdout, "b\n");
    let ran = sandboxd(&service, &["run", "--shell", "--", "echo one; echo two"]).ok();
    assert_eq!(ran.stdout, "one\ntwo\n");
    sandboxd(&service, &["close", &id]).ok();
}

#[test]
fn tables_show_seconds_one_size_form_and_singulars() {
    let service = TestService::start(&base_config(2, ""));
    let id = open(&service);
    // A fraction of a second in a table, or a size in bytes past a kilobyte, is what to avoid.
    let nanos = |text: &str| {
        text.split(|c: char| c.is_whitespace())
            .any(|cell| cell.contains('T') && cell.contains(':') && cell.contains('.'))
    };
    let raw_bytes = |text: &str| {
        text.split_whitespace().any(|cell| {
            cell.strip_suffix('b')
                .is_some_and(|n| n.len() > 4 && n.chars().all(|c| c.is_ascii_digit()))
        })
    };

    let local = tempfile::tempdir().unwrap();
    let tree = local.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("sub/data"), vec![7u8; 3000]).unwrap();
    let copied = sandboxd(&service, &["cp", tree.to_str().unwrap(), &format!("{id}:")]).ok();
    assert!(
        copied
            .stdout
            .starts_with("copied 1 file, 1 directory, 0 symlinks (3000 bytes) to "),
        "{}",
        copied.stdout
    );
    let file = local.path().join("one");
    std::fs::write(&file, "1").unwrap();
    let copied = sandboxd(&service, &["cp", file.to_str().unwrap(), &format!("{id}:")]).ok();
    assert!(
        copied.stdout.starts_with("copied 1 byte to"),
        "{}",
        copied.stdout
    );

    let listing = sandboxd(&service, &["ls", &id, "tree/sub"]).ok().stdout;
    let row = listing
        .lines()
        .find(|l| l.ends_with(" data"))
        .expect(&listing);
    assert!(row.contains(" 2.9k "), "{listing}");
    assert!(!nanos(&listing), "{listing}");

    let sessions = sandboxd(&service, &["sessions"]).ok().stdout;
    assert!(!nanos(&sessions) && !raw_bytes(&sessions), "{sessions}");
    let activity = sandboxd(&service, &["activity", &id]).ok().stdout;
    assert!(!nanos(&activity) && !raw_bytes(&activity), "{activity}");
    assert!(
        activity
            .lines()
            .any(|l| l.contains("write_file") && l.contains(" 1b ")),
        "{activity}"
    );
    sandboxd(&service, &["close", &id]).ok();
}

#[test]
fn a_refused_token_names_where_it_came_from() {
    let service = TestService::start(&base_config(1, ""));
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join(".local/state/sandboxd");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("token"), "another-services-token\n").unwrap();
    let refused = |args: &[&str], env_token: Option<&str>| {
        let mut command = Command::new(sandboxd_bin());
        command
            .args(args)
            .args(["--url", &service.url])
            .env("HOME", home.path())
            .env_remove("SANDBOXD_TOKEN")
            .env_remove("SANDBOXD_URL");
        if let Some(token) = env_token {
            command.env("SANDBOXD_TOKEN", token);
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(4));
        String::from_utf8(output.stderr).unwrap()
    };
    let file = state.join("token").display().to_string();
    if !std::path::Path::new("/var/lib/sandboxd/token").exists() {
        let from_file = refused(&["sessions"], None);
        assert!(
            from_file.contains(&format!("token from {file}")),
            "{from_file}"
        );
    }
    let from_env = refused(&["sessions"], Some("wrong"));
    assert!(from_env.contains("token from SANDBOXD_TOKEN"), "{from_env}");
    let from_flag = refused(&["sessions", "--token", "wrong"], Some("wrong"));
    assert!(from_flag.contains("token from --token"), "{from_flag}");
}

#[test]
fn the_service_arguments_work_before_the_command_name_and_outrank_the_environment() {
    let service = TestService::start(&base_config(1, ""));
    let run = |args: &[&str]| {
        let output = Command::new(sandboxd_bin())
            .args(args)
            // What the flags must outrank: another service, another token.
            .env("SANDBOXD_URL", "http://127.0.0.1:9")
            .env("SANDBOXD_TOKEN", "not-this-one")
            .output()
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        (output.status.code(), stderr)
    };
    let url = service.url.as_str();
    for args in [
        ["--url", url, "--token", TOKEN, "sessions", "-q"],
        ["--url", url, "sessions", "--token", TOKEN, "-q"],
        ["sessions", "-q", "--url", url, "--token", TOKEN],
    ] {
        let (code, stderr) = run(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
    }
    let (code, stderr) = run(&["--url", url, "sessions"]);
    assert_eq!(code, Some(4), "the environment's token, refused: {stderr}");
    assert!(stderr.contains("token from SANDBOXD_TOKEN"), "{stderr}");
    let (code, stderr) = run(&["--request-timeout", "1", "--token", TOKEN, "sessions"]);
    assert_eq!(code, Some(3), "the environment's URL: {stderr}");
    assert!(stderr.contains("127.0.0.1:9"), "{stderr}");
}
