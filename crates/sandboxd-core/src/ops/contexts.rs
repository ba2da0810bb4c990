//! Code contexts of sessions: which contexts a session has (the kernels themselves live in
//! the sandbox, held by its agent), and creating, listing, restarting and deleting them.
//! Running code in one is `code_run`.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::state::activity::Caller;
use crate::state::sessions::{rfc3339, Session};
use rand::Rng;
use sandboxd_agent_proto as proto;
use sandboxd_api::{ContextInfo, ContextList, ContextRequest, Remedy};
use std::time::Duration;
use time::OffsetDateTime;

/// The recipe whose runtimes have a Python kernel, named when a runtime has none.
pub const INTERPRETER_RECIPE: &str = "python-interpreter";
/// The language a run or context gets when it names none and the runtime has its kernel (as
/// E2B's SDKs assume); otherwise the runtime's first.
const DEFAULT_LANGUAGE: &str = "python";
/// How long the agent has to stop a kernel.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

impl Core {
    pub async fn create_context(
        &self,
        caller: &Caller,
        session_id: &str,
        request: ContextRequest,
    ) -> Result<ContextInfo, Error> {
        let session = self.running_session(caller, session_id, "create_context")?;
        self.learn_contexts(&session).await;
        let language = self
            .kernel_language(&session, request.language.as_deref())?
            .0;
        check_cwd(request.cwd.as_deref())?;
        let id = format!(
            "ctx-{:012x}",
            rand::rng().random::<u64>() & 0xffff_ffff_ffff
        );
        let mut entry = self.entry(
            caller,
            &session,
            "create_context",
            &format!("{language}/{id}"),
        );
        let info = new_context(id, language, request.cwd);
        let result = async {
            self.contexts().insert(
                &session.id,
                session.tenant.as_deref(),
                &self.config().policy,
                info.clone(),
            )?;
            // The agent keeps it from now on, so a restarted service learns it back.
            if let Err(e) = self.declare_kernel(&session, &info).await {
                self.contexts().remove(&session.id, &info.id);
                return Err(e);
            }
            Ok(info)
        };
        entry.finish(result.await)
    }

    pub fn list_contexts(&self, caller: &Caller, session_id: &str) -> Result<ContextList, Error> {
        let session = self.running_session(caller, session_id, "list_contexts")?;
        Ok(ContextList {
            contexts: self.contexts().list(&session.id),
        })
    }

    /// Stops the context's kernel: its next run starts a new one, with nothing defined.
    pub async fn restart_context(
        &self,
        caller: &Caller,
        session_id: &str,
        context_id: &str,
    ) -> Result<ContextInfo, Error> {
        let session = self.running_session(caller, session_id, "restart_context")?;
        self.learn_contexts(&session).await;
        let info = self.context(&session, context_id)?;
        let mut entry = self.entry(caller, &session, "restart_context", &target(&info));
        let stopped = async {
            self.stop_kernel(&session, context_id).await?;
            // Stopping forgets it in the agent: kept again, to be listed until its next run.
            self.declare_kernel(&session, &info).await
        };
        entry.finish(stopped.await)?;
        self.contexts()
            .update(&session.id, context_id, |c| c.restarts += 1);
        self.context(&session, context_id)
    }

    pub async fn delete_context(
        &self,
        caller: &Caller,
        session_id: &str,
        context_id: &str,
    ) -> Result<(), Error> {
        let session = self.running_session(caller, session_id, "delete_context")?;
        self.learn_contexts(&session).await;
        let info = self.context(&session, context_id)?;
        let mut entry = self.entry(caller, &session, "delete_context", &target(&info));
        let stopped = self.stop_kernel(&session, context_id).await;
        entry.finish(stopped)?;
        self.contexts().remove(&session.id, context_id);
        Ok(())
    }

    /// The context, or a not-found error naming how to see the session's contexts.
    pub(crate) fn context(
        &self,
        session: &Session,
        context_id: &str,
    ) -> Result<ContextInfo, Error> {
        self.contexts().get(&session.id, context_id).ok_or_else(|| {
            Error::NotFound(format!(
                "session {} has no code context {context_id:?}",
                session.id
            ))
        })
    }

    /// The language's default context, made on first use (in `cwd` when given): its id is the
    /// language's name.
    pub(crate) fn default_context(
        &self,
        session: &Session,
        language: &str,
        cwd: Option<&str>,
    ) -> Result<ContextInfo, Error> {
        if let Some(info) = self.contexts().get(&session.id, language) {
            return Ok(info);
        }
        check_cwd(cwd)?;
        let info = new_context(
            language.to_string(),
            language.to_string(),
            cwd.map(str::to_string),
        );
        self.contexts().insert(
            &session.id,
            session.tenant.as_deref(),
            &self.config().policy,
            info.clone(),
        )?;
        Ok(info)
    }

