//! The hub against well-behaved and hostile dialers: only connections greeted with the
//! sandbox's secret are parked, never more than `MAX_IDLE`, and closing ends everything.

use sandboxd_agent_proto::host::{read_frame, write_frame, write_json};
use sandboxd_agent_proto::{
    AgentHub, AgentSecret, Event, FrameKind, ProtoError, Request, AGENT_SECRET_LEN, HELLO_TIMEOUT,
    MAX_IDLE, PROTOCOL_VERSION,
};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;

struct Setup {
    hub: Arc<AgentHub>,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

fn secret() -> AgentSecret {
    AgentSecret::from_bytes(&[0x5a; AGENT_SECRET_LEN])
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("agent.sock");
    let hub = AgentHub::bind(&socket, secret()).unwrap();
    Setup {
        hub,
        socket,
        _dir: dir,
    }
}

async fn greeted(socket: &PathBuf) -> UnixStream {
    greeted_with(socket, PROTOCOL_VERSION, Some(secret())).await
}

async fn greeted_with(socket: &PathBuf, version: u32, secret: Option<AgentSecret>) -> UnixStream {
    let mut stream = UnixStream::connect(socket).await.unwrap();
    let hello = Event::Hello {
        version,
        pid: std::process::id(),
        secret,
    };
    write_json(&mut stream, &hello).await.unwrap();
    stream
}

/// Whether the hub closed `stream` within `within`.
async fn closed_by_hub(stream: &mut UnixStream, within: Duration) -> bool {
    closed_saying(stream, within).await.is_some()
}

/// Whether the hub closed `stream` within `within`, and if so whether it dismissed it first
/// (a [`Request::Dismiss`] frame, the only thing it may send before closing).
async fn closed_saying(stream: &mut UnixStream, within: Duration) -> Option<bool> {
    let mut sent = Vec::new();
    let mut bounded = (&mut *stream).take(4096);
    let read = tokio::time::timeout(within, bounded.read_to_end(&mut sent)).await;
    if !matches!(read, Ok(Ok(_) | Err(_))) {
        return None;
    }
    if sent.is_empty() {
        return Some(false);
    }
    let frame = read_frame(&mut sent.as_slice())
        .await
        .expect("a whole frame");
    assert_eq!(frame.parse_json::<Request>().unwrap(), Request::Dismiss);
    Some(true)
}

async fn wait_for_idle(hub: &AgentHub, count: usize) {
    let give_up = Instant::now() + Duration::from_secs(5);
    while hub.idle_count() != count {
        assert!(
            Instant::now() < give_up,
            "{} idle, expected {count}",
            hub.idle_count()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn socket_is_left_to_its_owner() {
    let setup = setup();
    let mode = std::fs::metadata(&setup.socket)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(setup.hub.path(), setup.socket);
}

/// Log lines written while a test runs on this thread (the tests' runtime is single-threaded,
/// so the hub's tasks log here too).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn dialers_without_the_secret_are_refused_logged_and_never_get_a_request() {
    let log = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let log = log.clone();
            move || log.clone()
        })
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let setup = setup();
    let wrong = AgentSecret::from_bytes(&[0xa5; AGENT_SECRET_LEN]);
    let mut impostors = vec![
        greeted_with(&setup.socket, PROTOCOL_VERSION, Some(wrong.clone())).await,
        greeted_with(&setup.socket, PROTOCOL_VERSION, None).await,
        // An agent from before secrets existed.
        greeted_with(&setup.socket, 1, None).await,
    ];
    for impostor in &mut impostors {
        assert!(closed_by_hub(impostor, Duration::from_secs(1)).await);
    }
    assert_eq!(setup.hub.idle_count(), 0);
    assert!(matches!(
        setup.hub.wait_ready(Duration::from_millis(100)).await,
        Err(ProtoError::Timeout(_))
    ));

    // The real agent is served, and only it.
    let mut agent = greeted(&setup.socket).await;
    let _late_impostor = greeted_with(&setup.socket, PROTOCOL_VERSION, Some(wrong.clone())).await;
    let mut connection = setup.hub.acquire(Duration::from_secs(1)).await.unwrap();
    write_json(&mut connection, &Request::Ping).await.unwrap();
    assert_eq!(
        read_frame(&mut agent)
            .await
            .unwrap()
            .parse_json::<Request>()
            .unwrap(),
        Request::Ping
    );
    assert_eq!(setup.hub.idle_count(), 0);

    // One line for the first refusal, the rest counted until the next one may be logged;
    // never the secret presented or the real one.
    let text = log.text();
    assert_eq!(
        text.matches("refused a connection to an agent socket")
            .count(),
        1,
        "{text}"
    );
    assert!(text.contains("wrong secret"), "{text}");
    assert!(text.contains(&setup.socket.display().to_string()), "{text}");
    assert!(
        text.contains(&format!("peer_uid=Some({})", own_uid())),
        "{text}"
    );
    for secret in [secret(), wrong] {
        assert!(!text.contains(secret.expose()), "{text}");
    }
}

#[tokio::test]
async fn an_old_agent_without_a_secret_is_told_apart_in_the_log() {
    let log = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let log = log.clone();
            move || log.clone()
        })
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let setup = setup();
    let mut old = greeted_with(&setup.socket, 1, None).await;
    assert!(closed_by_hub(&mut old, Duration::from_secs(1)).await);
    let text = log.text();
    assert!(
        text.contains("carries no secret (protocol version 1"),
        "{text}"
    );
    assert!(text.contains("open a new session"), "{text}");
}

