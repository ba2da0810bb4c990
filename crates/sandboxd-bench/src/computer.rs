//! Computer use on a desktop session, through sandboxd's REST API: the first action of a fresh
//! session (which starts its display: cold), a 1024x768 screenshot's round trip (the PNG read
//! whole) and a click. Opt-in (`--computer`): the runtime's recipe, desktop, is built on first
//! use (minutes).

use crate::report::time;
use crate::report::{print_row, Sample};
use crate::sandboxd::{Api, TOKEN};
use anyhow::{bail, Result};
use serde_json::json;

/// The runtime the bench config adds for this row.
pub(crate) const RUNTIME: &str = "desktop";

/// The config lines of that runtime (main adds the recipe builds' `[build]` once).
pub(crate) fn runtime_config() -> String {
    format!("\n[runtimes.{RUNTIME}]\nruntime = \"desktop\"\n")
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
