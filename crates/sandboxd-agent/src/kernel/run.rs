//! One run: the execute request, then the kernel's iopub messages for it forwarded as events
//! until the kernel is idle again and has replied, and a fence (below) has passed. The timeout
//! interrupts the kernel, and so
//! does the service hanging up (its client went away: the next run must not wait behind this
//! one); if the interrupt does not end the run in a grace period, or the kernel dies, it is
//! replaced.

use super::capped::MAX_KERNEL_MESSAGE;
use super::launch::{self, Kernel, EXIT_POLL};
use super::Slot;
use jupyter_protocol::{
    ExecuteRequest, ExecutionState, JupyterMessage, JupyterMessageContent, KernelInfoRequest,
    ReplyStatus,
};
use sandboxd_agent_proto::kernel::{
    KernelError, KernelOutcome, KernelResult, KernelRunEnd, KernelRunRequest, MAX_KERNEL_RESULT_LEN,
};
use sandboxd_agent_proto::{ErrorCode, Event, KernelEvent};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::Sender;

/// How long an interrupted run has to end before its kernel is replaced.
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);
/// After the kernel went idle, how long its execute reply may lag.
const REPLY_GRACE: Duration = Duration::from_secs(2);
/// How long the fence may take before the run ends without it.
const FENCE_GRACE: Duration = Duration::from_secs(2);

pub async fn execute(
    slot: Slot,
    request: KernelRunRequest,
    events: Sender<Event>,
    service: Option<UnixStream>,
) {
    let started_at = Instant::now();
    let mut kernel = slot.lock().await;
    if kernel.as_mut().is_some_and(|k| k.exit_status().is_some()) {
        *kernel = None;
    }
    let mut started = false;
    if kernel.is_none() {
        match launch::start(&request).await {
            Ok(fresh) => {
                *kernel = Some(fresh);
                started = true;
            }
            Err(message) => {
                let _ = events
                    .send(super::error(ErrorCode::KernelUnavailable, message))
                    .await;
                return;
            }
        }
    }
    let running = kernel.as_mut().expect("a kernel was just ensured");
    let mut output = Output {
        events,
        service,
        budget: request.output_limit,
        dropped: 0,
    };
    let mut end = drive(running, &request, &mut output).await;
    end.started = started;
    if end.outcome == KernelOutcome::KernelDied || end.restarted {
        // Its state is gone either way: a fresh kernel takes the context's next run at once.
        *kernel = None;
        end.restarted = match launch::start(&request).await {
            Ok(fresh) => {
                *kernel = Some(fresh);
                true
            }
            Err(_) => false,
        };
    }
    end.dropped_bytes = output.dropped;
    end.duration_ms = started_at
        .elapsed()
        .as_millis()
        .try_into()
        .unwrap_or(u64::MAX);
    let _ = output
        .events
        .send(Event::Kernel(KernelEvent::KernelEnd(end)))
        .await;
}

/// Runs the code on `kernel`. `restarted` in the answer asks the caller to replace it.
async fn drive(
    kernel: &mut Kernel,
    request: &KernelRunRequest,
    output: &mut Output,
) -> KernelRunEnd {
    let mut end = KernelRunEnd::default();
    let execute: JupyterMessage = ExecuteRequest {
        code: request.code.clone(),
        silent: false,
        store_history: true,
        user_expressions: None,
        allow_stdin: false,
        stop_on_error: true,
    }
    .into();
    let id = execute.header.msg_id.clone();
    if kernel.shell.send(execute).await.is_err() {
        end.outcome = KernelOutcome::KernelDied;
        return end;
    }
    let timeout = tokio::time::sleep(Duration::from_millis(request.timeout_ms));
    tokio::pin!(timeout);
    let mut interrupted = false;
    let mut idle_at: Option<Instant> = None;
    let mut replied = false;
    // Some kernels (Deno's) publish what the code printed from a task of their own, which may
    // send it after the idle status: a request that follows on the shell channel is a fence,
    // as such a kernel runs that task before it reads the next request, and iopub keeps order.
    // Kernels known to publish it before their idle status end without one (a round trip).
    let mut fence: Option<(String, Instant)> = None;
    let mut exit_check = tokio::time::interval(EXIT_POLL);
    loop {
        if idle_at.is_some_and(|at| at.elapsed() > REPLY_GRACE)
            || fence
                .as_ref()
                .is_some_and(|(_, at)| at.elapsed() > FENCE_GRACE)
        {
            return end;
        }
        if replied && idle_at.is_some() && fence.is_none() {
            if kernel.output_before_idle {
                return end;
            }
            let request: JupyterMessage = KernelInfoRequest {}.into();
            let fence_id = request.header.msg_id.clone();
            if kernel.shell.send(request).await.is_err() {
                return end;
            }
            fence = Some((fence_id, Instant::now()));
        }
        tokio::select! {
            message = kernel.iopub.read() => {
                let Ok(message) = message else { continue };
                if let Some((fence_id, _)) = &fence {
                    if is_reply_to(&message, fence_id) && is_idle(&message) {
                        return end;
                    }
                }
                if !is_reply_to(&message, &id) {
                    continue;
                }
                match message.content {
                    JupyterMessageContent::StreamContent(stream) => {
                        let name = serde_json::to_value(&stream.name).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_else(|| "stdout".into());
                        output.stream(name, stream.text).await;
                    }
                    JupyterMessageContent::DisplayData(display) => {
                        output.result(bundle(&display.data), display.metadata, false).await;
                    }
                    JupyterMessageContent::ExecuteResult(result) => {
                        end.execution_count = Some(u32::try_from(result.execution_count.value()).unwrap_or(u32::MAX));
                        output.result(bundle(&result.data), result.metadata, true).await;
                    }
                    JupyterMessageContent::ErrorOutput(error) => {
                        if !interrupted {
                            end.outcome = KernelOutcome::Error;
                        }
                        output.error(KernelError { name: error.ename, value: error.evalue, traceback: error.traceback }).await;
                    }
                    JupyterMessageContent::Status(status) if status.execution_state == ExecutionState::Idle => {
                        idle_at = Some(Instant::now());
                    }
                    _ => {}
                }
            }
            reply = kernel.shell.read() => {
                let Ok(reply) = reply else { continue };
                if !is_reply_to(&reply, &id) {
                    continue;
                }
                if let JupyterMessageContent::ExecuteReply(reply) = reply.content {
                    replied = true;
                    end.execution_count = Some(u32::try_from(reply.execution_count.value()).unwrap_or(u32::MAX));
                    if reply.status != ReplyStatus::Ok && !interrupted {
                        end.outcome = KernelOutcome::Error;
                    }
                }
            }
            () = kernel.too_large.notified() => {
                // Its connection is cut: the kernel is replaced, and the run says why.
                end.outcome = KernelOutcome::Error;
                end.restarted = true;
                output.error(KernelError {
                    name: "OutputTooLarge".into(),
                    value: format!("the kernel sent a message over {} bytes (its output was too large), so it was stopped; the context's state is gone", MAX_KERNEL_MESSAGE),
                    traceback: Vec::new(),
                }).await;
                return end;
            }
            _ = exit_check.tick() => {
                if let Some(status) = kernel.exit_status() {
                    end.outcome = KernelOutcome::KernelDied;
                    end.exit_code = status.code();
                    end.signal = status.signal();
                    return end;
                }
                if output.nobody_listens() && !interrupted {
                    // Nobody listens any more: stop the code as a timeout would.
                    interrupted = true;
                    kernel.interrupt();
                    timeout.as_mut().reset(tokio::time::Instant::now() + INTERRUPT_GRACE);
                }
            }
            _ = &mut timeout => {
                if interrupted {
                    // The interrupt did not end it: the kernel is replaced.
                    end.restarted = true;
                    return end;
                }
                interrupted = true;
                end.outcome = KernelOutcome::TimedOut;
                kernel.interrupt();
                timeout.as_mut().reset(tokio::time::Instant::now() + INTERRUPT_GRACE);
            }
        }
    }
}

