//! The `sandboxd` command line as a client: the built binary against a real service and a real
//! Docker engine, for each subcommand, with its exit codes and its `--json` output parsed back;
//! and the client library it is built on.

mod common;

use common::{base_config, sandboxd_bin, TestService, TOKEN};
use sandboxd_api::CreateSession;
use sandboxd_client::{Client, ClientError, Interface};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// What a finished `sandboxd` client command left.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {:?}; stderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    fn ok(self) -> Ran {
        assert_eq!(self.code, 0, "stderr: {}", self.stderr);
        self
    }
}

impl From<Output> for Ran {
    fn from(output: Output) -> Ran {
        Ran {
            code: output.status.code().expect("exited, not killed"),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

/// `sandboxd ARGS` with nothing of the caller's environment that would pick a service.
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(sandboxd_bin());
    command
        .args(args)
        .env_remove("SANDBOXD_URL")
        .env_remove("SANDBOXD_TOKEN")
        .stdin(Stdio::null());
    command
}

/// `sandboxd ARGS` against `service`, given by the environment like a user's shell would.
fn sandboxd(service: &TestService, args: &[&str]) -> Ran {
    command(args)
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .output()
        .unwrap()
        .into()
}

fn sandboxd_with_stdin(service: &TestService, args: &[&str], stdin: &[u8]) -> Ran {
    let mut child = command(args)
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap().into()
}

fn running_sessions(service: &TestService) -> Vec<Value> {
    let list = sandboxd(service, &["sessions", "--json"]).ok().json();
    list["sessions"].as_array().unwrap().clone()
}

#[test]
fn runtimes_lists_the_allowlist_as_a_table_and_as_json() {
    let described = format!(
        "[runtimes.described]\nimage = \"{}\"\ndescription = \"plots come back as images\"\n",
        common::busybox_image()
    );
    let service = TestService::start(&base_config(4, &described));
    let table = sandboxd(&service, &["runtimes"]).ok().stdout;
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("INTERPRETER"),
        "{table}"
    );
    assert!(table.contains("sh (default)"), "{table}");
    let python = table.lines().find(|l| l.starts_with("python ")).unwrap();
    assert!(
        python.contains("256m") && python.contains("python3"),
        "{python}"
    );
    assert!(header.ends_with("DESCRIPTION"), "{table}");
    let described = table.lines().find(|l| l.starts_with("described ")).unwrap();
    assert!(
        described.ends_with("  plots come back as images"),
        "{described}"
    );

    for args in [&["runtimes", "--json"][..], &["runtimes", "list", "--json"]] {
        let list = sandboxd(&service, args).ok().json();
        assert_eq!(list["default_runtime"], "sh");
        let names: Vec<&str> = list["runtimes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"python") && names.contains(&"sh"), "{list}");
    }
}

#[test]
fn run_prints_the_output_exits_with_the_command_and_closes_its_session() {
    let service = TestService::start(&base_config(4, ""));
    let ran = sandboxd(
        &service,
        &[
            "run",
            "--runtime",
            "sh",
            "--",
            "sh",
            "-c",
            "echo out; echo err >&2; exit 7",
        ],
    );
    assert_eq!(ran.code, 7, "stderr: {}", ran.stderr);
    assert_eq!(ran.stdout, "out\n");
    assert_eq!(ran.stderr, "err\n");

    let timed_out = sandboxd(&service, &["run", "--timeout", "1", "--", "sleep", "30"]);
    assert_eq!(timed_out.code, 124, "stderr: {}", timed_out.stderr);
    assert!(timed_out.stderr.contains("timeout"), "{}", timed_out.stderr);

    let killed = sandboxd(&service, &["run", "--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(killed.code, 128 + 9, "stderr: {}", killed.stderr);

    let json = sandboxd(
        &service,
        &[
            "run",
            "--json",
            "--runtime",
            "python",
            "--",
            "python3",
            "-c",
            "print(6*7); exit(3)",
        ],
    );
    assert_eq!(json.code, 3, "stderr: {}", json.stderr);
    let result = json.json();
    assert_eq!(result["exit_code"], 3);
    assert_eq!(result["stdout"], "42\n");
    assert_eq!(result["timed_out"], false);

    let piped = sandboxd_with_stdin(&service, &["run", "--stdin", "--", "wc", "-c"], b"hello");
    assert_eq!(piped.code, 0, "stderr: {}", piped.stderr);
    assert_eq!(piped.stdout.trim(), "5");

    // Every run closed its session, also the failed and the killed ones.
    assert_eq!(running_sessions(&service), Vec::<Value>::new());
    assert!(service.containers().is_empty());
}

#[test]
fn run_closes_its_session_when_interrupted() {
    let service = TestService::start(&base_config(4, ""));
    let child = command(&["run", "--", "sleep", "60"])
        .env("SANDBOXD_URL", &service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while running_sessions(&service).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the run opened no session"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let interrupt = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupt.success());
    let interrupted = Ran::from(child.wait_with_output().unwrap());
    assert_eq!(interrupted.code, 130, "stderr: {}", interrupted.stderr);
    assert!(running_sessions(&service).is_empty());
}

#[test]
fn open_exec_cp_activity_sessions_close() {
    let service = TestService::start(&base_config(4, ""));
    let id = sandboxd(
        &service,
        &[
            "open",
            "--runtime",
            "sh",
            "--tenant",
            "team-a",
            "--label",
            "purpose=cli-test",
        ],
    )
    .ok()
    .stdout
    .trim()
    .to_string();
    assert!(
        !id.is_empty() && !id.contains(char::is_whitespace),
        "{id:?}"
    );

    let table = sandboxd(&service, &["sessions"]).ok().stdout;
    let row = table.lines().find(|l| l.starts_with(&id)).expect(&table);
    assert!(
        row.contains("sh") && row.contains("running") && row.contains("team-a"),
        "{row}"
    );
    let listed = running_sessions(&service);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["labels"]["purpose"], "cli-test");

    let exec = sandboxd(
        &service,
        &[
            "exec",
            &id,
            "--",
            "sh",
            "-c",
            "printf 'made in the sandbox' > made.txt && exit 4",
        ],
    );
    assert_eq!(exec.code, 4, "stderr: {}", exec.stderr);
    let exec = sandboxd(&service, &["exec", &id, "--json", "--cwd", "/tmp", "pwd"]).ok();
    assert_eq!(exec.json()["stdout"], "/tmp\n");

    let local = tempfile::tempdir().unwrap();
    let upload = local.path().join("upload.txt");
    std::fs::write(&upload, "from the host\n").unwrap();
    let copied_in = sandboxd(
        &service,
        &[
            "cp",
            "--json",
            upload.to_str().unwrap(),
            &format!("{id}:/workspace/in/up.txt"),
        ],
    )
    .ok()
    .json();
    assert_eq!(copied_in["bytes"], 14);
    let cat = sandboxd(&service, &["exec", &id, "--", "cat", "in/up.txt"]).ok();
    assert_eq!(cat.stdout, "from the host\n");

    let to_dir = sandboxd(
        &service,
        &[
            "cp",
            &format!("{id}:made.txt"),
            local.path().to_str().unwrap(),
        ],
    )
    .ok();
    assert!(
        to_dir.stdout.contains("copied 19 bytes"),
        "{}",
        to_dir.stdout
    );
    assert_eq!(
        std::fs::read_to_string(local.path().join("made.txt")).unwrap(),
        "made in the sandbox"
    );
    let to_stdout = sandboxd(&service, &["cp", &format!("{id}:in/up.txt"), "-"]).ok();
    assert_eq!(to_stdout.stdout, "from the host\n");
    let from_stdin =
        sandboxd_with_stdin(&service, &["cp", "-", &format!("{id}:piped.txt")], b"abc");
    assert_eq!(from_stdin.code, 0, "stderr: {}", from_stdin.stderr);
    let missing = sandboxd(&service, &["cp", &format!("{id}:nope.txt"), "-"]);
    assert_eq!(missing.code, 5, "stderr: {}", missing.stderr);
    assert!(missing.stderr.contains("not_found"), "{}", missing.stderr);
    assert!(no_partial_files(local.path()));

    let activity = sandboxd(&service, &["activity", &id, "--json"]).ok().json();
    let entries = activity["entries"].as_array().unwrap();
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    for action in ["open", "exec", "write_file", "read_file"] {
        assert!(
            actions.contains(&action),
            "{action} missing from {actions:?}"
        );
    }
    assert!(
        entries.iter().all(|e| e["interface"] == "cli"),
        "every entry came through the CLI: {activity}"
    );
    let table = sandboxd(&service, &["activity", &id]).ok().stdout;
    assert!(table.starts_with("AT "), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.contains("write_file") && l.contains("cli")),
        "{table}"
    );

    sandboxd(
        &service,
        &[
            "exec",
            &id,
            "--",
            "sh",
            "-c",
            "setsid sleep 300 </dev/null >/dev/null 2>&1 &",
        ],
    )
    .ok();
    let killed = sandboxd(&service, &["kill-all", &id]).ok();
    assert!(
        killed.stdout.starts_with("killed ") && killed.stdout.ends_with(&format!(" in {id}\n")),
        "{}",
        killed.stdout
    );
    assert_ne!(killed.stdout, format!("killed 0 processes in {id}\n"));
    let again = sandboxd(&service, &["kill-all", &id, "--json"]).ok().json();
    assert_eq!(again, json!({"killed": 0, "remaining": 0}));

    let closed = sandboxd(&service, &["close", &id]).ok();
    assert_eq!(closed.stdout, format!("closed {id}\n"));
    let ended = sandboxd(&service, &["exec", &id, "--", "true"]);
    assert_eq!(ended.code, 5, "stderr: {}", ended.stderr);
    assert!(ended.stderr.contains("session_ended"), "{}", ended.stderr);
    let again = sandboxd(&service, &["close", &id, "--json"]).ok().json();
    assert_eq!(again["state"], "ended", "closing twice is no error");
    assert!(running_sessions(&service).is_empty());
    let all = sandboxd(&service, &["sessions", "--all", "--json"])
        .ok()
        .json();
    assert_eq!(all["sessions"][0]["state"], "ended");

    let id = sandboxd(&service, &["open", "--json"]).ok().json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let closed = sandboxd(&service, &["close", "--json", &id]).ok().json();
    assert_eq!(closed["id"], id.as_str());
    assert_eq!(closed["state"], "ended");
}

fn no_partial_files(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".part"))
}

#[test]
fn exit_codes_say_what_failed() {
    let service = TestService::start(&base_config(4, ""));

    let unknown = sandboxd(&service, &["open", "--runtime", "cobol"]);
    assert_eq!(unknown.code, 5);
    assert!(unknown.stderr.contains("unknown_runtime") && unknown.stderr.contains("python"));

    let wrong_token = command(&[
        "sessions",
        "--url",
        &service.url,
        "--token",
        "wrong-token-0123456789",
    ])
    .output()
    .unwrap();
    let wrong_token = Ran::from(wrong_token);
    assert_eq!(wrong_token.code, 4);
    assert!(
        wrong_token.stderr.contains("unauthorized")
            && wrong_token.stderr.contains("SANDBOXD_TOKEN")
    );

    // A port nothing listens on: the service's own, once it is gone.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let unused = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let down = Ran::from(
        command(&["runtimes", "--url", &unused, "--token", TOKEN])
            .output()
            .unwrap(),
    );
    assert_eq!(down.code, 3);
    assert!(
        down.stderr.contains("is `sandboxd serve` running?"),
        "{}",
        down.stderr
    );

