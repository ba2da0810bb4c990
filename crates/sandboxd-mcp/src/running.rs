//! A long tool call: it ends early when the client cancels it (`notifications/cancelled`, which
//! is also what a client sends when its own timeout passes) or when the HTTP request that
//! carried it goes away, and it reports progress while it runs when the client asked for it.
//!
//! Ending early drops the operation, which ends what it started: a command's agent connection
//! closes, so the agent kills its process group, and the activity log records a cancel.

use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use sandboxd_api::OutputWatch;
use std::future::Future;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How often a running command reports progress.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);
/// How much of the newest output a progress report shows: its last lines, bounded.
const PROGRESS_LINES: usize = 3;
const PROGRESS_CHARS: usize = 400;

/// Cancelled when the HTTP request that carried a call is gone: the service puts it in the
/// request's extensions, and cancels it when the answer's body is dropped unfinished (the
/// client disconnected).
#[derive(Debug, Clone, Default)]
pub struct RequestGone(pub CancellationToken);

impl RequestGone {
    /// A token for a new request, cancelled when the returned guard is dropped.
    pub fn new() -> (RequestGone, tokio_util::sync::DropGuard) {
        let token = CancellationToken::new();
        (RequestGone(token.clone()), token.drop_guard())
    }
}

/// Runs `operation` to its end, or until the call is cancelled or its request is gone (then
/// the answer is a tool error saying so, which no client will read). With a progress token,
/// the client gets a notification each second: the time it has run of `limit_secs`, and the
/// last lines of its output so far when `output` sees them.
pub async fn cancellable<T>(
    context: &RequestContext<RoleServer>,
    limit_secs: Option<u64>,
    operation: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    watched(context, limit_secs, None, operation).await
}

/// [`cancellable`], its progress reports showing the newest output `output` holds.
pub async fn watched<T>(
    context: &RequestContext<RoleServer>,
    limit_secs: Option<u64>,
    output: Option<&OutputWatch>,
    operation: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    let gone = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<RequestGone>())
        .map(|gone| gone.0.clone())
        .unwrap_or_default();
    let progress = report_progress(context, limit_secs, output);
    tokio::select! {
        result = operation => result,
        () = context.ct.cancelled() => Err("cancelled: the client cancelled the call".into()),
        () = gone.cancelled() => Err("cancelled: the client went away".into()),
        () = progress => unreachable!("progress reports until the call ends"),
    }
}

/// Sends a progress notification every second while the call runs, when the client sent a
/// progress token (its message: the time, and the newest output `output` holds); otherwise
/// waits for ever.
async fn report_progress(
    context: &RequestContext<RoleServer>,
    limit_secs: Option<u64>,
    output: Option<&OutputWatch>,
) {
    let Some(token) = context.meta.get_progress_token() else {
        return std::future::pending().await;
    };
    let started = Instant::now();
    let mut ticks = tokio::time::interval_at(
        tokio::time::Instant::now() + PROGRESS_INTERVAL,
        PROGRESS_INTERVAL,
    );
    loop {
        ticks.tick().await;
        let elapsed = started.elapsed().as_secs();
        let mut message = format!("running for {elapsed} s");
        let mut param = ProgressNotificationParam::new(token.clone(), elapsed as f64);
        if let Some(limit) = limit_secs {
            message.push_str(&format!(" of at most {limit} s"));
            param = param.with_total(limit as f64);
        }
        let newest = output.map_or_else(String::new, |o| {
            o.last_lines(PROGRESS_LINES, PROGRESS_CHARS)
        });
        if !newest.is_empty() {
            message.push_str(&format!("; output so far ends with:\n{newest}"));
        }
        // A client that stopped listening is no reason to stop the command.
        let _ = context
            .peer
            .notify_progress(param.with_message(message))
            .await;
    }
}
