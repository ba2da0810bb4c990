//! Code contexts on the real service and engine: the catalogue's `python-interpreter` recipe
//! (built through the service on first use, then kept like any recipe build), a Jupyter
//! kernel per context in the sandbox, and runs streamed as Server-Sent Events.

mod common;

use base64::Engine;
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

/// The first session builds the recipe (minutes): tests wait for it one at a time.
static BUILD: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn config() -> String {
    format!(
        r#"
token = "{TOKEN}"
default_runtime = "interpreter"
max_sessions = 8
isolation = "{isolation}"

[runtimes.interpreter]
{interpreter}
mem_limit = "1g"

[runtimes.plain]
image = "{python}"
interpreter = ["python3"]

[runtimes.late]
{interpreter}
kernels.late = ["python3", "-c", "{late_printer}", "-f", "{{connection_file}}"]

[build]
extra_ca_certificates = ["/etc/ssl/certs/ca-certificates.crt"]

[policy]
default_timeout_secs = 30
max_timeout_secs = 120
max_output_bytes = "256k"
max_contexts_per_session = 4
"#,
        python = python_image(),
        interpreter = interpreter_runtime(),
        late_printer = LATE_PRINTER.replace('\n', "\\n"),
        // scripts/test.sh's gvisor step runs this suite with its runtimes on gVisor.
        isolation = if on_gvisor() { "gvisor" } else { "runc" },
    )
}

/// A kernel that publishes what a run printed only as it reads its next request, after its
/// idle status (as Deno's kernel may, from a task of its own), and reports an implementation
/// not known to flush before idle: a run of it must wait for its output behind a fence.
const LATE_PRINTER: &str = "from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel
class LatePrinter(Kernel):
    implementation = 'late-printer'
    implementation_version = '1'
    language_info = {'name': 'late', 'version': '1', 'mimetype': 'text/plain', 'file_extension': '.txt'}
    banner = ''
    pending = []
    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False, **kwargs):
        self.pending.append((self.get_parent(), code))
        return {'status': 'ok', 'execution_count': self.execution_count, 'payload': [], 'user_expressions': {}}
    async def dispatch_shell(self, *args, **kwargs):
        while self.pending:
            parent, text = self.pending.pop(0)
            self.session.send(self.iopub_socket, 'stream', {'name': 'stdout', 'text': text}, parent=parent, ident=self._topic('stream'))
        return await super().dispatch_shell(*args, **kwargs)
IPKernelApp.launch_instance(kernel_class=LatePrinter)
";

/// The interpreter runtime's source: the catalogue's recipe, built through the service; on
/// Kubernetes, which builds no recipe, that recipe's image as a Docker-backed service built it,
/// imported into the cluster (scripts/test.sh names it), with the recipe's kernel.
fn interpreter_runtime() -> String {
    if !on_kubernetes() {
        return r#"runtime = "python-interpreter""#.to_string();
    }
    let image = std::env::var("SANDBOXD_TEST_INTERPRETER_IMAGE")
        .ok()
        .filter(|image| !image.is_empty())
        .expect(
            "on Kubernetes the code-context suite needs SANDBOXD_TEST_INTERPRETER_IMAGE: the \
             python-interpreter recipe's image, imported into the cluster (scripts/test.sh's \
             kubernetes step does both)",
        );
    format!(
        r#"image = "{image}"
interpreter = ["python3"]
kernels.python = ["python3", "-m", "ipykernel_launcher", "-f", "{{connection_file}}"]"#
    )
}

