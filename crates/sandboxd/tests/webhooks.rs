//! Lifecycle webhooks from the real service over real sandboxes, to a receiver on loopback that
//! speaks TLS with a certificate of its own (trusted through the webhook's `ca_file`): every
//! moment of a session in order, signed as E2B signs them, each outcome in the activity log,
//! and a sandbox found gone after a crash told as killed.

mod common;

use base64::Engine;
use bytes::Bytes;
use common::{base_config, remove_sandbox_outside, TestService};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

const SECRET: &str = "whsec-test-5d1e";

struct Receiver {
    url: String,
    /// Holds the CA and secret files the config names.
    files: tempfile::TempDir,
    payloads: mpsc::UnboundedReceiver<Value>,
}

/// An HTTPS receiver that checks each request's signature and hands on its payload.
async fn receiver() -> Receiver {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("ca.pem"), certified.cert.pem()).unwrap();
    std::fs::write(files.path().join("secret"), format!("{SECRET}\n")).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![certified.cert.der().clone()], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/hook", listener.local_addr().unwrap());
    let (sender, payloads) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (acceptor, sender) = (acceptor.clone(), sender.clone());
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let sender = sender.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body.collect().await.unwrap().to_bytes();
                        let mut hash = Sha256::new();
                        hash.update(SECRET.as_bytes());
                        hash.update(&body);
                        let signed = base64::engine::general_purpose::STANDARD_NO_PAD
                            .encode(hash.finalize());
                        let status = if parts.headers["e2b-signature"] == signed.as_str() {
                            let _ = sender.send(serde_json::from_slice::<Value>(&body).unwrap());
                            200
                        } else {
                            401
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
    Receiver {
        url,
        files,
        payloads,
    }
}

impl Receiver {
    fn config(&self) -> String {
        let files = self.files.path().display();
        format!(
            "[webhooks.audit]\nurl = \"{}\"\nsecret_file = \"{files}/secret\"\nca_file = \"{files}/ca.pem\"\n",
            self.url
        )
    }

    async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(30), self.payloads.recv())
            .await
            .expect("the receiver was told within 30 s")
            .unwrap()
    }
}

async fn webhook_entries(service: &TestService, id: &str, wanted: usize) -> Vec<Value> {
    let mut entries = Vec::new();
    for _ in 0..100 {
        let log = service
            .get_json(&format!("/v1/sessions/{id}/activity"))
            .await;
        entries = log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| entry["action"] == "webhook")
            .cloned()
            .collect();
        if entries.len() >= wanted {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    entries
}

#[tokio::test]
async fn a_sessions_life_is_told_in_order_over_tls_and_logged() {
    let mut receiver = receiver().await;
    let service = TestService::start(&base_config(2, &receiver.config()));
    let id = service.open("sh").await;
    // Pods cannot be paused: on the test cluster the life is opened and closed.
    let moments: &[&str] = if common::on_kubernetes() {
        &["created", "killed"]
    } else {
        &["created", "paused", "resumed", "killed"]
    };
    let pauses: &[&str] = if common::on_kubernetes() {
        &[]
    } else {
        &["pause", "resume"]
    };
    for action in pauses {
        let status = service
            .post(&format!("/v1/sessions/{id}/{action}"))
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .status();
        assert!(status.is_success(), "{action}: {status}");
    }
    service
        .delete(&format!("/v1/sessions/{id}"))
        .send()
        .await
        .unwrap();

    let mut types = Vec::new();
    for _ in moments {
        let payload = receiver.next().await;
        assert_eq!(payload["sandboxId"], id.as_str(), "{payload}");
        assert_eq!(payload["sandboxTemplateId"], "sh");
        types.push(payload["type"].as_str().unwrap().to_string());
        if payload["type"] == "sandbox.lifecycle.killed" {
            assert_eq!(payload["eventData"]["reason"], "closed by the client");
            assert_eq!(payload["eventData"]["execution"]["memory_mb"], 128);
        }
    }
    let expected: Vec<String> = moments
        .iter()
        .map(|moment| format!("sandbox.lifecycle.{moment}"))
        .collect();
    assert_eq!(types, expected);
    let entries = webhook_entries(&service, &id, moments.len()).await;
    assert_eq!(entries.len(), moments.len(), "{entries:?}");
    assert!(entries.iter().all(|e| e["status"] == "ok"), "{entries:?}");
}

#[tokio::test]
async fn a_sandbox_found_gone_after_a_crash_is_told_as_killed() {
    let mut receiver = receiver().await;
    let mut service = TestService::start(&base_config(2, &receiver.config()));
    let id = service.open("sh").await;
    assert_eq!(receiver.next().await["type"], "sandbox.lifecycle.created");
    service.crash_and_restart_with(|| remove_sandbox_outside(&id));
    let payload = receiver.next().await;
    assert_eq!(payload["type"], "sandbox.lifecycle.killed", "{payload}");
    assert_eq!(payload["sandboxId"], id.as_str());
    let reason = payload["eventData"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("was gone when the service restarted"),
        "{reason}"
    );
    let entries = webhook_entries(&service, &id, 2).await;
    assert!(
        entries
            .iter()
            .any(|e| e["target"] == "audit sandbox.lifecycle.killed" && e["status"] == "ok"),
        "{entries:?}"
    );
}