fn is_idle(message: &JupyterMessage) -> bool {
    matches!(&message.content, JupyterMessageContent::Status(status) if status.execution_state == ExecutionState::Idle)
}

fn is_reply_to(message: &JupyterMessage, id: &str) -> bool {
    message
        .parent_header
        .as_ref()
        .is_some_and(|parent| parent.msg_id == id)
}

/// A MIME bundle as JSON: type -> content (binary types stay base64, as the kernel sent them).
fn bundle(
    media: &jupyter_protocol::Media,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    match serde_json::to_value(media) {
        Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
        _ => Default::default(),
    }
}

/// What a run forwards, within its output limit.
struct Output {
    events: Sender<Event>,
    /// The service's connection, watched for its hanging up.
    service: Option<UnixStream>,
    budget: u64,
    dropped: u64,
}

impl Output {
    /// Whether the events go nowhere: a write failed, or the service closed its connection.
    fn nobody_listens(&self) -> bool {
        if self.events.is_closed() {
            return true;
        }
        let Some(service) = &self.service else {
            return false;
        };
        let mut watched = [libc::pollfd {
            fd: service.as_raw_fd(),
            events: libc::POLLRDHUP,
            revents: 0,
        }];
        let hung_up = libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR;
        crate::sys::poll(&mut watched, 0).is_ok() && watched[0].revents & hung_up != 0
    }

    async fn stream(&mut self, name: String, mut text: String) {
        let room = usize::try_from(self.budget).unwrap_or(usize::MAX);
        if text.len() > room {
            let mut cut = room;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            self.dropped += (text.len() - cut) as u64;
            text.truncate(cut);
        }
        if text.is_empty() {
            return;
        }
        self.budget -= text.len() as u64;
        self.send(Event::Kernel(KernelEvent::KernelStream { name, text }))
            .await;
    }

    async fn result(
        &mut self,
        data: std::collections::BTreeMap<String, serde_json::Value>,
        metadata: serde_json::Map<String, serde_json::Value>,
        is_main_result: bool,
    ) {
        let item = sandboxd_agent_proto::kernel::bundle_size(&data);
        if item > self.budget || item > MAX_KERNEL_RESULT_LEN as u64 {
            self.dropped += item;
            return;
        }
        self.budget -= item;
        let result = KernelResult {
            data,
            metadata,
            is_main_result,
        };
        self.send(Event::Kernel(KernelEvent::KernelResult(result)))
            .await;
    }

    async fn error(&mut self, mut error: KernelError) {
        // An error always arrives (it says how the run went), its traceback within the limit.
        let mut size = (error.name.len() + error.value.len()) as u64;
        let mut kept = Vec::new();
        for line in error.traceback.drain(..) {
            size += line.len() as u64;
            if size > self.budget.max(MAX_TRACEBACK) {
                self.dropped += line.len() as u64;
            } else {
                kept.push(line);
            }
        }
        error.traceback = kept;
        self.budget = self.budget.saturating_sub(size);
        self.send(Event::Kernel(KernelEvent::KernelError(error)))
            .await;
    }

    async fn send(&mut self, event: Event) {
        let _ = self.events.send(event).await;
    }
}

/// The traceback an error keeps even when the output limit is spent.
const MAX_TRACEBACK: u64 = 16 * 1024;