    let bad_url = Ran::from(
        command(&["runtimes", "--url", "ftp://x", "--token", TOKEN])
            .output()
            .unwrap(),
    );
    assert_eq!(bad_url.code, 2, "{}", bad_url.stderr);

    let usage = sandboxd(&service, &["exec"]);
    assert_eq!(usage.code, 2);
    let two_locals = sandboxd(&service, &["cp", "a.txt", "b.txt"]);
    assert_eq!(two_locals.code, 2);
    assert!(
        two_locals.stderr.contains("ID:PATH"),
        "{}",
        two_locals.stderr
    );
    let no_local_file = sandboxd(&service, &["cp", "/nonexistent/file", "some-id:x"]);
    assert_eq!(no_local_file.code, 6, "{}", no_local_file.stderr);
}

#[test]
fn the_token_file_of_a_local_service_is_found() {
    if Path::new("/var/lib/sandboxd/token").exists() {
        common::skip_or_fail(
            "no /var/lib/sandboxd/token: that file is found first, and this host runs a service of its own",
        );
        return;
    }
    let service = TestService::start(&base_config(4, ""));
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join(".local/state/sandboxd");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("token"), format!("{TOKEN}\n")).unwrap();
    let found = command(&["runtimes", "--json", "--url", &service.url])
        .env("HOME", home.path())
        .output()
        .unwrap();
    let found = Ran::from(found).ok();
    assert_eq!(found.json()["default_runtime"], "sh");

    std::fs::remove_file(state.join("token")).unwrap();
    let missing = Ran::from(
        command(&["runtimes", "--url", &service.url])
            .env("HOME", home.path())
            .output()
            .unwrap(),
    );
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("--token or SANDBOXD_TOKEN"),
        "{}",
        missing.stderr
    );
}

