//! Code contexts: one Jupyter kernel per context, started as a sandbox process on the
//! context's first run and spoken to over the Jupyter messaging protocol (ZeroMQ on loopback
//! TCP, signed with a key the agent makes for each kernel).
//!
//! The ZeroMQ client is async; its runtime ([`runtime`]) starts when a context is first used,
//! so an agent that never runs code keeps its small idle footprint. A run executes on the
//! runtime and hands its events to the connection's thread, which writes them.

mod capped;
mod launch;
mod run;
mod runtime;

use launch::Kernel;
use sandboxd_agent_proto::kernel::{KernelContext, KernelRunRequest};
use sandboxd_agent_proto::{write_json, ErrorCode, Event, KernelEvent, KernelRequest, ProtoError};
use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, OnceLock};

/// Kernels the agent keeps at once (each is a process with its own memory).
const MAX_KERNELS: usize = 16;
/// Events a run may have queued for the connection before it waits for the writer.
const EVENT_QUEUE: usize = 64;

/// A context's kernel, once started; runs on one context take turns.
type Slot = Arc<tokio::sync::Mutex<Option<Kernel>>>;

/// A context the agent holds: what the service said of it, and its kernel's slot. The agent
/// is where a context's existence is kept, so a restarted service learns it back from here.
struct Held {
    about: KernelContext,
    slot: Slot,
}

fn kernels() -> &'static Mutex<HashMap<String, Held>> {
    static KERNELS: OnceLock<Mutex<HashMap<String, Held>>> = OnceLock::new();
    KERNELS.get_or_init(Default::default)
}

/// The table of the code-context requests: each to its handler.
pub(crate) fn serve(c: &mut UnixStream, request: KernelRequest) -> Result<(), ProtoError> {
    match request {
        KernelRequest::KernelRun(request) => run(c, request),
        KernelRequest::KernelShutdown { context } => shutdown(c, &context),
        KernelRequest::KernelList => list(c),
        KernelRequest::KernelDeclare(context) => declare(c, context),
    }
}

/// Answers [`KernelRequest::KernelRun`].
pub fn run(connection: &mut UnixStream, request: KernelRunRequest) -> Result<(), ProtoError> {
    let about = KernelContext {
        context: request.context.clone(),
        language: request.language.clone(),
        cwd: request.cwd.clone(),
    };
    if let Err(message) = check_context(&about).and_then(|()| check(&request)) {
        return write_json(connection, &error(ErrorCode::BadRequest, message));
    }
    let slot = match hold(about) {
        Ok(slot) => slot,
        Err(message) => {
            return write_json(connection, &error(ErrorCode::TooManyProcesses, message))
        }
    };
    let runtime = match runtime::get() {
        Ok(runtime) => runtime,
        Err(e) => {
            let message = format!("cannot start the kernel client: {e}");
            return write_json(connection, &error(ErrorCode::KernelUnavailable, message));
        }
    };
    let (events, mut received) = tokio::sync::mpsc::channel(EVENT_QUEUE);
    // A run that writes nothing learns that the service hung up from this copy.
    let service = connection.try_clone().ok();
    runtime.spawn(run::execute(slot, request, events, service));
    while let Some(event) = received.blocking_recv() {
        // A failed write drops the receiver, which tells the run nobody listens any more.
        write_json(connection, &event)?;
    }
    Ok(())
}

/// Answers [`KernelRequest::KernelShutdown`].
pub fn shutdown(connection: &mut UnixStream, context: &str) -> Result<(), ProtoError> {
    let slot = kernels()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(context)
        .map(|held| held.slot);
    let existed = match slot {
        Some(slot) => match runtime::get() {
            Ok(runtime) => runtime.block_on(async move { slot.lock().await.take().is_some() }),
            Err(_) => false,
        },
        None => false,
    };
    write_json(connection, &KernelEvent::KernelStopped { existed })
}

/// The slot of the context, kept from now on, unless the agent holds as many as it may (the
/// refusal's message).
fn hold(about: KernelContext) -> Result<Slot, String> {
    let mut table = kernels().lock().unwrap_or_else(|e| e.into_inner());
    if !table.contains_key(&about.context) && table.len() >= MAX_KERNELS {
        return Err(format!(
            "the sandbox holds {MAX_KERNELS} code contexts, the most it may; delete one first"
        ));
    }
    let held = table.entry(about.context.clone()).or_insert_with(|| Held {
        about,
        slot: Slot::default(),
    });
    Ok(held.slot.clone())
}

/// Answers [`KernelRequest::KernelDeclare`].
pub fn declare(connection: &mut UnixStream, about: KernelContext) -> Result<(), ProtoError> {
    if let Err(message) = check_context(&about) {
        return write_json(connection, &error(ErrorCode::BadRequest, message));
    }
    if let Err(message) = hold(about) {
        return write_json(connection, &error(ErrorCode::TooManyProcesses, message));
    }
    list(connection)
}

/// Answers [`KernelRequest::KernelList`].
pub fn list(connection: &mut UnixStream) -> Result<(), ProtoError> {
    let kernels = kernels()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .map(|held| held.about.clone())
        .collect();
    write_json(connection, &KernelEvent::Kernels { kernels })
}

/// What the agent keeps of a context is bounded: its id, language and cwd.
fn check_context(about: &KernelContext) -> Result<(), String> {
    if !sandboxd_agent_proto::kernel::valid_context_id(&about.context) {
        return Err("a context id is 1 to 64 characters: letters, digits, '-' and '_'".into());
    }
    if about.language.len() > 64 {
        return Err("a language is at most 64 characters".into());
    }
    if about.cwd.as_ref().is_some_and(|cwd| cwd.len() > 4096) {
        return Err("a cwd is at most 4096 bytes".into());
    }
    Ok(())
}

fn check(request: &KernelRunRequest) -> Result<(), String> {
    use sandboxd_agent_proto::kernel::{KERNEL_CONNECTION_FILE, MAX_KERNEL_CODE_LEN};
    if !request
        .kernel
        .iter()
        .any(|a| a.contains(KERNEL_CONNECTION_FILE))
    {
        return Err(format!(
            "the kernel command must hold {KERNEL_CONNECTION_FILE}"
        ));
    }
    if request.code.len() > MAX_KERNEL_CODE_LEN {
        return Err(format!("code is limited to {MAX_KERNEL_CODE_LEN} bytes"));
    }
    Ok(())
}

pub(crate) fn error(code: ErrorCode, message: String) -> Event {
    Event::Error { code, message }
}
