//! The sandboxd HTTP service: the API under `/v1`, `/healthz` and `/metrics`.
//!
//! [`app`] builds the router from a [`Service`]; [`serve`] runs it on a listener until the
//! shutdown future completes. The binary only parses flags and calls these.

mod activity;
mod error;
mod exec;
mod files;
mod metrics;
mod processes;
mod sessions;

pub use activity::{Actor, Outcome, CLIENT_HEADER};
pub use error::ApiError;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::future::join_all;
use metrics::Metrics;
use sandboxd_api::{
    CreateSession, ExecRequest, ExecResult, RuntimeList, SessionInfo, SessionList, Stats,
};
use sandboxd_backend::{Backend, SandboxSpec};
use sandboxd_config::Config;
use sessions::{Session, Sessions};
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

/// Longest tenant name and label sizes a client may attach to a session.
const MAX_TENANT_LEN: usize = 128;
const MAX_LABELS: usize = 32;
const MAX_LABEL_KEY_LEN: usize = 64;
const MAX_LABEL_VALUE_LEN: usize = 256;
const CREATE_BODY_LIMIT: usize = 64 << 10;

/// Everything a request handler needs.
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    token: String,
    backend: Arc<dyn Backend>,
    sessions: Sessions,
    activity: activity::Log,
    metrics: Metrics,
}

impl Service {
    pub fn new(config: Config, token: String, backend: Arc<dyn Backend>) -> Service {
        let sessions = Sessions::new(config.max_sessions);
        Service {
            inner: Arc::new(Inner {
                config,
                token,
                backend,
                sessions,
                activity: activity::Log::default(),
                metrics: Metrics::default(),
            }),
        }
    }

    fn config(&self) -> &Config {
        &self.inner.config
    }

    fn backend(&self) -> &dyn Backend {
        self.inner.backend.as_ref()
    }

    fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    async fn info(&self, session: &Session) -> SessionInfo {
        let usage = if session.is_running() {
            self.backend()
                .usage(&session.sandbox)
                .await
                .unwrap_or_default()
        } else {
            Default::default()
        };
        session.info(usage)
    }

    async fn stats(&self) -> Stats {
        let running = self.sessions().running();
        let usages = join_all(running.iter().map(|s| self.backend().usage(&s.sandbox))).await;
        let (memory_bytes, processes) = usages
            .into_iter()
            .flatten()
            .fold((0, 0), |(m, p), u| (m + u.memory_bytes, p + u.processes));
        Stats {
            sessions: running.len() as u32,
            max_sessions: self.config().max_sessions,
            memory_bytes,
            processes,
            runtimes_allowed: self.config().runtimes.len() as u32,
        }
    }

    /// Adds an entry to a session's activity log. Callers pass what was addressed and how it
    /// went, never a payload.
    pub fn record(
        &self,
        session_id: &str,
        actor: &Actor,
        action: &str,
        target: &str,
        outcome: Outcome,
    ) {
        self.inner
            .activity
            .record(session_id, actor, action, target, outcome);
    }

    /// Removes every open sandbox (used when the service stops for good).
    pub async fn close_all(&self, reason: &str) {
        let running = self.sessions().running();
        join_all(
            running
                .iter()
                .map(|s| self.sessions().close(self.backend(), &s.id, reason)),
        )
        .await;
    }
}

/// The router with every route, the token check and request metrics.
pub fn app(service: Service) -> Router {
    let exec_body_limit = usize::try_from(service.config().policy.max_upload_bytes)
        .unwrap_or(usize::MAX)
        .saturating_add(1 << 20);
    let api = Router::new()
        .route("/v1/runtimes", get(list_runtimes))
        .route("/v1/policy", get(policy))
        .route("/v1/config", get(config_in_force))
        .route("/v1/stats", get(stats))
        .route(
            "/v1/sessions",
            get(list_sessions)
                .post(create_session)
                .layer(DefaultBodyLimit::max(CREATE_BODY_LIMIT)),
        )
        .route("/v1/sessions/{id}", get(get_session).delete(close_session))
        .route(
            "/v1/sessions/{id}/exec",
            post(exec_command).layer(DefaultBodyLimit::max(exec_body_limit)),
        )
        .route("/v1/sessions/{id}/activity", get(session_activity))
        .merge(files::routes(&service))
        .merge(processes::routes(&service))
        .route("/metrics", get(prometheus))
        .route_layer(middleware::from_fn_with_state(
            service.clone(),
            require_token,
        ));
    Router::new()
        .route(
            "/healthz",
            get(|| async { Json(serde_json::json!({"status": "ok"})) }),
        )
        .merge(api)
        .fallback(|| async { ApiError::NotFound("no such route; the API is under /v1".into()) })
        .route_layer(middleware::from_fn_with_state(
            service.inner.metrics.clone(),
            metrics::track,
        ))
        .with_state(service)
}

/// Serves the API on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Service,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app(service))
        .with_graceful_shutdown(shutdown)
        .await
}

