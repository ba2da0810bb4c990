//! The handlers of the core routes: the allowlist and policy, stats, sessions, exec and the
//! activity log.

use crate::activity::{self, Actor, Outcome, PendingEntry};
use crate::auth::Principal;
use crate::error::{parse_query, ApiError};
use crate::sessions::{self, Reservation, Session};
use crate::{exec, images, pool, Service};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::future::join_all;
use sandboxd_api::{
    ActivityList, CreateSession, ExecRequest, ExecResult, RuntimeList, SessionInfo, SessionList,
    Stats,
};
use sandboxd_backend::SandboxSpec;
use serde::Deserialize;
use std::time::Instant;

/// Longest tenant name and label sizes a client may attach to a session.
const MAX_TENANT_LEN: usize = 128;
const MAX_LABELS: usize = 32;
const MAX_LABEL_KEY_LEN: usize = 64;
const MAX_LABEL_VALUE_LEN: usize = 256;
pub const CREATE_BODY_LIMIT: usize = 64 << 10;
/// Ended sessions listed with `?include_ended=true`.
const ENDED_LISTED: u32 = 100;

#[utoipa::path(
    get,
    path = "/v1/runtimes",
    tag = "service",
    summary = "The runtime allowlist in force, with each runtime's limits and image status",
    responses((status = 200, description = "The runtimes and the default one", body = RuntimeList))
)]
pub async fn list_runtimes(
    State(service): State<Service>,
    principal: Principal,
) -> Json<RuntimeList> {
    let config = service.config();
    let runtimes = config
        .runtimes
        .values()
        .filter(|runtime| may_use(&service, &principal, &runtime.name))
        .map(|runtime| images::with_status(&service, runtime));
    Json(RuntimeList {
        default_runtime: config.default_runtime.clone(),
        runtimes: join_all(runtimes).await,
    })
}

#[utoipa::path(
    get,
    path = "/v1/policy",
    tag = "service",
    summary = "The limits nothing can raise",
    responses((status = 200, description = "The policy in force", body = sandboxd_api::Policy))
)]
pub async fn policy(State(service): State<Service>) -> Json<sandboxd_api::Policy> {
    Json(service.config().policy.clone())
}

#[utoipa::path(
    get,
    path = "/v1/config",
    tag = "service",
    summary = "The configuration in force, token redacted",
    responses((status = 200, description = "The configuration", body = sandboxd_api::ConfigView))
)]
pub async fn config_in_force(
    State(service): State<Service>,
    principal: Principal,
) -> Result<Json<sandboxd_api::ConfigView>, ApiError> {
    principal.require_admin("the service config")?;
    Ok(Json(service.config().view()))
}

#[utoipa::path(
    get,
    path = "/v1/stats",
    tag = "service",
    summary = "Sessions, memory and processes across live sandboxes",
    responses((status = 200, description = "The figures now", body = Stats))
)]
pub async fn stats(State(service): State<Service>, principal: Principal) -> Json<Stats> {
    Json(service.stats(principal.tenant()).await)
}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "service",
    summary = "The stats plus request counts and latencies per route, for Prometheus",
    responses((status = 200, description = "Prometheus text format 0.0.4", content_type = "text/plain", body = String))
)]
pub async fn prometheus(
    State(service): State<Service>,
    principal: Principal,
) -> Result<Response, ApiError> {
    principal.require_admin("the service metrics")?;
    let stats = service.stats(None).await;
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        service.inner.metrics.render(&stats),
    )
        .into_response())
}

/// Whether the caller may open sessions of a runtime: a tenant only its allowed ones.
fn may_use(service: &Service, principal: &Principal, runtime: &str) -> bool {
    principal
        .tenant()
        .and_then(|name| service.config().tenants.get(name))
        .is_none_or(|tenant| tenant.may_use(runtime))
}

/// The request body, or the API's own error when it is over its limit or cut off.
fn read_body(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge(format!(
            "{}; the policy caps bodies (GET /v1/policy)",
            rejection.body_text()
        )),
        _ => ApiError::bad_request("invalid_request", rejection.body_text()),
    })
}