    /// The language asked for ([`DEFAULT_LANGUAGE`], else the runtime's first, when none) and
    /// the command that starts its kernel; an error naming the recipe to use when the runtime has no such kernel.
    pub(crate) fn kernel_language(
        &self,
        session: &Session,
        language: Option<&str>,
    ) -> Result<(String, Vec<String>), Error> {
        let runtime = self.config().runtime(&session.runtime);
        let kernels = runtime.map(|r| r.kernels.clone()).unwrap_or_default();
        let found = match language {
            Some(language) => kernels.get_key_value(language),
            None => kernels
                .get_key_value(DEFAULT_LANGUAGE)
                .or_else(|| kernels.iter().next()),
        };
        if let Some((language, argv)) = found {
            return Ok((language.clone(), argv.clone()));
        }
        let having: Vec<&str> = self
            .config()
            .runtimes
            .values()
            .filter(|r| match language {
                Some(language) => r.kernels.contains_key(language),
                None => !r.kernels.is_empty(),
            })
            .map(|r| r.name.as_str())
            .collect();
        let wanted = language.map(|l| format!(" for {l}")).unwrap_or_default();
        let mut message = if kernels.is_empty() {
            format!(
                "runtime \"{}\" of session {} has no kernel for code contexts; open a session on a runtime built from the recipe \"{INTERPRETER_RECIPE}\"",
                session.runtime, session.id
            )
        } else {
            format!(
                "runtime \"{}\" has no kernel{wanted}; its kernels: {}",
                session.runtime,
                kernels.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        };
        if !having.is_empty() {
            message.push_str(&format!(
                " (runtimes here with one{wanted}: {})",
                having.join(", ")
            ));
        }
        Err(Error::Conflict {
            code: "no_kernel",
            message,
        }
        .with_remedy(Remedy::ListRuntimes))
    }

    /// Learns the contexts of a session taken back after a restart from its agent, which
    /// holds them (their kernels still run): once, before its contexts are first used. What
    /// the agent says is checked like a request (it is the sandbox's word); a context of a
    /// language the runtime has no kernel for is left out. On failure it is tried again at
    /// the next use.
    pub(crate) async fn learn_contexts(&self, session: &Session) {
        if !self.contexts().is_unlearned(&session.id) {
            return;
        }
        let languages = self
            .config()
            .runtime(&session.runtime)
            .map(|r| r.kernels.clone())
            .unwrap_or_default();
        if languages.is_empty() {
            // No kernel, no context: nothing to ask its agent.
            self.contexts()
                .learned(&session.id, session.tenant.as_deref(), Vec::new());
            return;
        }
        let listed = match self.connect(session).await {
            Ok(stream) => proto::host::list_kernels(stream, SHUTDOWN_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::Code, e)),
            Err(e) => Err(e),
        };
        let kernels = match listed {
            Ok(kernels) => kernels,
            Err(e) => {
                tracing::warn!(session = %session.id, error = %e, "cannot learn the session's code contexts from its agent");
                return;
            }
        };
        let found = kernels
            .into_iter()
            .filter(|k| {
                proto::kernel::valid_context_id(&k.context) && languages.contains_key(&k.language)
            })
            .filter(|k| check_cwd(k.cwd.as_deref()).is_ok())
            .map(|k| new_context(k.context, k.language, k.cwd))
            .collect();
        self.contexts()
            .learned(&session.id, session.tenant.as_deref(), found);
    }

    async fn declare_kernel(&self, session: &Session, info: &ContextInfo) -> Result<(), Error> {
        let stream = self.connect(session).await?;
        let context = proto::kernel::KernelContext {
            context: info.id.clone(),
            language: info.language.clone(),
            cwd: info.cwd.clone(),
        };
        proto::host::declare_kernel(stream, context, SHUTDOWN_TIMEOUT)
            .await
            .map(|_| ())
            .map_err(|e| agent_error(Operation::Code, e))
    }

    async fn stop_kernel(&self, session: &Session, context_id: &str) -> Result<(), Error> {
        let stream = self.connect(session).await?;
        proto::host::shutdown_kernel(stream, context_id, SHUTDOWN_TIMEOUT)
            .await
            .map(|_| ())
            .map_err(|e| agent_error(Operation::Code, e))
    }
}

fn new_context(id: String, language: String, cwd: Option<String>) -> ContextInfo {
    ContextInfo {
        id,
        language,
        cwd,
        created_at: rfc3339(OffsetDateTime::now_utc()),
        runs: 0,
        restarts: 0,
    }
}

/// What an activity entry names: the language and the context, never the code.
pub(crate) fn target(info: &ContextInfo) -> String {
    format!("{}/{}", info.language, info.id)
}

fn check_cwd(cwd: Option<&str>) -> Result<(), Error> {
    match cwd {
        Some(cwd) if cwd.is_empty() || cwd.contains('\0') => Err(Error::bad_request(
            "invalid_request",
            "`cwd` must be a path without NUL bytes",
        )),
        _ => Ok(()),
    }
}
