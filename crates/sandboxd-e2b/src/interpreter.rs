//! The code interpreter's API on port 49999, for the `e2b-code-interpreter` SDKs: `/execute`
//! (a run, answered as JSON lines while it happens) and `/contexts`, over the core's code
//! contexts. The sandbox's runtime must have kernels (the recipe `code-interpreter`: E2B's six
//! languages; `python-interpreter`: python alone).

use crate::call::SandboxCall;
use crate::errors::E2bError;
use crate::routing::SandboxId;
use crate::state::ClientAddress;
use crate::state::Face;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Extension, Json, Router};
use sandboxd_api::{CodeEvent, CodeResult, ContextInfo, ContextRequest, RunCode};
use sandboxd_core::HOME_DIR;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const ACCESS_TOKEN_HEADER: &str = "x-access-token";
const TRAFFIC_TOKEN_HEADER: &str = "e2b-traffic-access-token";

/// The port the SDKs reach the code interpreter on.
pub const PORT: u16 = 49999;

/// MIME types and the field of the SDK's `Result` each fills; the rest go to `extra`.
const RESULT_FIELDS: &[(&str, &str)] = &[
    ("text/plain", "text"),
    ("text/html", "html"),
    ("text/markdown", "markdown"),
    ("image/svg+xml", "svg"),
    ("image/png", "png"),
    ("image/jpeg", "jpeg"),
    ("application/pdf", "pdf"),
    ("text/latex", "latex"),
    ("application/json", "json"),
    ("application/javascript", "javascript"),
    // E2B's own, from the code-interpreter recipe's IPython extension.
    ("e2b/chart", "chart"),
    ("e2b/data", "data"),
];

pub fn router(face: Face) -> Router {
    Router::new()
        .route("/health", get(|| async { StatusCode::OK }))
        .route("/execute", post(execute))
        .route("/contexts", post(create_context).get(list_contexts))
        .route("/contexts/{context}", delete(delete_context))
        .route("/contexts/{context}/restart", post(restart_context))
        .with_state(face)
}

#[derive(Deserialize)]
struct ExecuteBody {
    code: String,
    #[serde(default)]
    context_id: Option<String>,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    env_vars: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
struct ContextBody {
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    env_vars: Option<BTreeMap<String, String>>,
}

/// `POST /execute`: the run's events as JSON lines, as E2B's interpreter sends them.
async fn execute(
    State(face): State<Face>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    headers: HeaderMap,
    Json(body): Json<ExecuteBody>,
) -> Response {
    let answer = async {
        let call = authenticate(&face, &sandbox, &headers, &address)?;
        refuse_env_vars(body.env_vars.as_ref())?;
        let request = RunCode {
            code: body.code,
            context: None,
            // E2B's own default interpreter is python, as the core's is when the runtime has it.
            language: body.language.filter(|l| !l.is_empty()),
            // E2B's kernels start in the home directory.
            cwd: Some(HOME_DIR.into()),
            // The SDK bounds the run itself (`timeout`); the service's ceiling applies here.
            timeout_secs: Some(face.core.config().policy.max_timeout_secs),
        };
        let run = face
            .core
            .run_code(&call.caller, &call.id, body.context_id.as_deref(), request)
            .await?;
        Ok::<_, E2bError>(run)
    }
    .await;
    let run = match answer {
        Ok(run) => run,
        Err(e) => return e.into_http(),
    };
    let lines = futures_util::stream::unfold(Some(run), |run| async move {
        let mut run = run?;
        let line = match run.next().await? {
            Ok(event) => lines_of(event),
            Err(error) => {
                // The run itself failed (its sandbox or agent went away), not its code: the
                // answer is cut off, so the SDK raises as when E2B's sandbox dies mid-run.
                let cut = std::io::Error::other(format!("{}: {error}", error.code()));
                return Some((Err(cut), None));
            }
        };
        Some((Ok(line), Some(run)))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from_stream(lines))
        .expect("a valid response")
}

/// An event as the SDK's `parse_output` reads it, one JSON object per line.
fn lines_of(event: CodeEvent) -> String {
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let line = match event {
        CodeEvent::Stdout { text } => json!({"type": "stdout", "text": text, "timestamp": now}),
        CodeEvent::Stderr { text } => json!({"type": "stderr", "text": text, "timestamp": now}),
        CodeEvent::Result(result) => result_line(result),
        CodeEvent::Error(error) => json!({
            "type": "error",
            "name": error.name,
            "value": error.value,
            "traceback": error.traceback.join("\n"),
        }),
        CodeEvent::End(end) => {
            let count = json!({"type": "number_of_executions", "execution_count": end.execution_count.unwrap_or(0)});
            if end.outcome != "kernel_died" {
                return format!("{count}\n");
            }
            // The SDK learns of a dead kernel only from an error; the next run gets a new one.
            let how = match (end.signal, end.exit_code) {
                (Some(signal), _) => format!(" (signal {signal})"),
                (None, Some(code)) => format!(" (exit code {code})"),
                (None, None) => String::new(),
            };
            let restarted = if end.restarted {
                "a new kernel takes the next run"
            } else {
                "the next run starts a new kernel"
            };
            let died = json!({
                "type": "error",
                "name": "DeadKernelError",
                "value": format!("the {} kernel died{how} while the code ran; its state is gone and {restarted}", end.language),
                "traceback": "",
            });
            return format!("{died}\n{count}\n");
        }
    };
    format!("{line}\n")
}

fn result_line(result: CodeResult) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), json!("result"));
    line.insert("is_main_result".into(), json!(result.is_main_result));
    let mut extra = Map::new();
    for (mime, value) in result.data {
        match RESULT_FIELDS.iter().find(|(known, _)| *known == mime) {
            Some((_, field)) => {
                let value = match value {
                    // As E2B's interpreter answers a string's repr: without its quotes.
                    Value::String(text)
                        if mime == "text/plain"
                            && text.len() >= 2
                            && text.starts_with('\'')
                            && text.ends_with('\'') =>
                    {
                        Value::String(text[1..text.len() - 1].to_string())
                    }
                    // Base64 from the kernel may carry line breaks; the SDK wants it whole.
                    Value::String(text)
                        if mime.starts_with("image/") && mime != "image/svg+xml" =>
                    {
                        Value::String(text.split_whitespace().collect())
                    }
                    other => other,
                };
                line.insert((*field).into(), value);
            }
            None => {
                extra.insert(mime, value);
            }
        }
    }
    if !extra.is_empty() {
        line.insert("extra".into(), Value::Object(extra));
    }
    Value::Object(line)
}