/// Reads a create request, refusing by name any field that is not the client's to set.
fn parse_create(body: &[u8]) -> Result<CreateSession, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(CreateSession::default());
    }
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("the body is not valid JSON: {e}"))
    })?;
    let object = value.as_object().ok_or_else(|| {
        ApiError::bad_request(
            "invalid_request",
            "the body must be a JSON object such as {\"runtime\": \"python\"}",
        )
    })?;
    let forbidden: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|key| !CreateSession::FIELDS.contains(key))
        .collect();
    if !forbidden.is_empty() {
        return Err(ApiError::bad_request(
            "forbidden_field",
            format!(
                "a request may name a runtime alias, a tenant and labels, nothing else about the container; refused: {}. The image, limits and network are set by the operator per runtime",
                forbidden.join(", ")
            ),
        ));
    }
    let request: CreateSession = serde_json::from_value(value).map_err(|e| {
        ApiError::bad_request("invalid_request", format!("invalid create request: {e}"))
    })?;
    if let Some(tenant) = &request.tenant {
        if tenant.is_empty()
            || tenant.len() > MAX_TENANT_LEN
            || tenant.chars().any(char::is_control)
        {
            return Err(ApiError::bad_request(
                "invalid_request",
                format!(
                    "`tenant` must be 1 to {MAX_TENANT_LEN} characters without control characters"
                ),
            ));
        }
    }
    let labels_ok = request.labels.len() <= MAX_LABELS
        && request.labels.iter().all(|(k, v)| {
            !k.is_empty() && k.len() <= MAX_LABEL_KEY_LEN && v.len() <= MAX_LABEL_VALUE_LEN
        });
    if !labels_ok {
        return Err(ApiError::bad_request(
            "invalid_request",
            format!("at most {MAX_LABELS} labels, keys 1 to {MAX_LABEL_KEY_LEN} bytes, values up to {MAX_LABEL_VALUE_LEN} bytes"),
        ));
    }
    Ok(request)
}

