//! The E2B row: `commands.run("true")` through the official E2B Python SDK against this
//! service, beside our own API's exec in a session of the same runtime. The SDK runs a
//! command as `/bin/bash -l -c CMD` (a login shell, which reads the profile), so our API's
//! exec of that very line is measured too: the difference between those two is the SDK's
//! and the face's own cost (Connect streaming over HTTP, a Python client), the difference
//! to `true` the login shell's. Each SDK call is timed inside the Python process
//! (`time.perf_counter` around `commands.run`), after three warm-up calls, in one sandbox.

use crate::report::time;
use crate::report::{print_row, Sample};
use crate::sandboxd::{Api, TOKEN};
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::time::Duration;

/// The runtime the row runs in: an image with bash.
use crate::sandboxd::E2B_RUNTIME as RUNTIME;

const SCRIPT: &str = r#"
import json, sys, time
from e2b import Sandbox
box = Sandbox.create(sys.argv[2])
try:
    for _ in range(3):
        box.commands.run("true")
    samples = []
    for _ in range(int(sys.argv[1])):
        started = time.perf_counter()
        box.commands.run("true")
        samples.append(time.perf_counter() - started)
    print(json.dumps(samples))
finally:
    box.kill()
"#;

pub(crate) async fn run(python: &Path, n: usize, api: &Api) -> Result<()> {
    println!("\nthe E2B SDK (e2b, Python) against sandboxd, runtime with bash");
    let session = api.open(RUNTIME).await?;
    let ours = async {
        let login = "exec /bin/bash -l -c true";
        api.exec(&session, login).await?;
        let (mut plain, mut shell) = (Vec::new(), Vec::new());
        for _ in 0..n {
            time(&mut plain, api.exec(&session, "true")).await?;
            time(&mut shell, api.exec(&session, login)).await?;
        }
        Ok::<_, anyhow::Error>((Sample(plain), Sample(shell)))
    }
    .await;
    api.close(&session).await?;
    let (plain, shell) = ours?;
    print_row("API exec `true`", &plain, None);
    print_row("API exec `bash -l -c true`", &shell, None);

    let output = tokio::process::Command::new(python)
        .args(["-c", SCRIPT, &n.to_string(), RUNTIME])
        .env("E2B_API_URL", &api.url)
        .env("E2B_SANDBOX_URL", &api.url)
        .env("E2B_API_KEY", TOKEN)
        .output()
        .await
        .with_context(|| format!("cannot run {}", python.display()))?;
    if !output.status.success() {
        bail!(
            "the E2B SDK run failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let seconds: Vec<f64> =
        serde_json::from_slice(&output.stdout).context("the E2B SDK run printed no timings")?;
    let sdk = Sample(seconds.into_iter().map(Duration::from_secs_f64).collect());
    // The ratio column: against our API's exec of the same bash line.
    print_row("E2B SDK commands.run(\"true\")", &sdk, Some(&shell));
    Ok(())
}
