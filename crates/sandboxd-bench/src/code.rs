//! Code contexts: a trivial run in a warm context (its kernel started by a first run), the
//! whole streamed answer read, through sandboxd. Opt-in (`--code-contexts`): the runtime's
//! recipe, python-interpreter, is built on first use.

use crate::report::time;
use crate::report::{print_row, Sample};
use crate::sandboxd::{Api, TOKEN};
use anyhow::{bail, Result};
use serde_json::json;

/// The runtime the bench config adds for this row.
pub(crate) const RUNTIME: &str = "interpreter";

/// The config lines of that runtime (main adds the recipe builds' `[build]` once).
pub(crate) fn runtime_config() -> String {
    format!("\n[runtimes.{RUNTIME}]\nruntime = \"python-interpreter\"\n")
}

pub(crate) async fn run(n: usize, api: &Api) -> Result<()> {
    let session = api.open(RUNTIME).await?;
    let measured = async {
        // The first run starts the kernel.
        run_code(api, &session).await?;
        let mut runs = Vec::new();
        for _ in 0..n {
            time(&mut runs, run_code(api, &session)).await?;
        }
        print_row("code run, warm context (1 + 1)", &Sample(runs), None);
        Ok(())
    }
    .await;
    api.close(&session).await?;
    measured
}

async fn run_code(api: &Api, session: &str) -> Result<()> {
    let response = api
        .http
        .post(format!("{}/v1/sessions/{session}/code", api.url))
        .bearer_auth(TOKEN)
        .json(&json!({"code": "1 + 1"}))
        .send()
        .await?;
    let status = response.status();
    let body = response.text().await?;
    if !status.is_success() || !body.contains("\"outcome\":\"ok\"") {
        bail!("code run: {status} {body}");
    }
    Ok(())
}