async fn open_session(service: &TestService, runtime: &str) -> String {
    let _build = BUILD.lock().await;
    let response = service
        .post("/v1/sessions")
        .timeout(Duration::from_secs(1800))
        .json(&json!({"runtime": runtime}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let session: Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{session}");
    session["id"].as_str().unwrap().to_string()
}

/// What a run streamed: its events in order, `end` last.
struct Run {
    status: u16,
    events: Vec<(String, Value)>,
}

impl Run {
    fn stdout(&self) -> String {
        self.of("stdout")
            .map(|d| d["text"].as_str().unwrap().to_string())
            .collect()
    }

    fn of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.events
            .iter()
            .filter(move |(name, _)| name == kind)
            .map(|(_, data)| data)
    }

    fn end(&self) -> &Value {
        let (name, data) = self.events.last().expect("events");
        assert_eq!(name, "end", "the last event is end: {:?}", self.events);
        data
    }
}

async fn run_in(service: &TestService, path: String, body: Value) -> Run {
    let response = service
        .post(&path)
        .timeout(Duration::from_secs(300))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    if status != 200 {
        return Run {
            status,
            events: vec![(
                "answer".into(),
                serde_json::from_str(&text).unwrap_or(json!(text)),
            )],
        };
    }
    let mut events = Vec::new();
    for block in text.split("\n\n") {
        let mut name = None;
        let mut data = String::new();
        for line in block.lines() {
            match line.split_once(':') {
                Some(("event", value)) => name = Some(value.trim().to_string()),
                Some(("data", value)) => data += value.strip_prefix(' ').unwrap_or(value),
                _ => {}
            }
        }
        if let Some(name) = name {
            events.push((name, serde_json::from_str(&data).unwrap()));
        }
    }
    Run { status, events }
}

async fn code(service: &TestService, session: &str, code: &str) -> Run {
    run_in(
        service,
        format!("/v1/sessions/{session}/code"),
        json!({"code": code}),
    )
    .await
}

#[tokio::test]
async fn state_persists_and_rich_results_come_back() {
    let service = TestService::start(&config());
    let id = open_session(&service, "interpreter").await;

    let first = code(&service, &id, "import pandas as pd\nx = 41\nprint('set')").await;
    assert_eq!(first.status, 200, "{:?}", first.events);
    assert_eq!(first.stdout(), "set\n");
    assert_eq!(first.end()["outcome"], "ok", "{:?}", first.events);
    assert_eq!(first.end()["context"], "python", "the default context");

    let second = code(&service, &id, "x + 1").await;
    let value: Vec<&Value> = second.of("result").collect();
    assert_eq!(value.len(), 1, "{:?}", second.events);
    assert_eq!(value[0]["data"]["text/plain"], "42");
    assert_eq!(value[0]["is_main_result"], true);

    // A plot comes back as a PNG without savefig.
    let plot = code(
        &service,
        &id,
        "import matplotlib.pyplot as plt\nplt.figure(figsize=(4, 3), dpi=100)\nplt.plot([1, 3, 2])\nplt.show()",
    )
    .await;
    let png = plot
        .of("result")
        .find_map(|r| r["data"]["image/png"].as_str())
        .unwrap_or_else(|| panic!("no image/png in {:?}", plot.events));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(png.trim())
        .unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a valid PNG");
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).expect("decodes");
    assert!(
        (300..=500).contains(&frame.width) && (200..=400).contains(&frame.height),
        "a 4x3 inch figure: {}x{}",
        frame.width,
        frame.height
    );

    // A DataFrame comes back as an HTML table (and as text).
    let frame = code(&service, &id, "pd.DataFrame({'a': [1, 2], 'b': [3, 4]})").await;
    let result = frame.of("result").next().expect("a result");
    assert!(
        result["data"]["text/html"]
            .as_str()
            .unwrap()
            .contains("<table"),
        "{result}"
    );

    // An exception comes back with its traceback, and the context lives on.
    let failing = code(&service, &id, "def f():\n    return 1 / 0\nf()").await;
    let error = failing.of("error").next().expect("an error event");
    assert_eq!(error["name"], "ZeroDivisionError");
    assert!(error["traceback"].as_array().unwrap().len() > 1, "{error}");
    assert_eq!(failing.end()["outcome"], "error");
    assert_eq!(code(&service, &id, "print(x)").await.stdout(), "41\n");

    // One activity entry per run, naming the language and context, never the code.
    let activity = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    let runs: Vec<&Value> = activity["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "run_code")
        .collect();
    assert_eq!(runs.len(), 6, "{activity}");
    assert!(
        runs.iter().all(|e| e["target"] == "python/python"),
        "{activity}"
    );
    assert!(
        !activity.to_string().contains("1 / 0"),
        "no code in {activity}"
    );
}

#[tokio::test]
async fn timeouts_interrupt_and_contexts_are_apart() {
    let service = TestService::start(&config());
    let id = open_session(&service, "interpreter").await;
    let create = |language: &str| {
        service
            .post(&format!("/v1/sessions/{id}/contexts"))
            .json(&json!({"language": language}))
            .send()
    };
    let a: Value = create("python").await.unwrap().json().await.unwrap();
    let b: Value = create("python").await.unwrap().json().await.unwrap();
    let run = |context: &Value, code: &str, timeout: u64| {
        let path = format!(
            "/v1/sessions/{id}/contexts/{}/run",
            context["id"].as_str().unwrap()
        );
        run_in(
            &service,
            path,
            json!({"code": code, "timeout_secs": timeout}),
        )
    };
    run(&a, "secret = 7", 30).await;
    let other = run(&b, "print(secret)", 30).await;
    assert_eq!(
        other.of("error").next().unwrap()["name"],
        "NameError",
        "{:?}",
        other.events
    );

    // An endless loop is interrupted by the timeout; the context keeps its state.
    let endless = run(&a, "while True:\n    pass", 2).await;
    let end = endless.end();
    assert_eq!(end["outcome"], "timed_out", "{:?}", endless.events);
    assert_eq!(end["restarted"], false, "the interrupt was enough");
    assert_eq!(run(&a, "print(secret)", 30).await.stdout(), "7\n");

    // A kernel killed from inside is reported and replaced: the next run works, from nothing.
    let died = run(&a, "import os\nos._exit(3)", 30).await;
    let end = died.end();
    assert_eq!(end["outcome"], "kernel_died", "{:?}", died.events);
    assert_eq!(end["restarted"], true);
    assert_eq!(end["exit_code"], 3);
    let after = run(&a, "print('back')\nprint(secret)", 30).await;
    assert_eq!(after.stdout(), "back\n");
    assert_eq!(after.of("error").next().unwrap()["name"], "NameError");
    let listed = service
        .get_json(&format!("/v1/sessions/{id}/contexts"))
        .await;
    let listed_a = listed["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == a["id"])
        .unwrap()
        .clone();
    assert_eq!(listed_a["restarts"], 1, "{listed}");

    // An explicit restart forgets the state too; a deleted context is gone.
    run(&b, "y = 1", 30).await;
    let path = format!("/v1/sessions/{id}/contexts/{}", b["id"].as_str().unwrap());
    let restarted = service
        .post(&format!("{path}/restart"))
        .send()
        .await
        .unwrap();
    assert_eq!(restarted.status(), 200);
    assert_eq!(
        run(&b, "print(y)", 30).await.of("error").next().unwrap()["name"],
        "NameError"
    );
    assert_eq!(service.delete(&path).send().await.unwrap().status(), 204);
    assert_eq!(run(&b, "1", 30).await.status, 404);
}

#[tokio::test]
async fn output_a_kernel_publishes_after_its_idle_status_stays_with_its_run() {
    let service = TestService::start(&config());
    let id = open_session(&service, "late").await;
    let context = create_context(&service, &id, json!({"language": "late"})).await;
    let path = format!(
        "/v1/sessions/{id}/contexts/{}/run",
        context["id"].as_str().unwrap()
    );
    for printed in ["first\n", "second\n"] {
        let run = run_in(&service, path.clone(), json!({"code": printed})).await;
        assert_eq!(run.end()["outcome"], "ok", "{:?}", run.events);
        assert_eq!(run.stdout(), printed, "{:?}", run.events);
    }
}

#[tokio::test]
async fn output_floods_are_capped_and_say_so() {
    let service = TestService::start(&config());
    let id = open_session(&service, "interpreter").await;
    let flood = code(
        &service,
        &id,
        "for i in range(50000):\n    print('x' * 100)",
    )
    .await;
    let end = flood.end();
    assert_eq!(end["outcome"], "ok", "{end}");
    assert_eq!(end["truncated"], true, "{end}");
    assert!(end["dropped_bytes"].as_u64().unwrap() > 1_000_000, "{end}");
    assert!(
        flood.stdout().len() <= 256 * 1024,
        "{}",
        flood.stdout().len()
    );
    assert!(!flood.stdout().is_empty());
}

#[tokio::test]
async fn a_runtime_without_a_kernel_names_the_recipe() {
    let service = TestService::start(&config());
    let id = open_session(&service, "plain").await;
    let answer = code(&service, &id, "1").await;
    assert_eq!(answer.status, 409);
    let error = &answer.events[0].1["error"];
    assert_eq!(error["code"], "no_kernel");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("python-interpreter"),
        "{error}"
    );
}

#[tokio::test]
async fn the_cli_prints_text_and_saves_images() {
    use std::io::Write;
    let service = TestService::start(&config());
    let id = open_session(&service, "interpreter").await;
    let images = tempfile::tempdir().unwrap();
    let cli = |code: &'static str| {
        let url = service.url.clone();
        let id = id.clone();
        let dir = images.path().to_path_buf();
        tokio::task::spawn_blocking(move || {
            let mut child = std::process::Command::new(sandboxd_bin())
                .args(["code", &id, "-", "--images-dir"])
                .arg(&dir)
                .env("SANDBOXD_URL", url)
                .env("SANDBOXD_TOKEN", TOKEN)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(code.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        })
    };
    let plotted = cli(
        "import matplotlib.pyplot as plt\nprint('plotting')\nplt.plot([1, 2])\nplt.show()\n6 * 7",
    )
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&plotted.stdout);
    assert!(
        plotted.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&plotted.stderr)
    );
    assert!(
        stdout.contains("plotting\n") && stdout.contains("42"),
        "{stdout}"
    );
    let saved = images.path().join("image-1.png");
    assert!(
        stdout.contains(&format!("[image/png saved to {}]", saved.display())),
        "{stdout}"
    );
    let decoder = png::Decoder::new(std::io::Cursor::new(std::fs::read(&saved).unwrap()));
    assert!(decoder.read_info().unwrap().info().width > 100);

    let failed = cli("undefined_name").await.unwrap();
    assert_eq!(failed.status.code(), Some(1));
    let traceback = String::from_utf8_lossy(&failed.stderr);
    assert!(traceback.contains("NameError"), "{traceback}");
    // A pipe, not a terminal: the kernel's colours are left out.
    assert!(!traceback.contains('\u{1b}'), "{traceback:?}");
}

