//! The service side against a hostile "agent": whatever it sends, the calls end with an error
//! or a bounded result, within their deadline and without holding on to what was sent.

use sandboxd_agent_proto::host::{read_frame, write_frame, write_json};
use sandboxd_agent_proto::{
    ping, run_exec, AgentHub, AgentSecret, Event, ExecRequest, ExitReport, FrameKind, ProtoError,
    Request, AGENT_SECRET_LEN, PROTOCOL_VERSION,
};
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

const DEADLINE: Duration = Duration::from_secs(2);

/// Runs `behaviour` as the agent end of a socket pair; returns the service end.
fn fake_agent<F, Fut>(behaviour: F) -> UnixStream
where
    F: FnOnce(UnixStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (service_end, agent_end) = UnixStream::pair().unwrap();
    tokio::spawn(behaviour(agent_end));
    service_end
}

/// A fake agent that reads the request, then sends `reply` as raw bytes and waits.
fn replying_with(reply: Vec<u8>) -> UnixStream {
    fake_agent(move |mut agent| async move {
        let _ = read_frame(&mut agent).await;
        let _ = agent.write_all(&reply).await;
        // Keep the connection open: the service must not wait for a close.
        tokio::time::sleep(Duration::from_secs(60)).await;
    })
}

fn echo_request() -> ExecRequest {
    ExecRequest {
        argv: vec!["echo".into(), "hi".into()],
        timeout_ms: 1000,
        output_limit: 64 * 1024,
        ..ExecRequest::default()
    }
}

async fn exec(stream: UnixStream) -> Result<sandboxd_agent_proto::ExecResult, ProtoError> {
    let started = Instant::now();
    let result = run_exec(stream, &echo_request(), None, DEADLINE).await;
    assert!(started.elapsed() < DEADLINE + Duration::from_millis(500));
    result
}

/// Peak resident memory of this test process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[tokio::test]
async fn oversized_frame_is_refused() {
    let header = [&[2u8][..], &(64u32 << 20).to_be_bytes()].concat();
    let result = exec(replying_with(header)).await;
    assert!(matches!(result, Err(ProtoError::FrameTooLarge { len }) if len == 64 << 20));
}

#[tokio::test]
async fn garbage_json_is_refused() {
    let mut frame = Vec::new();
    write_frame(
        &mut frame,
        FrameKind::Json,
        b"{\"type\": \"exited\", garbage",
    )
    .await
    .unwrap();
    assert!(matches!(
        exec(replying_with(frame)).await,
        Err(ProtoError::BadJson(_))
    ));

    let mut not_utf8 = Vec::new();
    write_frame(&mut not_utf8, FrameKind::Json, &[0xff, 0xfe, b'{'])
        .await
        .unwrap();
    assert!(matches!(
        exec(replying_with(not_utf8)).await,
        Err(ProtoError::BadJson(_))
    ));
}

#[tokio::test]
async fn unknown_frame_kind_is_refused() {
    assert!(matches!(
        exec(replying_with(vec![77, 0, 0, 0, 1, 0])).await,
        Err(ProtoError::UnknownKind(77))
    ));
}

#[tokio::test]
async fn out_of_place_messages_are_refused() {
    let mut stdin_frame = Vec::new();
    write_frame(&mut stdin_frame, FrameKind::Stdin, b"x")
        .await
        .unwrap();
    assert!(matches!(
        exec(replying_with(stdin_frame)).await,
        Err(ProtoError::Unexpected(_))
    ));

    let mut hello = Vec::new();
    let hello_event = Event::Hello {
        version: PROTOCOL_VERSION,
        pid: 1,
        secret: None,
    };
    write_json(&mut hello, &hello_event).await.unwrap();
    assert!(matches!(
        exec(replying_with(hello)).await,
        Err(ProtoError::Unexpected(_))
    ));
}