#[utoipa::path(
    post,
    path = "/v1/sessions",
    tag = "sessions",
    summary = "Open a session: a new sandbox of an allowed runtime",
    description = "The body may name a runtime alias, a tenant and labels, nothing else about the container; an empty body opens the default runtime. The first session of a runtime whose image is not on the engine waits for it to be pulled or built.",
    request_body(content = Option<CreateSession>, description = "What to open; no body opens the default runtime"),
    responses(
        (status = 201, description = "The session, running", body = SessionInfo),
        (status = 400, description = "`forbidden_field` (the body names something else about the container), `unknown_runtime` (the message lists the allowed ones), `invalid_json` or `invalid_request`", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 64 KiB", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`service_full`: `max_sessions` are open", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `engine_error`: the sandbox could not be started", body = sandboxd_api::ErrorBody),
        (status = 503, description = "`image_missing`, `runtime_unavailable` or `engine_unavailable`: the runtime's image cannot be had, or the engine is down", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn create_session(
    State(service): State<Service>,
    principal: Principal,
    actor: Actor,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<SessionInfo>), ApiError> {
    let request = parse_create(&read_body(body)?)?;
    let config = service.config();
    let alias = request
        .runtime
        .unwrap_or_else(|| config.default_runtime.clone());
    let runtime = config
        .runtime(&alias)
        .filter(|_| may_use(&service, &principal, &alias))
        .ok_or_else(|| {
            let allowed: Vec<&str> = config
                .runtimes
                .keys()
                .filter(|name| may_use(&service, &principal, name))
                .map(String::as_str)
                .collect();
            ApiError::bad_request(
                "unknown_runtime",
                format!(
                    "runtime \"{alias}\" is not on the allowlist; allowed: {} (GET /v1/runtimes shows their limits)",
                    allowed.join(", ")
                ),
            )
        })?;
    // A tenant's sessions carry its name, whatever the request says.
    let tenant = principal.tenant().map(str::to_string).or(request.tenant);
    check_tenant_quota(&service, &principal, 1)?;
    let started = Instant::now();
    let (reservation, sandbox) = match service.pools().take(&alias) {
        Some(pooled) => (pooled.reservation, pooled.sandbox),
        None => {
            // Pulled or built first if need be (that may take minutes), holding no slot.
            let image = images::ensure(&service, runtime).await?;
            let reservation = reserve_evicting_pooled(&service)?;
            let spec = SandboxSpec {
                session_id: sessions::new_session_id(),
                runtime: alias.clone(),
                image,
                limits: runtime.limits.clone(),
            };
            (reservation, service.backend().create(&spec).await?)
        }
    };
    pool::refill(&service);
    let session = Session::new(
        sandbox.session_id.clone(),
        alias,
        tenant,
        request.labels,
        sandbox,
    );
    tracing::info!(session = %session.id, runtime = %session.runtime, "session opened");
    service.record(
        &session.id,
        &actor,
        "open",
        &session.runtime,
        Outcome::ok(started.elapsed().as_millis() as u64),
    );
    let info = service.info(&session).await;
    if let Err(e) = service.sessions().insert(reservation, session.clone()) {
        // Not recorded means not reachable after a restart: do not leave it running.
        let _ = service.backend().destroy(&session.sandbox).await;
        return Err(e);
    }
    // Concurrent creates may all have passed the first check: the last to arrive gives way.
    if let Err(over_quota) = check_tenant_quota(&service, &principal, 0) {
        let _ = service
            .sessions()
            .close(service.backend(), &session.id, "over the tenant's quota")
            .await;
        return Err(over_quota);
    }
    Ok((StatusCode::CREATED, Json(info)))
}

/// Refuses when the caller's tenant would have more sessions open than its quota, counting
/// `opening` sessions about to open (1 before a create; 0 after it, when concurrent creates
/// may all have passed the first check).
fn check_tenant_quota(
    service: &Service,
    principal: &Principal,
    opening: usize,
) -> Result<(), ApiError> {
    let Some(tenant) = principal
        .tenant()
        .and_then(|t| service.config().tenants.get(t))
    else {
        return Ok(());
    };
    let open = service
        .sessions()
        .running()
        .iter()
        .filter(|s| s.tenant.as_deref() == Some(tenant.name.as_str()))
        .count();
    if open + opening > tenant.max_sessions as usize {
        return Err(ApiError::LimitReached {
            code: "tenant_quota",
            message: format!(
                "tenant \"{}\" may have {} sessions open at once and has that many; close one first",
                tenant.name, tenant.max_sessions
            ),
        });
    }
    Ok(())
}

/// A slot for a new session; when the service is full, a pooled sandbox gives up its slot.
fn reserve_evicting_pooled(service: &Service) -> Result<Reservation, ApiError> {
    loop {
        match service.sessions().reserve() {
            Ok(reservation) => return Ok(reservation),
            Err(full) => match service.pools().evict_one() {
                Some(pooled) => pool::discard(service, vec![pooled]),
                None => return Err(full),
            },
        }
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Also list the most recently ended sessions.
    #[serde(default)]
    include_ended: bool,
}

#[utoipa::path(
    get,
    path = "/v1/sessions",
    tag = "sessions",
    summary = "The running sessions",
    params(ListQuery),
    responses(
        (status = 200, description = "The sessions, with their live memory and process figures", body = SessionList),
        (status = 400, description = "`invalid_request`: a malformed query", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn list_sessions(
    State(service): State<Service>,
    principal: Principal,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<SessionList>, ApiError> {
    let query = parse_query(query, "`include_ended=true|false`")?;
    let mut sessions = service.sessions().running();
    if query.include_ended {
        sessions.extend(service.sessions().ended(ENDED_LISTED)?);
    }
    if let Some(tenant) = principal.tenant() {
        sessions.retain(|s| s.tenant.as_deref() == Some(tenant));
    }
    let infos = join_all(sessions.iter().map(|s| service.info(s))).await;
    Ok(Json(SessionList { sessions: infos }))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}",
    tag = "sessions",
    summary = "One session, running or ended",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The session; an ended one says when and why", body = SessionInfo),
        (status = 404, description = "`not_found`: no such session", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn get_session(
    State(service): State<Service>,
    Path(id): Path<String>,
) -> Result<Json<SessionInfo>, ApiError> {
    let session = service.sessions().get(&id)?;
    Ok(Json(service.info(&session).await))
}

#[utoipa::path(
    delete,
    path = "/v1/sessions/{id}",
    tag = "sessions",
    summary = "Close a session at once (no grace period); its record stays",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The ended session (closing an ended one again is no error)", body = SessionInfo),
        (status = 404, description = "`not_found`: no such session", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`engine_error`: the engine could not remove the sandbox", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn close_session(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
) -> Result<Json<SessionInfo>, ApiError> {
    let started = Instant::now();
    let session = service
        .sessions()
        .close(service.backend(), &id, "closed by the client")
        .await?;
    tracing::info!(session = %id, "session closed");
    service.record(
        &id,
        &actor,
        "close",
        &session.runtime,
        Outcome::ok(started.elapsed().as_millis() as u64),
    );
    Ok(Json(session.info(Default::default())))
}

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/exec",
    tag = "sessions",
    summary = "Run one command to completion",
    description = "Each command is its own process: a `cd` does not carry to the next one; chain with `&&`. A command past its timeout is killed with its children (`timed_out`); output past `policy.max_output_bytes` per stream is cut (`stdout_truncated`, `stderr_truncated`).",
    params(("id" = String, Path, description = "The session's id")),
    request_body(content = ExecRequest, description = "Exactly one of `command` (run by /bin/sh -c) or `argv`"),
    responses(
        (status = 200, description = "How the command ended, and its output", body = ExecResult),
        (status = 400, description = "`invalid_request`, `invalid_timeout`, `timeout_too_large` (above `policy.max_timeout_secs`) or `spawn_failed` (the program cannot be started)", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such session", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended", body = sandboxd_api::ErrorBody),
        (status = 410, description = "`sandbox_gone`: the sandbox vanished from the engine", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over its limit", body = sandboxd_api::ErrorBody),
        (status = 502, description = "`agent_unavailable` or `agent_error`: the sandbox's agent failed", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn exec_command(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<ExecResult>, ApiError> {
    let body = read_body(body)?;
    let session = service.sessions().get_running(&id)?;
    let request: ExecRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request(
            "invalid_request",
            format!(
                "invalid exec request: {e}; send {{\"command\": \"...\"}} or {{\"argv\": [...]}}"
            ),
        )
    })?;
    let (planned, stdin) = exec::plan(request, &service.config().policy)?;
    // Recorded also when the client goes away before the command ends.
    let mut entry = PendingEntry::new(
        &service,
        &id,
        actor,
        "exec",
        &activity::program_name(&planned.argv),
    );
    let result = match service.backend().agent(&session.sandbox).await {
        Ok(stream) => exec::run(stream, &planned, stdin).await,
        Err(e) => Err(e.into()),
    };
    let failure = match &result {
        Ok(r) => {
            entry.exit_code = r.exit_code;
            (r.timed_out.then_some("timed out"))
                .or(r.oom_killed.then_some("killed: out of memory"))
                .map(str::to_string)
        }
        Err(e) => Some(e.to_string()),
    };
    entry.record(failure);
    Ok(Json(result?))
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/activity",
    tag = "sessions",
    summary = "A session's activity log, newest first (also after it ended)",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The most recent entries: who did what, through which interface, and how it went; never a payload", body = ActivityList),
        (status = 404, description = "`not_found`: no such session", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn session_activity(
    State(service): State<Service>,
    Path(id): Path<String>,
) -> Result<Json<ActivityList>, ApiError> {
    service.sessions().get(&id)?;
    Ok(Json(ActivityList {
        entries: service.sessions().store().activity(&id)?,
    }))
}
