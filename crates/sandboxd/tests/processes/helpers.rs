//! What the tests of this suite share: starting processes, reading their output streams
//! and the session's activity log.

use crate::common::TestService;
use serde_json::Value;
use std::time::Duration;

/// The longest wait for any one event of a stream.
pub(crate) const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) async fn start(service: &TestService, id: &str, body: Value) -> Value {
    let (status, process) = try_start(service, id, body).await;
    assert_eq!(status, 201, "start failed: {process}");
    process
}

pub(crate) async fn try_start(service: &TestService, id: &str, body: Value) -> (u16, Value) {
    let response = service
        .post(&format!("/v1/sessions/{id}/processes"))
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// One Server-Sent Event.
#[derive(Debug)]
pub(crate) struct Sse {
    pub(crate) event: String,
    pub(crate) id: Option<String>,
    pub(crate) data: Value,
}

/// A process's output stream, parsed as it arrives.
pub(crate) struct OutputStream {
    pub(crate) response: reqwest::Response,
    pub(crate) buffer: Vec<u8>,
}

impl OutputStream {
    pub(crate) async fn open(
        service: &TestService,
        session: &str,
        process: &str,
        query: &str,
    ) -> Self {
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
    pub(crate) async fn next(&mut self) -> Option<Sse> {
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
    pub(crate) async fn read_to_exit(&mut self) -> (String, Value, Option<String>) {
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

pub(crate) async fn activity(service: &TestService, id: &str) -> Vec<Value> {
    let log = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    log["entries"].as_array().unwrap().clone()
}