async fn require_token(State(service): State<Service>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or("");
    let expected = service.inner.token.as_bytes();
    // Compared in constant time so the answer's timing says nothing about the token.
    if bool::from(presented.as_bytes().ct_eq(expected)) {
        next.run(request).await
    } else {
        ApiError::Unauthorized.into_response()
    }
}

async fn list_runtimes(State(service): State<Service>) -> Json<RuntimeList> {
    let config = service.config();
    Json(RuntimeList {
        default_runtime: config.default_runtime.clone(),
        runtimes: config.runtimes.values().cloned().collect(),
    })
}

async fn policy(State(service): State<Service>) -> Json<sandboxd_api::Policy> {
    Json(service.config().policy.clone())
}

async fn config_in_force(State(service): State<Service>) -> Json<sandboxd_api::ConfigView> {
    Json(service.config().view())
}

async fn stats(State(service): State<Service>) -> Json<Stats> {
    Json(service.stats().await)
}

async fn prometheus(State(service): State<Service>) -> Response {
    let stats = service.stats().await;
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        service.inner.metrics.render(&stats),
    )
        .into_response()
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

async fn create_session(
    State(service): State<Service>,
    actor: Actor,
    body: Bytes,
) -> Result<(StatusCode, Json<SessionInfo>), ApiError> {
    let request = parse_create(&body)?;
    let config = service.config();
    let alias = request
        .runtime
        .unwrap_or_else(|| config.default_runtime.clone());
    let runtime = config.runtime(&alias).ok_or_else(|| {
        ApiError::bad_request(
            "unknown_runtime",
            format!(
                "runtime \"{alias}\" is not on the allowlist; allowed: {} (GET /v1/runtimes shows their limits)",
                config.runtime_names()
            ),
        )
    })?;
    let image = match (&runtime.image, &runtime.recipe) {
        (Some(image), _) => image.clone(),
        (None, recipe) => {
            return Err(ApiError::RuntimeUnavailable(format!(
                "runtime \"{alias}\" is built from the recipe \"{}\", and building recipes on first use is not available in this version; the operator can build an image and name it with `image` in the runtime's config",
                recipe.as_deref().unwrap_or_default()
            )))
        }
    };
    let reservation = service.sessions().reserve()?;
    let id = sessions::new_session_id();
    let spec = SandboxSpec {
        session_id: id.clone(),
        runtime: alias.clone(),
        image,
        limits: runtime.limits.clone(),
    };
    let started = Instant::now();
    let sandbox = service.backend().create(&spec).await?;
    let now = OffsetDateTime::now_utc();
    let session = Session {
        id,
        runtime: alias,
        tenant: request.tenant,
        labels: request.labels,
        created_at: now,
        last_activity: Instant::now(),
        last_activity_at: now,
        sandbox,
        ended: None,
    };
    tracing::info!(session = %session.id, runtime = %session.runtime, "session opened");
    service.record(
        &session.id,
        &actor,
        "open",
        &session.runtime,
        Outcome::ok(started.elapsed().as_millis() as u64),
    );
    let info = service.info(&session).await;
    service.sessions().insert(reservation, session);
    Ok((StatusCode::CREATED, Json(info)))
}

async fn list_sessions(State(service): State<Service>) -> Json<SessionList> {
    let sessions = service.sessions().list();
    let infos = join_all(sessions.iter().map(|s| service.info(s))).await;
    Json(SessionList { sessions: infos })
}

async fn get_session(
    State(service): State<Service>,
    Path(id): Path<String>,
) -> Result<Json<SessionInfo>, ApiError> {
    let session = service.sessions().get(&id)?;
    Ok(Json(service.info(&session).await))
}

async fn close_session(
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

async fn exec_command(
    State(service): State<Service>,
    Path(id): Path<String>,
    actor: Actor,
    body: Bytes,
) -> Result<Json<ExecResult>, ApiError> {
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
    let started = Instant::now();
    service.sessions().touch(&id);
    let result = match service.backend().agent(&session.sandbox).await {
        Ok(stream) => exec::run(stream, &planned, stdin).await,
        Err(e) => Err(e.into()),
    };
    service.sessions().touch(&id);
    let elapsed = started.elapsed().as_millis() as u64;
    let outcome = match &result {
        Ok(r) if r.timed_out => Outcome::failed(elapsed, "timed out").with_exit_code(r.exit_code),
        Ok(r) if r.oom_killed => {
            Outcome::failed(elapsed, "killed: out of memory").with_exit_code(r.exit_code)
        }
        Ok(r) => Outcome::ok(elapsed).with_exit_code(r.exit_code),
        Err(e) => Outcome::failed(elapsed, e.to_string()),
    };
    service.record(
        &id,
        &actor,
        "exec",
        &activity::program_name(&planned.argv),
        outcome,
    );
    Ok(Json(result?))
}

async fn session_activity(
    State(service): State<Service>,
    Path(id): Path<String>,
) -> Result<Json<sandboxd_api::ActivityList>, ApiError> {
    service.sessions().get(&id)?;
    Ok(Json(sandboxd_api::ActivityList {
        entries: service.inner.activity.entries(&id),
    }))
}