/// The parts of the client library the commands above do not use.
#[tokio::test]
async fn the_client_library_reads_policy_config_stats_and_deletes_files() {
    let service = TestService::start(&base_config(4, ""));
    let client = Client::new(&service.url, TOKEN, Interface::Cli).unwrap();
    assert_eq!(client.policy().await.unwrap().max_timeout_secs, 60);
    let config = client.config().await.unwrap();
    assert_eq!(config.token, "<redacted>");
    assert_eq!(config.default_runtime, "sh");

    let session = client
        .create_session(&CreateSession::default())
        .await
        .unwrap();
    assert_eq!(client.stats().await.unwrap().sessions, 1);
    client
        .write_file(&session.id, "dir/a.txt", None, "a")
        .await
        .unwrap();
    let refused = client.delete_file(&session.id, "dir", false).await;
    assert_eq!(
        refused.unwrap_err().code(),
        Some("is_directory"),
        "a directory needs recursive"
    );
    client.delete_file(&session.id, "dir", true).await.unwrap();
    let listing = client.list_files(&session.id, ".").await.unwrap();
    assert!(listing.entries.is_empty(), "{listing:?}");
    client.close_session(&session.id).await.unwrap();

    let wrong = client.with_token("wrong-token-0123456789");
    assert!(matches!(
        wrong.stats().await,
        Err(ClientError::Unauthorized { .. })
    ));
}