/// This process's uid, as the hub sees a local dialer.
fn own_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

#[tokio::test]
async fn ready_after_the_first_hello() {
    let setup = setup();
    assert!(matches!(
        setup.hub.wait_ready(Duration::from_millis(100)).await,
        Err(ProtoError::Timeout(_))
    ));
    let waiter = {
        let hub = setup.hub.clone();
        tokio::spawn(async move { hub.wait_ready(Duration::from_secs(5)).await })
    };
    let _agent = greeted(&setup.socket).await;
    waiter.await.unwrap().unwrap();
}

#[tokio::test]
async fn acquire_hands_out_a_greeted_connection() {
    let setup = setup();
    assert!(matches!(
        setup.hub.acquire(Duration::from_millis(100)).await,
        Err(ProtoError::Timeout(_))
    ));
    // A waiting acquire is woken by the connection arriving.
    let acquiring = {
        let hub = setup.hub.clone();
        tokio::spawn(async move { hub.acquire(Duration::from_secs(5)).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut agent = greeted(&setup.socket).await;
    let mut connection = acquiring.await.unwrap().unwrap();
    write_json(&mut connection, &Request::Ping).await.unwrap();
    let request = read_frame(&mut agent)
        .await
        .unwrap()
        .parse_json::<Request>()
        .unwrap();
    assert_eq!(request, Request::Ping);
    assert_eq!(setup.hub.idle_count(), 0);
}

#[tokio::test]
async fn acquire_skips_connections_the_agent_closed() {
    let setup = setup();
    let mut alive = greeted(&setup.socket).await;
    wait_for_idle(&setup.hub, 1).await;
    // The newest parked connection is taken first: this one, closed, must be skipped.
    let gone = greeted(&setup.socket).await;
    wait_for_idle(&setup.hub, 2).await;
    drop(gone);
    let mut connection = setup.hub.acquire(Duration::from_secs(1)).await.unwrap();
    write_json(&mut connection, &Request::Ping).await.unwrap();
    assert_eq!(read_frame(&mut alive).await.unwrap().kind, FrameKind::Json);
    assert_eq!(setup.hub.idle_count(), 0);
}

#[tokio::test]
async fn a_connection_given_back_serves_again_unless_the_agent_spoke_out_of_turn() {
    let setup = setup();
    let mut agent = greeted(&setup.socket).await;
    let mut connection = setup.hub.acquire(Duration::from_secs(1)).await.unwrap();
    write_json(&mut connection, &Request::Ping).await.unwrap();
    assert_eq!(read_frame(&mut agent).await.unwrap().kind, FrameKind::Json);
    write_json(&mut agent, &Event::Pong).await.unwrap();
    assert_eq!(
        read_frame(&mut connection).await.unwrap().kind,
        FrameKind::Json
    );
    connection.give_back();
    assert_eq!(setup.hub.idle_count(), 1);

    // The same connection carries the next request.
    let mut again = setup.hub.acquire(Duration::from_secs(1)).await.unwrap();
    write_json(&mut again, &Request::Ping).await.unwrap();
    assert_eq!(read_frame(&mut agent).await.unwrap().kind, FrameKind::Json);
    write_json(&mut agent, &Event::Pong).await.unwrap();
    assert_eq!(read_frame(&mut again).await.unwrap().kind, FrameKind::Json);
    again.give_back();

    // An agent that writes while its connection is parked would answer a request it was
    // never sent: the hub discards that connection instead of handing it out.
    write_json(&mut agent, &Event::Pong).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(matches!(
        setup.hub.acquire(Duration::from_millis(200)).await,
        Err(ProtoError::Timeout(_))
    ));
    assert!(closed_by_hub(&mut agent, Duration::from_secs(1)).await);

    // Given back after the hub closed, a connection is closed rather than parked.
    let mut late_agent = {
        let setup = self::setup();
        let agent = greeted(&setup.socket).await;
        let lease = setup.hub.acquire(Duration::from_secs(1)).await.unwrap();
        setup.hub.close();
        lease.give_back();
        assert_eq!(setup.hub.idle_count(), 0);
        agent
    };
    assert!(closed_by_hub(&mut late_agent, Duration::from_secs(1)).await);
}

#[tokio::test]
async fn idle_connections_are_capped() {
    let setup = setup();
    let mut dialers = Vec::new();
    for _ in 0..MAX_IDLE + 12 {
        dialers.push(greeted(&setup.socket).await);
    }
    wait_for_idle(&setup.hub, MAX_IDLE).await;
    let mut dismissed = 0;
    for dialer in &mut dialers {
        match closed_saying(dialer, Duration::from_millis(200)).await {
            Some(true) => dismissed += 1,
            Some(false) => panic!("closed without a dismissal: the agent would wait"),
            None => {}
        }
    }
    assert_eq!(dismissed, 12);
    assert_eq!(setup.hub.idle_count(), MAX_IDLE);

    // When parked connections die, newcomers take their places.
    dialers.clear();
    let _newcomer = greeted(&setup.socket).await;
    wait_for_idle(&setup.hub, 1).await;
}

#[tokio::test]
async fn dialers_that_do_not_say_hello_are_dropped() {
    let setup = setup();
    let mut silent = UnixStream::connect(&setup.socket).await.unwrap();

    let mut wrong_event = UnixStream::connect(&setup.socket).await.unwrap();
    write_json(&mut wrong_event, &Event::Pong).await.unwrap();
    let mut data_frame = UnixStream::connect(&setup.socket).await.unwrap();
    write_frame(&mut data_frame, FrameKind::Stdout, b"hello")
        .await
        .unwrap();
    let mut garbage = UnixStream::connect(&setup.socket).await.unwrap();
    write_frame(&mut garbage, FrameKind::Json, b"{{{{")
        .await
        .unwrap();
    let mut huge_hello = UnixStream::connect(&setup.socket).await.unwrap();
    let padded = format!(
        r#"{{"type":"hello","version":2,"pid":1,"pad":"{}"}}"#,
        "x".repeat(4096)
    );
    write_frame(&mut huge_hello, FrameKind::Json, padded.as_bytes())
        .await
        .unwrap();
    for stream in [
        &mut wrong_event,
        &mut data_frame,
        &mut garbage,
        &mut huge_hello,
    ] {
        assert!(closed_by_hub(stream, Duration::from_secs(1)).await);
    }

    let started = Instant::now();
    // Dismissed: a real agent whose hello came late on a starved host dials again at once.
    assert_eq!(
        closed_saying(&mut silent, HELLO_TIMEOUT + Duration::from_secs(1)).await,
        Some(true)
    );
    assert!(started.elapsed() > HELLO_TIMEOUT - Duration::from_millis(500));
    assert_eq!(setup.hub.idle_count(), 0);
}

#[tokio::test]
async fn a_flood_of_silent_dialers_is_bounded_and_then_served() {
    let setup = setup();
    let mut silent = Vec::new();
    for _ in 0..20 {
        silent.push(UnixStream::connect(&setup.socket).await.unwrap());
    }
    let _agent = greeted(&setup.socket).await;
    // Handshakes are limited, so the agent waits for the flood to time out, but gets in.
    setup.hub.acquire(3 * HELLO_TIMEOUT).await.unwrap();
    for stream in &mut silent {
        assert!(closed_by_hub(stream, HELLO_TIMEOUT + Duration::from_secs(1)).await);
    }
}

#[tokio::test]
async fn close_ends_waits_and_stops_listening() {
    let setup = setup();
    let waiter = {
        let hub = setup.hub.clone();
        tokio::spawn(async move { hub.acquire(Duration::from_secs(5)).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    setup.hub.close();
    let started = Instant::now();
    assert!(matches!(waiter.await.unwrap(), Err(ProtoError::Closed)));
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(matches!(
        setup.hub.acquire(Duration::from_secs(1)).await,
        Err(ProtoError::Closed)
    ));
    // The accept task ends soon after (aborting is asynchronous), closing the listener.
    let give_up = Instant::now() + Duration::from_secs(2);
    while UnixStream::connect(&setup.socket).await.is_ok() {
        assert!(Instant::now() < give_up, "still accepting after close");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn close_drops_parked_connections() {
    let setup = setup();
    let mut parked = greeted(&setup.socket).await;
    wait_for_idle(&setup.hub, 1).await;
    setup.hub.close();
    // Not dismissed: the service is not there for this sandbox any more.
    assert_eq!(
        closed_saying(&mut parked, Duration::from_secs(1)).await,
        Some(false)
    );
}

#[tokio::test]
async fn a_lease_dropped_instead_of_given_back_is_dismissed() {
    let setup = setup();
    let mut agent = greeted(&setup.socket).await;
    let lease = setup.hub.acquire(Duration::from_secs(1)).await.unwrap();
    drop(lease);
    assert_eq!(
        closed_saying(&mut agent, Duration::from_secs(1)).await,
        Some(true),
        "the agent is told to dial again at once"
    );
}

#[tokio::test]
async fn rebinding_replaces_the_socket_and_the_old_hub_leaves_it_alone() {
    let setup = setup();
    let successor = AgentHub::bind(&setup.socket, secret()).unwrap();
    // As in a service restart: the old hub goes away after the new one listens.
    drop(setup.hub);
    let _agent = greeted(&setup.socket).await;
    successor.wait_ready(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn bind_refuses_to_replace_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.sock");
    std::fs::write(&path, "data").unwrap();
    let error = AgentHub::bind(&path, secret()).expect_err("bind must fail");
    assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "data");
}