/// The result a run's last expression gave, as text.
fn main_result(run: &Run) -> Option<String> {
    run.of("result")
        .find(|r| r["is_main_result"] == true)
        .and_then(|r| r["data"]["text/plain"].as_str().map(String::from))
}

async fn create_context(service: &TestService, session: &str, body: Value) -> Value {
    let response = service
        .post(&format!("/v1/sessions/{session}/contexts"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

/// A session holds at most `policy.max_contexts_per_session` contexts; a deleted one gives its
/// place back.
#[tokio::test]
async fn contexts_per_session_are_capped_by_policy() {
    let service = TestService::start(&config());
    let id = open_session(&service, "interpreter").await;
    let mut made = Vec::new();
    for _ in 0..4 {
        made.push(create_context(&service, &id, json!({})).await);
    }
    let refused = service
        .post(&format!("/v1/sessions/{id}/contexts"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 429);
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["error"]["code"], "too_many_contexts", "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("policy.max_contexts_per_session"),
        "{error}"
    );
    let deleted = service
        .delete(&format!(
            "/v1/sessions/{id}/contexts/{}",
            made[0]["id"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    create_context(&service, &id, json!({})).await;
}

#[tokio::test]
async fn contexts_survive_a_restart_of_the_service() {
    let mut service = TestService::start(&config());
    let id = open_session(&service, "interpreter").await;
    let created = create_context(&service, &id, json!({"language": "python", "cwd": "/tmp"})).await;
    let context = created["id"].as_str().unwrap().to_string();
    let run_path = format!("/v1/sessions/{id}/contexts/{context}/run");
    let set = run_in(&service, run_path.clone(), json!({"code": "x = 41"})).await;
    assert_eq!(set.end()["outcome"], "ok", "{:?}", set.events);
    code(&service, &id, "y = 1").await;
    // A context that never ran has no kernel yet, and is kept all the same.
    let idle = create_context(&service, &id, json!({"language": "python"})).await;

    service.crash_and_restart();

    // The restarted service learns the contexts back from the agent once it dials back.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let listed = loop {
        let listed = service
            .get_json(&format!("/v1/sessions/{id}/contexts"))
            .await;
        if listed["contexts"].as_array().is_some_and(|c| c.len() == 3) {
            break listed;
        }
        assert!(std::time::Instant::now() < deadline, "{listed}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let learned = listed["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == context.as_str())
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(learned["language"], "python");
    assert_eq!(learned["cwd"], "/tmp");

    // The same kernels, with their state.
    let after = run_in(&service, run_path, json!({"code": "x + 1"})).await;
    assert_eq!(
        main_result(&after).as_deref(),
        Some("42"),
        "{:?}",
        after.events
    );
    assert_eq!(after.end()["restarted"], false);
    let default = code(&service, &id, "y + 1").await;
    assert_eq!(
        main_result(&default).as_deref(),
        Some("2"),
        "{:?}",
        default.events
    );
    let idle_run = format!(
        "/v1/sessions/{id}/contexts/{}/run",
        idle["id"].as_str().unwrap()
    );
    let first = run_in(&service, idle_run, json!({"code": "1 + 1"})).await;
    assert_eq!(
        main_result(&first).as_deref(),
        Some("2"),
        "{:?}",
        first.events
    );
    // Each can be deleted (no kernel left running unknown to the service).
    let path = format!("/v1/sessions/{id}/contexts/{context}");
    assert_eq!(service.delete(&path).send().await.unwrap().status(), 204);
}

/// A kernel's variables survive a pause: on gVisor (the gvisor step) the pause writes the
/// sandbox's memory to disk and the resume restores the kernel from it; on runc the freezer
/// keeps it in RAM.
#[tokio::test]
async fn a_kernels_variables_survive_a_pause() {
    if !docker_only("pause", "the Kubernetes backend does not pause pods") {
        return;
    }
    let service = TestService::start(&config());
    let id = open_session(&service, "interpreter").await;
    let created = create_context(&service, &id, json!({"language": "python"})).await;
    let run_path = format!(
        "/v1/sessions/{id}/contexts/{}/run",
        created["id"].as_str().unwrap()
    );
    let set = run_in(
        &service,
        run_path.clone(),
        json!({"code": "import os\nx = 41\ntoken = os.urandom(8).hex()\ntoken"}),
    )
    .await;
    let token = main_result(&set).unwrap_or_else(|| panic!("{:?}", set.events));

    let paused = service
        .post(&format!("/v1/sessions/{id}/pause"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(paused.status(), 200);
    let paused: Value = paused.json().await.unwrap();
    let memory = if on_gvisor() { "disk" } else { "ram" };
    assert_eq!(paused["paused_memory"], memory, "{paused}");

    // The run resumes the session first; the kernel is the same process with its state.
    let after = run_in(&service, run_path, json!({"code": "(x + 1, token)"})).await;
    assert_eq!(
        main_result(&after),
        Some(format!("(42, {token})")),
        "{:?}",
        after.events
    );
    assert_eq!(after.end()["restarted"], false, "{:?}", after.events);
    let info = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "running", "{info}");
}

#[tokio::test]
async fn a_kernel_message_over_the_cap_is_an_error_and_the_agent_lives() {
    let service = TestService::start(&config());
    let id = open_session(&service, "interpreter").await;
    code(&service, &id, "x = 1").await;
    // About 100 MB in one display message: over the agent's cap of 32 MiB a message.
    let huge = code(
        &service,
        &id,
        "display({'text/plain': 'x' * 100_000_000}, raw=True)",
    )
    .await;
    let error = huge
        .of("error")
        .next()
        .unwrap_or_else(|| panic!("{:?}", huge.end()));
    assert_eq!(error["name"], "OutputTooLarge", "{error}");
    assert!(
        error["value"].as_str().unwrap().contains("too large"),
        "{error}"
    );
    assert_eq!(huge.end()["restarted"], true, "{:?}", huge.end());
    // The agent lives: the context runs again (on a new kernel), and commands run.
    let again = code(&service, &id, "print('back')").await;
    assert_eq!(again.stdout(), "back\n", "{:?}", again.events);
    assert_eq!(service.sh(&id, "echo alive").await["stdout"], "alive\n");
}
