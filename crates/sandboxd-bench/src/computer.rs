//! Computer use on a desktop session, through sandboxd's REST API: the first action of a fresh
//! session (which starts its display: cold), the same from a warm pool (whose sandboxes' desktops
//! are started before they are taken), a 1024x768 screenshot's round trip (the PNG read whole)
//! and a click. Opt-in (`--computer`): the runtime's recipe, desktop, is built on first use
//! (minutes).

use crate::report::time;
use crate::report::{print_row, Sample};
use crate::sandboxd::{Api, TOKEN};
use anyhow::{bail, Result};
use serde_json::json;
use std::time::{Duration, Instant};

/// The runtimes the bench config adds for these rows: cold, and with a warm pool of one.
pub(crate) const RUNTIME: &str = "desktop";
const POOLED: &str = "desktop-pooled";
/// The service's other pooled sandboxes (the `warm` runtime's).
const OTHERS_POOLED: u64 = 5;
/// Sessions taken from the pool, each after it filled again.
const FROM_POOL: usize = 3;

/// The config lines of those runtimes (main adds the recipe builds' `[build]` once).
pub(crate) fn runtime_config() -> String {
    format!(
        "\n[runtimes.{RUNTIME}]\nruntime = \"desktop\"\n\n[runtimes.{POOLED}]\nruntime = \"desktop\"\npool_size = 1\n"
    )
}

pub(crate) async fn run(n: usize, api: &Api) -> Result<()> {
    let mut ready = Vec::new();
    let mut shots = Vec::new();
    let mut clicks = Vec::new();
    // A few sessions for the cold start; the warm figures from the last one.
    for round in 0..3 {
        let session = time(&mut ready, async {
            let session = api.open(RUNTIME).await?;
            act(api, &session, json!({"action": "screen_size"})).await?;
            Ok::<String, anyhow::Error>(session)
        })
        .await?;
        let measured = async {
            if round < 2 {
                return Ok::<(), anyhow::Error>(());
            }
            for i in 0..n {
                time(&mut shots, screenshot(api, &session)).await?;
                let click = json!({"action": "click", "x": 200 + i % 50, "y": 700});
                time(&mut clicks, act(api, &session, click)).await?;
            }
            Ok(())
        }
        .await;
        api.close(&session).await?;
        measured?;
    }
    print_row(
        "desktop ready (open + display started, cold)",
        &Sample(ready),
        None,
    );
    let mut warm = Vec::new();
    for _ in 0..FROM_POOL {
        let deadline = Instant::now() + Duration::from_secs(120);
        while api.pooled().await? < OTHERS_POOLED + 1 {
            if Instant::now() > deadline {
                bail!("the desktop's warm pool did not fill within 120 s");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let session = time(&mut warm, async {
            let session = api.open(POOLED).await?;
            act(api, &session, json!({"action": "screen_size"})).await?;
            Ok::<String, anyhow::Error>(session)
        })
        .await?;
        api.close(&session).await?;
    }
    print_row(
        "desktop ready from a warm pool (open + screen answering)",
        &Sample(warm),
        None,
    );
    print_row("screenshot 1024x768 PNG (REST)", &Sample(shots), None);
    print_row("click (REST)", &Sample(clicks), None);
    Ok(())
}

async fn act(api: &Api, session: &str, body: serde_json::Value) -> Result<()> {
    api.call(
        reqwest::Method::POST,
        &format!("/v1/sessions/{session}/computer"),
        Some(body),
    )
    .await
    .map(drop)
}

async fn screenshot(api: &Api, session: &str) -> Result<()> {
    let response = api
        .http
        .get(format!(
            "{}/v1/sessions/{session}/computer/screenshot",
            api.url
        ))
        .bearer_auth(TOKEN)
        .send()
        .await?;
    let status = response.status();
    let body = response.bytes().await?;
    if !status.is_success() || !body.starts_with(b"\x89PNG") {
        bail!("screenshot: {status} ({} bytes)", body.len());
    }
    Ok(())
}
