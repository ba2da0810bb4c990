//! The webhooks over the fake platform, delivering to a real receiver on loopback: every
//! lifecycle event in order, signed, retried after a failure, and each outcome in the
//! session's activity log.

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use sandboxd_api::CreateSession;
use sandboxd_config::Config;
use sandboxd_core::fake::FakeBackend;
use sandboxd_core::{Caller, Core, Interface, Principal};
use sandboxd_store::Store;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

const SECRET: &str = "hook-secret-0123";

/// One request the receiver got: its headers and body.
struct Received {
    headers: http::HeaderMap,
    body: Bytes,
}

/// A receiver on loopback that answers 500 to its first `failures` requests, then 200.
async fn receiver(failures: u32) -> (String, mpsc::UnboundedReceiver<Received>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (sender, received) = mpsc::unbounded_channel();
    let seen = Arc::new(AtomicU32::new(0));
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let (sender, seen) = (sender.clone(), seen.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let (sender, seen) = (sender.clone(), seen.clone());
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body.collect().await.unwrap().to_bytes();
                        let _ = sender.send(Received {
                            headers: parts.headers,
                            body,
                        });
                        let status = if seen.fetch_add(1, Ordering::SeqCst) < failures {
                            500
                        } else {
                            200
                        };
                        Ok::<_, std::convert::Infallible>(
                            http::Response::builder()
                                .status(status)
                                .body(Full::new(Bytes::new()))
                                .unwrap(),
                        )
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, received)
}

fn core(dir: &tempfile::TempDir, hooks: &str) -> Core {
    let text = format!(
        "token = \"test-token-0123456789abcdef\"\ndefault_runtime = \"sh\"\n[runtimes.sh]\nimage = \"test/sh:1\"\n{hooks}"
    );
    // Every test sets the same value: the config reads the secret from the environment.
    std::env::set_var("WEBHOOK_TEST_SECRET", SECRET);
    let config = Config::parse(&text).expect("the test config is valid");
    let store = Store::open(&dir.path().join("sandboxd.db")).unwrap();
    Core::new(
        config,
        "test-token-0123456789abcdef".into(),
        FakeBackend::with_images(&["test/sh:1"]),
        Arc::new(store),
    )
}

fn admin() -> Caller {
    Caller::new(Principal::Admin, Interface::Api)
}

async fn next(received: &mut mpsc::UnboundedReceiver<Received>) -> Received {
    tokio::time::timeout(Duration::from_secs(20), received.recv())
        .await
        .expect("the receiver was told within 20 s")
        .unwrap()
}

fn checked_payload(request: &Received) -> Value {
    let mut hash = Sha256::new();
    hash.update(SECRET.as_bytes());
    hash.update(&request.body);
    let expected = base64::engine::general_purpose::STANDARD_NO_PAD.encode(hash.finalize());
    assert_eq!(request.headers["e2b-signature"], expected.as_str());
    assert_eq!(request.headers["e2b-signature-version"], "v1");
    assert_eq!(request.headers["e2b-webhook-id"], "audit");
    assert_eq!(request.headers["content-type"], "application/json");
    serde_json::from_slice(&request.body).unwrap()
}