#[tokio::test]
async fn agent_errors_carry_code_and_message() {
    let mut error = Vec::new();
    let event = Event::Error {
        code: "spawn_failed".into(),
        message: "nope".into(),
    };
    write_json(&mut error, &event).await.unwrap();
    match exec(replying_with(error)).await {
        Err(ProtoError::Agent { code, message }) => {
            assert_eq!((code.as_str(), message.as_str()), ("spawn_failed", "nope"))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn silent_or_vanishing_agents_end_the_call() {
    assert!(matches!(
        exec(replying_with(Vec::new())).await,
        Err(ProtoError::Timeout(DEADLINE))
    ));

    let vanishing = fake_agent(|mut agent| async move {
        let _ = read_frame(&mut agent).await;
        let mut started = Vec::new();
        write_json(&mut started, &Event::Started { pid: 1 })
            .await
            .unwrap();
        let _ = agent.write_all(&started[..started.len() - 2]).await;
    });
    assert!(matches!(exec(vanishing).await, Err(ProtoError::Io(_))));

    let closing = fake_agent(|mut agent| async move {
        let _ = read_frame(&mut agent).await;
    });
    assert!(matches!(exec(closing).await, Err(ProtoError::Closed)));
}

/// Sends 1 MiB stdout frames until `total` bytes (or the service hangs up), then `Exited`
/// with a made-up report.
fn flooding(total: u64) -> UnixStream {
    fake_agent(move |mut agent| async move {
        let _ = read_frame(&mut agent).await;
        let chunk = vec![b'x'; 1 << 20];
        let mut sent = 0;
        while sent < total {
            if write_frame(&mut agent, FrameKind::Stdout, &chunk)
                .await
                .is_err()
            {
                return;
            }
            sent += chunk.len() as u64;
        }
        let lie = ExitReport {
            exit_code: Some(0),
            stdout_bytes: 5,
            ..ExitReport::default()
        };
        let _ = write_json(&mut agent, &Event::Exited(lie)).await;
        tokio::time::sleep(Duration::from_secs(60)).await;
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_floods_are_kept_to_the_limit() {
    const FLOOD: u64 = 512 << 20;
    let result = run_exec(
        flooding(FLOOD),
        &echo_request(),
        None,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    assert_eq!(result.stdout.len(), 64 * 1024);
    // The agent claimed 5 bytes but sent far more: still truncated.
    assert!(result.stdout_truncated);

    // An endless flood ends at the deadline.
    let endless = run_exec(flooding(u64::MAX), &echo_request(), None, DEADLINE).await;
    assert!(matches!(endless, Err(ProtoError::Timeout(_))));

    // Holding on to the flood would have taken more than 512 MiB.
    assert!(peak_rss() < 128 << 20, "peak RSS {} MiB", peak_rss() >> 20);
}

#[tokio::test]
async fn ping_against_hostile_agents() {
    let mut silent = replying_with(Vec::new());
    assert!(matches!(
        ping(&mut silent, Duration::from_millis(200)).await,
        Err(ProtoError::Timeout(_))
    ));
    let mut garbage = replying_with(vec![1, 0, 0, 0, 2, b'{', b'{']);
    assert!(matches!(
        ping(&mut garbage, DEADLINE).await,
        Err(ProtoError::BadJson(_))
    ));
    let mut pong = Vec::new();
    write_json(&mut pong, &Event::Pong).await.unwrap();
    ping(&mut replying_with(pong), DEADLINE).await.unwrap();
}

/// The same through the hub: a fake agent dials in, says hello, then misbehaves.
#[tokio::test]
async fn fake_agent_through_the_hub() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("agent.sock");
    let secret = AgentSecret::from_bytes(&[1; AGENT_SECRET_LEN]);
    let hub = AgentHub::bind(&socket, secret.clone()).unwrap();
    let mut agent = UnixStream::connect(&socket).await.unwrap();
    let hello = Event::Hello {
        version: PROTOCOL_VERSION,
        pid: 1,
        secret: Some(secret),
    };
    write_json(&mut agent, &hello).await.unwrap();
    let connection = hub.acquire(DEADLINE).await.unwrap();
    let fake = tokio::spawn(async move {
        let request = read_frame(&mut agent)
            .await
            .unwrap()
            .parse_json::<Request>()
            .unwrap();
        assert!(matches!(request, Request::Exec(_)));
        agent.write_all(&[2, 0xff, 0xff, 0xff, 0xff]).await.unwrap();
        agent
    });
    let result = run_exec(connection, &echo_request(), None, DEADLINE).await;
    assert!(matches!(result, Err(ProtoError::FrameTooLarge { .. })));
    fake.await.unwrap();
}