#[test]
fn pause_resume_snapshot_and_fork_from_the_command_line() {
    let service = TestService::start(&base_config(4, ""));
    let id = sandboxd(&service, &["open", "--label", "from=cli"])
        .ok()
        .stdout;
    let id = id.trim();
    sandboxd(
        &service,
        &["exec", id, "--", "sh", "-c", "echo kept > /workspace/f"],
    )
    .ok();

    let paused = sandboxd(&service, &["pause", id, "--json"]).ok().json();
    assert_eq!(paused["state"], "paused");
    let listed = sandboxd(&service, &["sessions"]).ok().stdout;
    assert!(listed.contains("paused"), "{listed}");
    let resumed = sandboxd(&service, &["resume", id]).ok().stdout;
    assert_eq!(resumed.trim(), format!("resumed {id}"));

    let taken = sandboxd(&service, &["snapshot", "create", id, "cli snap", "--json"])
        .ok()
        .json();
    let snapshot = taken["id"].as_str().unwrap();
    assert_eq!(taken["labels"]["from"], "cli");
    let table = sandboxd(&service, &["snapshot", "list"]).ok().stdout;
    assert!(
        table.contains(snapshot) && table.contains("cli snap"),
        "{table}"
    );
    let opened = sandboxd(&service, &["open", "--snapshot", snapshot])
        .ok()
        .stdout;
    let read = sandboxd(
        &service,
        &["exec", opened.trim(), "--", "cat", "/workspace/f"],
    )
    .ok();
    assert_eq!(read.stdout, "kept\n");

    let forked = sandboxd(&service, &["fork", id, "--count", "2"]).ok();
    assert_eq!(forked.stdout.lines().count(), 2, "{}", forked.stdout);
    let carried = match common::on_gvisor() {
        true => "2 sessions with the session's files and running processes\n",
        false => "2 sessions with the session's files (not its processes)\n",
    };
    assert_eq!(forked.stderr, carried);
    let deleted = sandboxd(&service, &["snapshot", "delete", snapshot])
        .ok()
        .stdout;
    assert_eq!(deleted.trim(), format!("deleted {snapshot}"));
    let gone = sandboxd(&service, &["snapshot", "get", snapshot]);
    assert_eq!(gone.code, 5, "{}", gone.stderr);
    assert!(gone.stderr.contains("not_found"), "{}", gone.stderr);
}
