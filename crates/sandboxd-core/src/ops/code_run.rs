//! Running code in a context: the run streams what the kernel produces as [`CodeEvent`]s and
//! ends with [`CodeEvent::End`]. One activity entry per run (language, context, outcome,
//! duration), never the code.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::ops::contexts::target;
use crate::state::activity::{Caller, PendingEntry};
use sandboxd_agent_proto::host::{start_kernel_run, KernelItem, KernelRun};
use sandboxd_agent_proto::kernel::{KernelOutcome, KernelRunRequest, MAX_KERNEL_CODE_LEN};
use sandboxd_api::{CodeEnd, CodeError, CodeEvent, CodeResult, ContextInfo, RunCode};
use sandboxd_backend::AgentStream;
use std::time::Duration;

/// Time the agent gets beyond the run's timeout to interrupt, restart and report; a kernel's
/// start (the first run of a context) fits in it too.
const AGENT_GRACE: Duration = Duration::from_secs(90);

/// A run in progress: [`CodeRun::next`] until it returns `None`.
pub struct CodeRun {
    pub context: ContextInfo,
    run: KernelRun<AgentStream>,
    deadline: tokio::time::Instant,
    entry: PendingEntry,
    core: Core,
    session_id: String,
}

impl Core {
    /// Starts running `request.code` in the context it names (`context_id` wins), or in the
    /// language's default context.
    pub async fn run_code(
        &self,
        caller: &Caller,
        session_id: &str,
        context_id: Option<&str>,
        request: RunCode,
    ) -> Result<CodeRun, Error> {
        let session = self.running_session(caller, session_id, "run_code")?;
        self.learn_contexts(&session).await;
        let policy = &self.config().policy;
        let context = match context_id.or(request.context.as_deref()) {
            Some(id) => self.context(&session, id)?,
            None => {
                let (language, _) = self.kernel_language(&session, request.language.as_deref())?;
                self.default_context(&session, &language, request.cwd.as_deref())?
            }
        };
        let (_, kernel) = self.kernel_language(&session, Some(&context.language))?;
        if request.code.len() > MAX_KERNEL_CODE_LEN {
            return Err(Error::PayloadTooLarge(format!(
                "code is limited to {MAX_KERNEL_CODE_LEN} bytes; put more in a file and run it from there"
            )));
        }
        let timeout_secs = request.timeout_secs.unwrap_or(policy.default_timeout_secs);
        if timeout_secs == 0 || timeout_secs > policy.max_timeout_secs {
            return Err(Error::bad_request(
                "invalid_timeout",
                format!(
                    "timeout_secs must be 1 to {} (policy.max_timeout_secs)",
                    policy.max_timeout_secs
                ),
            ));
        }
        let mut entry = self.entry(caller, &session, "run_code", &target(&context));
        let agent_request = KernelRunRequest {
            context: context.id.clone(),
            language: context.language.clone(),
            kernel,
            cwd: context.cwd.clone(),
            env: session.env.clone(),
            code: request.code,
            timeout_ms: timeout_secs * 1000,
            output_limit: policy.max_output_bytes,
        };
        let stream = match self.connect(&session).await {
            Ok(stream) => stream,
            Err(e) => return Err(entry.fail(e)),
        };
        let run = match start_kernel_run(stream, &agent_request).await {
            Ok(run) => run,
            Err(e) => return Err(entry.fail(agent_error(Operation::Code, e))),
        };
        self.contexts()
            .update(&session.id, &context.id, |c| c.runs += 1);
        Ok(CodeRun {
            context,
            run,
            deadline: tokio::time::Instant::now() + Duration::from_secs(timeout_secs) + AGENT_GRACE,
            entry,
            core: self.clone(),
            session_id: session.id,
        })
    }
}

impl CodeRun {
    /// The next event; `None` after [`CodeEvent::End`].
    pub async fn next(&mut self) -> Option<Result<CodeEvent, Error>> {
        let left = self
            .deadline
            .saturating_duration_since(tokio::time::Instant::now());
        let item = match self.run.next(left).await {
            Ok(Some(item)) => item,
            Ok(None) => return None,
            Err(e) => {
                let error = agent_error(Operation::Code, e);
                return Some(Err(self.entry.fail(error)));
            }
        };
        self.entry.touch();
        Some(Ok(match item {
            KernelItem::Stream { name, text } if name == "stderr" => CodeEvent::Stderr { text },
            KernelItem::Stream { text, .. } => CodeEvent::Stdout { text },
            KernelItem::Result(result) => CodeEvent::Result(CodeResult {
                data: result.data,
                is_main_result: result.is_main_result,
            }),
            KernelItem::Error(error) => CodeEvent::Error(CodeError {
                name: error.name,
                value: error.value,
                traceback: error.traceback,
            }),
            KernelItem::End(end) => {
                let outcome = match end.outcome {
                    KernelOutcome::Ok => "ok",
                    KernelOutcome::Error => "error",
                    KernelOutcome::TimedOut => "timed_out",
                    KernelOutcome::KernelDied => "kernel_died",
                };
                if end.restarted {
                    let contexts = self.core.contexts();
                    contexts.update(&self.session_id, &self.context.id, |c| c.restarts += 1);
                }
                let failure = match end.outcome {
                    KernelOutcome::Ok => None,
                    KernelOutcome::Error => Some("the code raised an exception".to_string()),
                    KernelOutcome::TimedOut => Some("timed out".to_string()),
                    KernelOutcome::KernelDied => Some("the kernel died".to_string()),
                };
                self.entry.end(failure);
                CodeEvent::End(CodeEnd {
                    context: self.context.id.clone(),
                    language: self.context.language.clone(),
                    outcome: outcome.into(),
                    execution_count: end.execution_count,
                    restarted: end.restarted,
                    truncated: end.dropped_bytes > 0,
                    dropped_bytes: end.dropped_bytes,
                    exit_code: end.exit_code,
                    signal: end.signal,
                    duration_ms: end.duration_ms,
                })
            }
        }))
    }

    /// Every event of the run, for faces that answer once it is over.
    pub async fn collect(mut self) -> Result<Vec<CodeEvent>, Error> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event?);
        }
        Ok(events)
    }
}
