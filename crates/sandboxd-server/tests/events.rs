//! `GET /v1/events`: sessions opening and ending, as they happen, to each follower only what
//! its token may see.

mod common;

use axum::body::{Body, BodyDataStream};
use axum::http::{header, Request, StatusCode};
use common::*;
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;
use tower::ServiceExt;

/// The `session` events of a follower, as (id, state, end_reason).
struct Follower {
    body: BodyDataStream,
    buffer: String,
}

impl Follower {
    async fn open(service: &TestService, token: &str) -> Follower {
        let request = Request::get("/v1/events")
            .header(header::HOST, "localhost")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap();
        let response = service.router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"));
        Follower {
            body: response.into_body().into_data_stream(),
            buffer: String::new(),
        }
    }

    /// The next `session` event, or `None` when none comes within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<(String, String, Option<String>)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data = block.lines().find_map(|line| line.strip_prefix("data: "));
                if block.contains("event: session") {
                    let change: Value = serde_json::from_str(data.unwrap()).unwrap();
                    let text = |key: &str| change[key].as_str().map(str::to_string);
                    return Some((text("id")?, text("state")?, text("end_reason")));
                }
                continue;
            }
            let chunk = tokio::time::timeout(wait, self.body.next()).await.ok()??;
            self.buffer
                .push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        }
    }
}

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_follower_learns_of_sessions_opening_and_ending_and_why() {
    let service = TestService::start(&config(4, 0, ""));
    let mut follower = Follower::open(&service, TOKEN).await;
    let id = service.open(None).await;
    assert_eq!(
        follower.next(WAIT).await,
        Some((id.clone(), "running".into(), None))
    );
    let (status, _) = service.delete(&format!("/v1/sessions/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        follower.next(WAIT).await,
        Some((id, "ended".into(), Some("closed by the client".into())))
    );
}

#[tokio::test]
async fn a_tenants_follower_sees_only_its_own_sessions() {
    let service = TestService::start(&config(4, 0, &two_tenants()));
    let mut beta = Follower::open(&service, BETA_TOKEN).await;
    let mut admin = Follower::open(&service, TOKEN).await;
    let alphas = service.client(ALPHA_TOKEN).open(None).await;
    let betas = service.client(BETA_TOKEN).open(None).await;
    assert_eq!(admin.next(WAIT).await.unwrap().0, alphas);
    assert_eq!(admin.next(WAIT).await.unwrap().0, betas);
    assert_eq!(
        beta.next(WAIT).await.unwrap().0,
        betas,
        "alpha's is not told"
    );
    assert_eq!(beta.next(Duration::from_millis(300)).await, None);
}

#[tokio::test]
async fn a_follower_learns_of_a_pause_and_a_resume() {
    let service = TestService::start(&config(4, 0, ""));
    let id = service.open(None).await;
    let mut follower = Follower::open(&service, TOKEN).await;
    service
        .post(&format!("/v1/sessions/{id}/pause"), serde_json::json!({}))
        .await;
    assert_eq!(
        follower.next(WAIT).await,
        Some((id.clone(), "paused".into(), None))
    );
    let (status, _) = service.admin().exec(&id, "echo back").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        follower.next(WAIT).await,
        Some((id, "running".into(), None))
    );
}
