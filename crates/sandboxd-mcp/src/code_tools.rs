//! run_code in a code context, when the session's runtime has a kernel: state persists
//! between calls, each image the code shows comes back as an image content block (so a model
//! sees the plot), and the results as structured content beside the streams.

use crate::answer::{Answer, Refusal};
use crate::errors::tool_error;
use crate::output::{size, Captured, CommandResult, KernelRunResult, Loss, ShownResult};
use crate::running::cancellable;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use sandboxd_api::{CodeEnd, CodeEvent, RunCode, Sandboxes};

/// MIME types sent as image content blocks rather than in the structured results.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Runs `request` in its context and shapes the answer.
pub async fn run_in_context(
    client: &dyn Sandboxes,
    context: &RequestContext<RoleServer>,
    session_id: &str,
    request: RunCode,
    limit_secs: u64,
) -> Result<Answer, Refusal> {
    let events = cancellable(context, Some(limit_secs), async {
        client
            .run_code(session_id, request)
            .await
            .map_err(tool_error)
    })
    .await?;
    let policy = client.policy().await.map_err(tool_error)?;
    let run = shape(events);
    let streams = size(
        client,
        session_id,
        policy.mcp_output_bytes,
        run.stdout,
        run.stderr,
    )
    .await;
    let result = CommandResult::of_kernel_run(streams, &run.end, run.kernel);
    let images = run.images;
    Ok(Answer::with_text(result.text(), &result).with_images(images))
}

/// What a code run's events say.
struct KernelRun {
    stdout: Captured,
    stderr: Captured,
    end: CodeEnd,
    kernel: KernelRunResult,
    /// The images it showed, as (base64, MIME type).
    images: Vec<(String, String)>,
}

/// The run's streams (as the service capped them), how it ended, the kernel's own account and
/// the images it showed.
fn shape(events: Vec<CodeEvent>) -> KernelRun {
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let mut results = Vec::new();
    let mut images = Vec::new();
    let mut error = None;
    let mut end = None;
    for event in events {
        match event {
            CodeEvent::Stdout { text } => stdout.push_str(&text),
            CodeEvent::Stderr { text } => stderr.push_str(&text),
            CodeEvent::Result(result) => {
                let mut shown = ShownResult {
                    is_main_result: result.is_main_result,
                    ..ShownResult::default()
                };
                for (mime, value) in result.data {
                    match value.as_str() {
                        Some(data) if IMAGE_TYPES.contains(&mime.as_str()) => {
                            images.push((data.trim().to_string(), mime.clone()));
                            shown.images.push(mime);
                        }
                        _ => {
                            shown.data.insert(mime, value);
                        }
                    }
                }
                results.push(shown);
            }
            CodeEvent::Error(e) => error = Some(e),
            CodeEvent::End(e) => end = Some(e),
        }
    }
    let end = end.unwrap_or_default();
    let kernel = KernelRunResult {
        context: end.context.clone(),
        language: end.language.clone(),
        outcome: end.outcome.clone(),
        execution_count: end.execution_count,
        restarted: end.restarted,
        dropped_bytes: end.dropped_bytes,
        results,
        error,
    };
    let (stdout_bytes, stderr_bytes) = (stdout.len() as u64, stderr.len() as u64);
    let loss = if end.truncated {
        Loss::Dropped(end.dropped_bytes)
    } else {
        Loss::None
    };
    KernelRun {
        stdout: Captured::stdout(stdout, stdout_bytes, loss),
        stderr: Captured::stderr(stderr, stderr_bytes, loss),
        end,
        kernel,
        images,
    }
}