#[tokio::test]
async fn every_moment_of_a_session_is_told_in_order_signed_and_logged() {
    let (url, mut received) = receiver(0).await;
    let dir = tempfile::tempdir().unwrap();
    let core = core(
        &dir,
        &format!("[webhooks.audit]\nurl = \"{url}\"\nsecret_env = \"WEBHOOK_TEST_SECRET\"\n"),
    );
    sandboxd_webhooks::start(&core).unwrap();
    let request = CreateSession {
        labels: [("job".to_string(), "42".to_string())].into(),
        ..CreateSession::default()
    };
    let id = core.open_session(&admin(), request).await.unwrap().id;
    core.pause_session(&admin(), &id).await.unwrap();
    core.resume_session(&admin(), &id).await.unwrap();
    core.close_session(&admin(), &id).await.unwrap();

    let mut types = Vec::new();
    for _ in 0..4 {
        let payload = checked_payload(&next(&mut received).await);
        assert_eq!(payload["sandboxId"], id.as_str());
        assert_eq!(payload["eventData"]["sandbox_metadata"]["job"], "42");
        types.push(payload["type"].as_str().unwrap().to_string());
        if payload["type"] == "sandbox.lifecycle.killed" {
            assert_eq!(payload["eventData"]["reason"], "closed by the client");
        }
    }
    assert_eq!(
        types,
        [
            "sandbox.lifecycle.created",
            "sandbox.lifecycle.paused",
            "sandbox.lifecycle.resumed",
            "sandbox.lifecycle.killed"
        ]
    );
    // The last outcome is written after its answer: wait for it.
    let mut logged = Vec::new();
    for _ in 0..200 {
        logged = core
            .activity(&admin(), &id)
            .unwrap()
            .entries
            .into_iter()
            .filter(|entry| entry.action == "webhook")
            .collect();
        if logged.len() == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(logged.len(), 4, "{logged:?}");
    assert!(
        logged.iter().all(|entry| entry.status == "ok"),
        "{logged:?}"
    );
    let mut targets: Vec<String> = logged.iter().map(|entry| entry.target.clone()).collect();
    let mut expected: Vec<String> = types.iter().map(|t| format!("audit {t}")).collect();
    targets.sort();
    expected.sort();
    assert_eq!(targets, expected);
    assert!(logged.iter().all(|entry| entry.interface == "service"));
}

#[tokio::test]
async fn a_failing_receiver_is_tried_again_and_one_that_never_answers_is_logged() {
    let (url, mut received) = receiver(1).await;
    let dir = tempfile::tempdir().unwrap();
    // `audit` fails once and then takes it; `dead` is a port nothing listens on.
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let core = core(
        &dir,
        &format!(
            "[webhooks.audit]\nurl = \"{url}\"\nsecret_env = \"WEBHOOK_TEST_SECRET\"\nevents = [\"created\"]\n\
             [webhooks.dead]\nurl = \"http://{dead}/\"\nsecret_env = \"WEBHOOK_TEST_SECRET\"\nattempts = 2\n"
        ),
    );
    sandboxd_webhooks::start(&core).unwrap();
    let id = core
        .open_session(&admin(), CreateSession::default())
        .await
        .unwrap()
        .id;
    let first = next(&mut received).await;
    let again = next(&mut received).await;
    assert_eq!(first.body, again.body, "a retry sends the same event");
    assert_ne!(
        first.headers["e2b-delivery-id"], again.headers["e2b-delivery-id"],
        "each try is a delivery of its own"
    );
    let mut entries = Vec::new();
    for _ in 0..200 {
        entries = core.activity(&admin(), &id).unwrap().entries;
        if entries.iter().filter(|e| e.action == "webhook").count() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let outcome = |target: &str| {
        entries
            .iter()
            .find(|entry| entry.action == "webhook" && entry.target == target)
            .unwrap_or_else(|| panic!("no {target} in {entries:?}"))
    };
    assert_eq!(outcome("audit sandbox.lifecycle.created").status, "ok");
    let dead = outcome("dead sandbox.lifecycle.created");
    assert_eq!(dead.status, "error");
    let error = dead.error.as_deref().unwrap();
    assert!(error.starts_with("not delivered in 2 tries"), "{error}");
    assert!(
        received.try_recv().is_err(),
        "audit asked only for `created`"
    );
}

#[tokio::test]
async fn a_full_queue_gives_up_its_oldest_event_and_logs_it() {
    // A receiver that takes connections and never answers: each delivery holds for its timeout.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = silent.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut streams = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            streams.push(stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let core = core(
        &dir,
        &format!(
            "[webhooks.slow]\nurl = \"http://{address}/\"\nsecret_env = \"WEBHOOK_TEST_SECRET\"\nevents = [\"created\"]\nqueue = 1\ntimeout_secs = 60\n"
        ),
    );
    sandboxd_webhooks::start(&core).unwrap();
    // One event in flight and one waiting at most: of three, at least one is given up.
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(
            core.open_session(&admin(), CreateSession::default())
                .await
                .unwrap()
                .id,
        );
    }
    // The dispatcher hands events on in a task of its own: wait for it.
    let mut given_up = Vec::new();
    for _ in 0..200 {
        given_up = ids
            .iter()
            .flat_map(|id| core.activity(&admin(), id).unwrap().entries)
            .filter(|entry| entry.action == "webhook")
            .collect();
        if !given_up.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!given_up.is_empty(), "nothing was given up");
    for entry in &given_up {
        assert_eq!(entry.status, "error");
        let error = entry.error.as_deref().unwrap();
        assert!(error.contains("webhooks.slow.queue"), "{error}");
    }
    held.abort();
}