async fn create_context(
    State(face): State<Face>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    headers: HeaderMap,
    Json(body): Json<ContextBody>,
) -> Response {
    let answer = async {
        let call = authenticate(&face, &sandbox, &headers, &address)?;
        refuse_env_vars(body.env_vars.as_ref())?;
        let request = ContextRequest {
            language: body.language,
            cwd: body.cwd.or_else(|| Some(HOME_DIR.into())),
        };
        let info = face
            .core
            .create_context(&call.caller, &call.id, request)
            .await?;
        Ok::<_, E2bError>(Json(context_json(&info)))
    };
    respond(answer.await)
}

async fn list_contexts(
    State(face): State<Face>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    headers: HeaderMap,
) -> Response {
    let answer = authenticate(&face, &sandbox, &headers, &address).and_then(|call| {
        let list = face.core.list_contexts(&call.caller, &call.id)?;
        Ok(Json(Value::Array(
            list.contexts.iter().map(context_json).collect(),
        )))
    });
    respond(answer)
}

async fn delete_context(
    State(face): State<Face>,
    Extension(sandbox): Extension<SandboxId>,
    Path(context): Path<String>,
    address: ClientAddress,
    headers: HeaderMap,
) -> Response {
    let answer = async {
        let call = authenticate(&face, &sandbox, &headers, &address)?;
        face.core
            .delete_context(&call.caller, &call.id, &context)
            .await?;
        Ok::<_, E2bError>(StatusCode::NO_CONTENT)
    };
    respond(answer.await)
}

async fn restart_context(
    State(face): State<Face>,
    Extension(sandbox): Extension<SandboxId>,
    Path(context): Path<String>,
    address: ClientAddress,
    headers: HeaderMap,
) -> Response {
    let answer = async {
        let call = authenticate(&face, &sandbox, &headers, &address)?;
        face.core
            .restart_context(&call.caller, &call.id, &context)
            .await?;
        Ok::<_, E2bError>(StatusCode::NO_CONTENT)
    };
    respond(answer.await)
}

/// The SDK's `Context`: id, language, cwd.
fn context_json(info: &ContextInfo) -> Value {
    json!({
        "id": info.id,
        "language": info.language,
        "cwd": info.cwd.clone().unwrap_or_else(|| "/workspace".into()),
    })
}

/// The call's sandbox and caller, by the sandbox's token in `X-Access-Token` (what run_code
/// sends) or `E2B-Traffic-Access-Token` (what the context calls send).
fn authenticate(
    face: &Face,
    sandbox: &SandboxId,
    headers: &HeaderMap,
    address: &ClientAddress,
) -> Result<SandboxCall, E2bError> {
    let mut headers = headers.clone();
    if !headers.contains_key(ACCESS_TOKEN_HEADER) {
        if let Some(token) = headers.get(TRAFFIC_TOKEN_HEADER).cloned() {
            headers.insert(ACCESS_TOKEN_HEADER, token);
        }
    }
    crate::envd::authenticate(face, sandbox, &headers, address)
}

/// Environment per run or context is not kept apart from the session's: say so, not ignore it.
fn refuse_env_vars(env: Option<&BTreeMap<String, String>>) -> Result<(), E2bError> {
    match env {
        Some(env) if !env.is_empty() => Err(E2bError::unsupported(
            "environment variables per run or context (envs); set them for the whole sandbox with envs at create",
        )),
        _ => Ok(()),
    }
}

fn respond(answer: Result<impl IntoResponse, E2bError>) -> Response {
    match answer {
        Ok(ok) => ok.into_response(),
        Err(e) => e.into_http(),
    }
}
