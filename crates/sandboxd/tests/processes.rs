//! Background processes and the interactive terminal, through the real service and real
//! sandboxes: streaming and resuming output, stdin, signals, timeouts, the WebSocket
//! terminal, and what happens when the sandbox kills its own agent.

mod common;

use base64::Engine;
use common::{base_config, TestService, TOKEN};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// The longest wait for any one event of a stream.
const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

async fn start(service: &TestService, id: &str, body: Value) -> Value {
    let (status, process) = try_start(service, id, body).await;
    assert_eq!(status, 201, "start failed: {process}");
    process
}

async fn try_start(service: &TestService, id: &str, body: Value) -> (u16, Value) {
    let response = service
        .post(&format!("/v1/sessions/{id}/processes"))
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn post_json(service: &TestService, path: &str, body: Value) -> (u16, Value) {
    let response = service.post(path).json(&body).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// One Server-Sent Event.
#[derive(Debug)]
struct Sse {
    event: String,
    id: Option<String>,
    data: Value,
}

/// A process's output stream, parsed as it arrives.
struct OutputStream {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl OutputStream {
    async fn open(service: &TestService, session: &str, process: &str, query: &str) -> Self {
        let response = service
            .get(&format!(
                "/v1/sessions/{session}/processes/{process}/stream{query}"
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{:?}", response.text().await);
        let content_type = response.headers()["content-type"].to_str().unwrap();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );
        OutputStream {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next event (keepalive comments skipped), or `None` once the stream ended.
    async fn next(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let block = String::from_utf8(block).unwrap();
                let mut event = None;
                let mut id = None;
                let mut data = String::new();
                for line in block.lines() {
                    match line.split_once(':') {
                        Some(("event", value)) => event = Some(value.trim().to_string()),
                        Some(("id", value)) => id = Some(value.trim().to_string()),
                        Some(("data", value)) => data += value.strip_prefix(' ').unwrap_or(value),
                        _ => {}
                    }
                }
                if let Some(event) = event {
                    let data = serde_json::from_str(&data).unwrap();
                    return Some(Sse { event, id, data });
                }
                continue;
            }
            let chunk = tokio::time::timeout(EVENT_TIMEOUT, self.response.chunk())
                .await
                .expect("an event within the timeout")
                .unwrap()?;
            self.buffer.extend_from_slice(&chunk);
        }
    }

    /// Output text until the `exit` event, which it returns with the last id seen.
    async fn read_to_exit(&mut self) -> (String, Value, Option<String>) {
        let mut text = String::new();
        let mut last_id = None;
        while let Some(event) = self.next().await {
            last_id = event.id.clone().or(last_id);
            match event.event.as_str() {
                "stdout" | "stderr" => text += event.data["text"].as_str().unwrap(),
                "exit" => {
                    assert!(self.next().await.is_none(), "the stream ends after exit");
                    return (text, event.data, last_id);
                }
                other => panic!("unexpected {other} event: {event:?}"),
            }
        }
        panic!("the stream ended without an exit event; got {text:?}");
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens the terminal WebSocket of a session; `query` starts with `?` or is empty.
async fn open_terminal(
    service: &TestService,
    id: &str,
    query: &str,
) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
    let url = format!(
        "{}/v1/sessions/{id}/pty{query}",
        service.url.replacen("http", "ws", 1)
    );
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let (socket, _) = tokio_tungstenite::connect_async(request).await?;
    Ok(socket)
}

async fn next_message(socket: &mut Socket) -> Message {
    let message = tokio::time::timeout(EVENT_TIMEOUT, socket.next()).await;
    message.expect("a message in time").unwrap().unwrap()
}

/// Reads terminal output until `needle` appears in it. WebSocket pings and pongs may come
/// between output messages at any time and are passed over; a text message (the exit or an
/// error) or the close before `needle` fails the test.
async fn read_terminal_until(socket: &mut Socket, needle: &str) -> String {
    let mut seen = String::new();
    while !seen.contains(needle) {
        match next_message(socket).await {
            Message::Binary(data) => seen += &String::from_utf8_lossy(&data),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("{other:?} before {needle:?}; saw {seen:?}"),
        }
    }
    seen
}

/// Waits until exactly `count` `sleep` processes run in the sandbox.
async fn wait_for_sleeps(service: &TestService, id: &str, count: u32) {
    let give_up = Instant::now() + Duration::from_secs(5);
    let expected = format!("{count}\n");
    loop {
        let counted = service.sh(id, "ps -o comm | grep -c '^sleep$'").await;
        if counted["stdout"] == expected.as_str() {
            return;
        }
        assert!(Instant::now() < give_up, "{counted} sleeps, not {count}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn activity(service: &TestService, id: &str) -> Vec<Value> {
    let log = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    log["entries"].as_array().unwrap().clone()
}

#[tokio::test]
async fn background_output_resumes_from_an_offset_without_gaps() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let process = start(
        &service,
        &id,
        json!({"command": "for i in 1 2 3 4 5; do echo $i; sleep 1; done"}),
    )
    .await;
    let pid = process["id"].as_str().unwrap();
    assert_eq!(process["state"], "running");
    assert_eq!(process["program"], "echo", "named after the `for` head");
    assert_eq!(
        process["timeout_secs"], 20,
        "the timeout defaults to policy.default_timeout_secs, as for exec"
    );

    // Read the first two lines, then go away.
    let mut stream = OutputStream::open(&service, &id, pid, "").await;
    let mut seen = String::new();
    let mut resume_at = String::new();
    while seen.lines().count() < 2 {
        let event = stream.next().await.unwrap();
        assert_eq!(event.event, "stdout");
        assert_eq!(event.data["offset"], seen.len());
        seen += event.data["text"].as_str().unwrap();
        resume_at = event.id.unwrap();
    }
    assert_eq!(seen, "1\n2\n");
    assert_eq!(resume_at, "4");
    drop(stream);

    // Come back from where we were: the rest, nothing twice, then the exit.
    let mut stream = OutputStream::open(&service, &id, pid, &format!("?since={resume_at}")).await;
    let (rest, exit, last_id) = stream.read_to_exit().await;
    assert_eq!(format!("{seen}{rest}"), "1\n2\n3\n4\n5\n");
    // Seen once in CI with no code (a signal?): the whole event says which.
    assert_eq!(exit["exit_code"], 0, "{exit}");
    assert_eq!(exit["state"], "exited");
    assert_eq!(last_id.as_deref(), Some("10"));

    // Last-Event-ID works as well, and after the exit the stream is just the exit.
    let response = service
        .get(&format!("/v1/sessions/{id}/processes/{pid}/stream"))
        .header("last-event-id", "10")
        .send()
        .await
        .unwrap();
    let mut stream = OutputStream {
        response,
        buffer: Vec::new(),
    };
    assert_eq!(stream.next().await.unwrap().event, "exit");

    let beyond = service
        .get(&format!(
            "/v1/sessions/{id}/processes/{pid}/stream?since=11"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(beyond.status(), 400);
    let missing = service
        .get(&format!("/v1/sessions/{id}/processes/p999/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn exit_status_is_kept_and_processes_are_listed() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let failing = start(
        &service,
        &id,
        json!({"argv": ["sh", "-c", "printf '\\377\\000a'; exit 7"], "env": {"X": "1"}}),
    )
    .await;
    let sleeping = start(&service, &id, json!({"command": "sleep 30", "cwd": "/tmp"})).await;
    let failing_id = failing["id"].as_str().unwrap();

    // Wait for the exit without streaming: the agent keeps it.
    let give_up = Instant::now() + Duration::from_secs(10);
    let done = loop {
        let info = service
            .get_json(&format!("/v1/sessions/{id}/processes/{failing_id}"))
            .await;
        if info["state"] == "exited" {
            break info;
        }
        assert!(Instant::now() < give_up, "{info}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["exit_code"], 7);
    assert_eq!(done["signal"], Value::Null);
    assert_eq!(done["output_bytes"], 3);
    assert!(done["ended_at"].is_string() && done["duration_ms"].is_u64());

    // Binary output survives base64.
    let mut stream = OutputStream::open(&service, &id, failing_id, "?encoding=base64").await;
    let event = stream.next().await.unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(event.data["base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, b"\xff\x00a");
    // As text, the invalid byte is replaced.
    let mut stream = OutputStream::open(&service, &id, failing_id, "").await;
    let (text, _, _) = stream.read_to_exit().await;
    assert_eq!(text, "\u{fffd}\u{0}a");

    let list = service
        .get_json(&format!("/v1/sessions/{id}/processes"))
        .await;
    let listed: Vec<(&str, &str)> = list["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            (failing_id, "exited"),
            (sleeping["id"].as_str().unwrap(), "running")
        ]
    );
    let missing = service
        .get(&format!("/v1/sessions/{id}/processes/p999"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let no_session = service
        .get("/v1/sessions/nope/processes")
        .send()
        .await
        .unwrap();
    assert_eq!(no_session.status(), 404);

    // The log names programs, never their arguments or environment.
    let entries = activity(&service, &id).await;
    let starts: Vec<&Value> = entries
        .iter()
        .filter(|e| e["action"] == "process_start")
        .collect();
    assert_eq!(starts.len(), 2);
    assert!(starts.iter().all(|e| e["status"] == "ok"));
    assert!(starts.iter().any(|e| e["target"] == "printf"));
    // Looked for as the argument's text (a backslash escape, `\\377` in JSON) and the rest of
    // the command line: bare digits may well be part of a timestamp or a duration.
    let logged = serde_json::to_string(&entries).unwrap();
    for argument in ["\\\\377", "\\\\000a", "printf '", "exit 7", "\"X\""] {
        assert!(!logged.contains(argument), "{argument} in {logged}");
    }
}

#[tokio::test]
async fn stdin_is_written_and_closed() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let cat = start(&service, &id, json!({"argv": ["cat"], "stdin": true})).await;
    assert_eq!(cat["stdin_open"], true);
    let pid = cat["id"].as_str().unwrap();
    let stdin = format!("/v1/sessions/{id}/processes/{pid}/stdin");
    let mut stream = OutputStream::open(&service, &id, pid, "").await;

    let raw = service
        .post(&stdin)
        .body("raw bytes\n")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 200);
    let written: Value = raw.json().await.unwrap();
    assert_eq!(written, json!({"bytes": 10, "closed": false}));
    let echoed = stream.next().await.unwrap();
    assert_eq!(echoed.data["text"], "raw bytes\n");

    let (status, written) = post_json(&service, &stdin, json!({"data": "json\n"})).await;
    assert_eq!((status, written["bytes"].as_u64()), (200, Some(5)));
    let (status, closed) = post_json(&service, &format!("{stdin}/close"), json!({})).await;
    assert_eq!(status, 200, "{closed}");
    assert_eq!(closed["closed"], true);
    let (text, exit, _) = stream.read_to_exit().await;
    assert_eq!(text, "json\n");
    assert_eq!(exit["exit_code"], 0);
    assert_eq!(exit["stdin_open"], false);

    let (status, refused) = post_json(&service, &stdin, json!({"data": "late"})).await;
    assert_eq!(status, 409);
    assert_eq!(refused["error"]["code"], "stdin_unavailable");
    let no_stdin = start(&service, &id, json!({"command": "sleep 30"})).await;
    let (status, refused) = post_json(
        &service,
        &format!(
            "/v1/sessions/{id}/processes/{}/stdin",
            no_stdin["id"].as_str().unwrap()
        ),
        json!({"data": "x"}),
    )
    .await;
    assert_eq!(status, 409, "{refused}");

    let entries = activity(&service, &id).await;
    let writes: Vec<&Value> = entries
        .iter()
        .filter(|e| e["action"] == "process_stdin" && e["status"] == "ok")
        .collect();
    assert_eq!(writes.len(), 2);
    assert!(writes.iter().all(|e| e["target"] == "cat"));
    assert!(writes.iter().any(|e| e["bytes"] == 10));
    assert!(entries
        .iter()
        .any(|e| e["action"] == "process_stdin_close" && e["status"] == "ok"));
}

#[tokio::test]
async fn signals_reach_the_process_group() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let sleeper = start(&service, &id, json!({"argv": ["sleep", "1000"]})).await;
    let sleeper_id = sleeper["id"].as_str().unwrap();
    let (status, signalled) = post_json(
        &service,
        &format!("/v1/sessions/{id}/processes/{sleeper_id}/signal"),
        json!({"signal": "TERM"}),
    )
    .await;
    assert_eq!(status, 200, "{signalled}");
    let mut stream = OutputStream::open(&service, &id, sleeper_id, "").await;
    let (_, exit, _) = stream.read_to_exit().await;
    assert_eq!(
        (exit["exit_code"].clone(), exit["signal"].clone()),
        (Value::Null, json!(15))
    );

    // KILL to a shell and its background child leaves neither.
    let group = start(&service, &id, json!({"command": "sleep 1000 & sleep 1000"})).await;
    let group_id = group["id"].as_str().unwrap();
    wait_for_sleeps(&service, &id, 2).await;
    let (status, _) = post_json(
        &service,
        &format!("/v1/sessions/{id}/processes/{group_id}/signal"),
        json!({"signal": 9}),
    )
    .await;
    assert_eq!(status, 200);
    wait_for_sleeps(&service, &id, 0).await;

    let (status, refused) = post_json(
        &service,
        &format!("/v1/sessions/{id}/processes/{group_id}/signal"),
        json!({"signal": "BOGUS"}),
    )
    .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (400, Some("invalid_signal"))
    );
    let entries = activity(&service, &id).await;
    assert!(entries
        .iter()
        .any(|e| e["action"] == "process_signal" && e["target"] == "sleep"));
}

#[tokio::test]
async fn killing_every_process_reaches_what_left_its_group_and_keeps_the_session() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let background = start(&service, &id, json!({"argv": ["sleep", "1000"]})).await;
    let background_id = background["id"].as_str().unwrap();
    // A command that leaves a process behind in a session of its own, out of reach of the
    // command's process group.
    let escaped = service
        .sh(
            &id,
            "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo started",
        )
        .await;
    assert_eq!(escaped["stdout"], "started\n", "{escaped}");
    wait_for_sleeps(&service, &id, 2).await;

    service.kill_all_processes(&id, 2).await;
    wait_for_sleeps(&service, &id, 0).await;

    // The tracked process reports the kill; the session and its files carry on.
    let mut stream = OutputStream::open(&service, &id, background_id, "").await;
    let (_, exit, _) = stream.read_to_exit().await;
    assert_eq!(exit["signal"], 9, "{exit}");
    let after = service.sh(&id, "echo still here").await;
    assert_eq!(after["stdout"], "still here\n");
    let entries = activity(&service, &id).await;
    assert!(entries
        .iter()
        .any(|e| e["action"] == "process_kill_all" && e["status"] == "ok"));

    let missing = service
        .delete("/v1/sessions/no-such-session/processes")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn a_slow_producers_first_line_arrives_before_it_ends() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let started = Instant::now();
    let process = start(
        &service,
        &id,
        json!({"command": "echo first; sleep 3; echo second"}),
    )
    .await;
    let pid = process["id"].as_str().unwrap();
    let mut stream = OutputStream::open(&service, &id, pid, "").await;
    let first = stream.next().await.unwrap();
    let first_at = started.elapsed();
    assert_eq!(first.data["text"], "first\n");
    // It came while the producer still ran (it sleeps 3 s before its second line), not
    // with its exit; asked of the process itself rather than read off a clock, as a loaded
    // machine may delay any one event by a second.
    let meanwhile = service
        .get_json(&format!("/v1/sessions/{id}/processes/{pid}"))
        .await;
    assert_eq!(
        meanwhile["state"], "running",
        "the first line came with the exit: {meanwhile}"
    );
    let (rest, exit, _) = stream.read_to_exit().await;
    let exit_at = started.elapsed();
    assert_eq!(
        (rest.as_str(), exit["exit_code"].as_i64()),
        ("second\n", Some(0))
    );
    println!("first line after {first_at:?}, exit after {exit_at:?}");
}

#[tokio::test]
async fn timeouts_kill_the_group_and_are_capped_by_policy() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let process = start(
        &service,
        &id,
        json!({"command": "sleep 1000 & sleep 1000", "timeout_secs": 1}),
    )
    .await;
    let mut stream = OutputStream::open(&service, &id, process["id"].as_str().unwrap(), "").await;
    let (_, exit, _) = stream.read_to_exit().await;
    assert_eq!(exit["timed_out"], true);
    assert_eq!(exit["signal"], 9);
    wait_for_sleeps(&service, &id, 0).await;

    let (status, refused) = try_start(
        &service,
        &id,
        json!({"command": "true", "timeout_secs": 61}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], "timeout_too_large");
    for (body, code) in [
        (json!({}), "invalid_request"),
        (json!({"command": "true", "image": "x"}), "invalid_request"),
        (json!({"command": "true", "cols": 80}), "invalid_request"),
        (json!({"argv": ["/no/such/program"]}), "spawn_failed"),
    ] {
        let (status, refused) = try_start(&service, &id, body.clone()).await;
        assert_eq!(
            (status, refused["error"]["code"].as_str()),
            (400, Some(code)),
            "{body}"
        );
    }
}

#[tokio::test]
async fn terminal_over_a_websocket() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let opened = Instant::now();
    let mut socket = open_terminal(&service, &id, "?cols=90&rows=30")
        .await
        .unwrap();
    let Message::Text(started) = next_message(&mut socket).await else {
        panic!("the first message is the start");
    };
    let started: Value = serde_json::from_str(started.as_str()).unwrap();
    assert_eq!(started["type"], "started");
    assert_eq!(started["process"]["pty"], true);
    println!("terminal open after {:?}", opened.elapsed());

    let typed = Instant::now();
    socket
        .send(Message::Binary("echo hi-from-pty\n".into()))
        .await
        .unwrap();
    // The command's output line, not the terminal's echo of the command.
    read_terminal_until(&mut socket, "\nhi-from-pty\r\n").await;
    println!("echo round trip {:?}", typed.elapsed());
    socket
        .send(Message::Binary("stty size\n".into()))
        .await
        .unwrap();
    read_terminal_until(&mut socket, "30 90").await;

    let resize = json!({"type": "resize", "cols": 120, "rows": 40}).to_string();
    socket.send(Message::Text(resize.into())).await.unwrap();
    socket
        .send(Message::Binary("stty size\n".into()))
        .await
        .unwrap();
    read_terminal_until(&mut socket, "40 120").await;

    // The process shows in the list while the terminal is open.
    let list = service
        .get_json(&format!("/v1/sessions/{id}/processes"))
        .await;
    assert!(list["processes"][0]["pty"] == true && list["processes"][0]["state"] == "running");

    socket
        .send(Message::Binary("exit 3\n".into()))
        .await
        .unwrap();
    let exit = loop {
        match next_message(&mut socket).await {
            Message::Binary(_) | Message::Ping(_) | Message::Pong(_) => {}
            Message::Text(text) => break serde_json::from_str::<Value>(text.as_str()).unwrap(),
            other => panic!("{other:?} before the exit message"),
        }
    };
    assert_eq!(
        exit,
        json!({"type": "exit", "exit_code": 3, "signal": null})
    );
    assert!(matches!(next_message(&mut socket).await, Message::Close(_)));

    let entries = activity(&service, &id).await;
    let pty = entries.iter().find(|e| e["action"] == "pty").unwrap();
    assert_eq!(
        (pty["target"].as_str(), pty["exit_code"].as_i64()),
        (Some("sh"), Some(3))
    );

    // Closing the socket hangs the shell up, as closing a terminal window does.
    let mut socket = open_terminal(&service, &id, "").await.unwrap();
    let Message::Text(started) = next_message(&mut socket).await else {
        panic!("the first message is the start");
    };
    let started: Value = serde_json::from_str(started.as_str()).unwrap();
    let shell = started["process"]["id"].as_str().unwrap().to_string();
    socket.close(None).await.unwrap();
    drop(socket);
    let give_up = Instant::now() + Duration::from_secs(10);
    let hung_up = loop {
        let info = service
            .get_json(&format!("/v1/sessions/{id}/processes/{shell}"))
            .await;
        if info["state"] == "exited" {
            break info;
        }
        assert!(Instant::now() < give_up, "{info}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(hung_up["signal"], 1, "SIGHUP");

    // Invalid sizes are refused before the upgrade.
    match open_terminal(&service, &id, "?cols=0").await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 400)
        }
        other => panic!("{:?}", other.map(|_| "upgraded")),
    }
}

#[tokio::test]
async fn a_killed_agent_fails_its_session_clearly_and_nothing_else() {
    let service = TestService::start(&base_config(2, ""));
    let victim = service.open("sh").await;
    let bystander = service.open("sh").await;
    start(&service, &victim, json!({"command": "sleep 1000"})).await;

    // The shell's parent is the agent, which runs as the same user.
    let (status, _) = service
        .exec(&victim, json!({"command": "kill -9 $PPID; sleep 5"}))
        .await;
    assert_eq!(status, 502, "the exec loses its agent");

    let asked = Instant::now();
    let response = service
        .get(&format!("/v1/sessions/{victim}/processes"))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    println!("answered {status} after {:?}: {body}", asked.elapsed());
    assert!(asked.elapsed() < Duration::from_secs(10));
    assert!(
        matches!(
            body["error"]["code"].as_str(),
            Some("agent_unavailable" | "session_ended" | "sandbox_gone")
        ),
        "{status} {body}"
    );

    let health = service
        .client
        .get(service.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(
        service.sh(&bystander, "echo alive").await["stdout"],
        "alive\n"
    );
    start(&service, &bystander, json!({"command": "true"})).await;
}

#[tokio::test]
async fn processes_outlive_a_service_restart() {
    let mut service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let process = start(
        &service,
        &id,
        json!({"command": "echo before; sleep 4; echo after"}),
    )
    .await;
    let pid = process["id"].as_str().unwrap();
    let mut stream = OutputStream::open(&service, &id, pid, "").await;
    let before = stream.next().await.unwrap();
    assert_eq!(before.data["text"], "before\n");
    drop(stream);

    service.crash_and_restart();

    // The agent dials the new service; the process ran on meanwhile.
    let resume_at = before.id.unwrap();
    let mut stream = OutputStream::open(&service, &id, pid, &format!("?since={resume_at}")).await;
    let (rest, exit, _) = stream.read_to_exit().await;
    assert_eq!(
        (rest.as_str(), exit["exit_code"].as_i64()),
        ("after\n", Some(0))
    );
}

#[tokio::test]
async fn a_slow_reader_of_a_flood_is_told_what_it_missed() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let process = start(
        &service,
        &id,
        json!({"command": "head -c 20000000 /dev/zero | tr '\\0' x"}),
    )
    .await;
    let mut stream = OutputStream::open(&service, &id, process["id"].as_str().unwrap(), "").await;
    let mut accounted = 0;
    let mut dropped = 0;
    let exit = loop {
        let event = stream.next().await.unwrap();
        match event.event.as_str() {
            "stdout" => {
                assert_eq!(event.data["offset"], accounted, "no unreported gap");
                accounted += event.data["text"].as_str().unwrap().len() as u64;
                if accounted < 100_000 {
                    // A slow reader: the ring (64k here) moves on meanwhile.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            "dropped" => {
                assert_eq!(event.data["offset"], accounted);
                let bytes = event.data["bytes"].as_u64().unwrap();
                accounted += bytes;
                dropped += bytes;
            }
            "exit" => break event.data,
            other => panic!("{other}: {event:?}"),
        }
    };
    assert_eq!(exit["output_bytes"], 20_000_000);
    assert_eq!(accounted, 20_000_000);
    // How much is dropped depends on how fast the sandbox writes against how fast the stream
    // reads (a pod's port-forward reads slower than Docker's socket): that some was, and that
    // every byte is accounted for, is what holds.
    assert!(dropped > 0, "{dropped}");
}

/// Starts `body` with `POST .../processes/run` and returns its event stream.
async fn run(service: &TestService, id: &str, body: Value) -> OutputStream {
    let response = service
        .post(&format!("/v1/sessions/{id}/processes/run"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    OutputStream {
        response,
        buffer: Vec::new(),
    }
}

#[tokio::test]
async fn run_is_one_operation_with_one_entry_and_the_policy_timeout() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    // The source on stdin, as the dashboard's Source pane gives it.
    let mut stream = run(
        &service,
        &id,
        json!({"argv": ["sh", "-"], "input": "cd /tmp && echo from-input $(pwd)\n"}),
    )
    .await;
    let start = stream.next().await.unwrap();
    assert_eq!(start.event, "start");
    // One timeout rule: naming none gets policy.default_timeout_secs (20 here), not the cap.
    assert_eq!(start.data["timeout_secs"], 20);
    let (text, exit, _) = stream.read_to_exit().await;
    assert_eq!(text, "from-input /tmp\n");
    assert_eq!(exit["exit_code"], 0);

    // Stopped with SIGINT, as Stop and Ctrl+C do: interrupted.
    let mut stream = run(
        &service,
        &id,
        json!({"command": "for i in 1 2 3; do sleep 30; done"}),
    )
    .await;
    let start = stream.next().await.unwrap();
    let process = start.data["id"].as_str().unwrap().to_string();
    let (status, _) = post_json(
        &service,
        &format!("/v1/sessions/{id}/processes/{process}/signal"),
        json!({"signal": "INT"}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, exit, _) = stream.read_to_exit().await;
    assert_eq!(exit["signal"], 2, "{exit}");

    let entries = activity(&service, &id).await;
    // Sorted: the interrupted run's entry is recorded when it exits, which the signal causes,
    // so it may land just before the signal's own entry.
    let mut commands: Vec<(String, String, String)> = entries
        .iter()
        .filter(|e| e["action"].as_str().unwrap().starts_with("process"))
        .map(|e| {
            let field = |name: &str| e[name].as_str().unwrap().to_string();
            (field("action"), field("target"), field("status"))
        })
        .collect();
    commands.sort();
    let entry = |action: &str, target: &str, status: &str| {
        (action.to_string(), target.to_string(), status.to_string())
    };
    assert_eq!(
        commands,
        [
            entry("process_signal", "sleep", "ok"),
            entry("process_start", "sh", "ok"),
            entry("process_start", "sleep", "interrupted"),
        ],
        "one entry per command (no stream or stdin entries), named after `for`"
    );

    // A plain background start follows the same rule.
    let process = start_process_without_timeout(&service, &id).await;
    assert_eq!(process["timeout_secs"], 20);
}

async fn start_process_without_timeout(service: &TestService, id: &str) -> Value {
    start(service, id, json!({"command": "true"})).await
}

#[tokio::test]
async fn events_say_at_once_that_a_session_ended_outside() {
    let service = TestService::start(&base_config(2, ""));
    let response = service.get("/v1/events").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let mut events = OutputStream {
        response,
        buffer: Vec::new(),
    };
    let id = service.open("sh").await;
    let opened = events.next().await.unwrap();
    assert_eq!(
        (
            opened.event.as_str(),
            &opened.data["id"],
            &opened.data["state"]
        ),
        ("session", &json!(id), &json!("running"))
    );
    let removed = Instant::now();
    common::remove_sandbox_outside(&id);
    let ended = events.next().await.unwrap();
    let took = removed.elapsed();
    assert_eq!(ended.data["id"], json!(id));
    assert_eq!(ended.data["state"], "ended");
    assert!(
        ended.data["end_reason"]
            .as_str()
            .unwrap()
            .contains("its sandbox stopped"),
        "{ended:?}"
    );
    assert!(took < Duration::from_secs(5), "noticed after {took:?}");
}
