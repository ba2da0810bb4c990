//! The sandboxd HTTP service: the API under `/v1`, `/healthz` and `/metrics`.
//!
//! [`Service`] holds the config, the backend and the sessions; [`app`] builds the router from
//! it; [`serve`] runs it on a listener until the shutdown future completes. The binary only
//! parses flags and calls these.

mod activity;
mod auth;
mod dashboard;
mod engine;
mod error;
mod exec;
mod files;
mod images;
mod maintenance;
mod metrics;
mod openapi;
mod origin;
mod pool;
mod processes;
mod routes;
mod sessions;

pub use activity::{Actor, Outcome, CLIENT_HEADER};
pub use error::ApiError;
pub use maintenance::{restore, RestoreReport};

use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::get;
use axum::{Json, Router};
use futures_util::future::join_all;
use metrics::Metrics;
use sandboxd_api::{ActivityEntry, SessionInfo, Stats};
use sandboxd_backend::Backend;
use sandboxd_config::Config;
use sandboxd_store::Store;
use sessions::{Session, Sessions};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use time::OffsetDateTime;
use utoipa::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

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
    pools: pool::Pools,
    failed_auth: auth::FailedAttempts,
    images: images::Images,
    metrics: Metrics,
    /// What the backend said about its engine at start (`GET /v1/engine`).
    engine: std::sync::OnceLock<serde_json::Value>,
}

impl Service {
    pub fn new(
        config: Config,
        token: String,
        backend: Arc<dyn Backend>,
        store: Arc<Store>,
    ) -> Service {
        let sessions = Sessions::new(store, config.max_sessions);
        Service {
            inner: Arc::new(Inner {
                config,
                token,
                backend,
                sessions,
                pools: pool::Pools::default(),
                failed_auth: auth::FailedAttempts::default(),
                images: images::Images::default(),
                metrics: Metrics::default(),
                engine: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Keeps what the backend reported about its engine, for `GET /v1/engine`; the first
    /// report set stays.
    pub fn set_engine_report(&self, report: serde_json::Value) {
        let _ = self.inner.engine.set(report);
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

    fn pools(&self) -> &pool::Pools {
        &self.inner.pools
    }

    fn images(&self) -> &images::Images {
        &self.inner.images
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

    /// The figures across the sessions a caller may see: all of them, or one tenant's.
    async fn stats(&self, tenant: Option<&str>) -> Stats {
        let running: Vec<Session> = self
            .sessions()
            .running()
            .into_iter()
            .filter(|s| tenant.is_none() || s.tenant.as_deref() == tenant)
            .collect();
        let usages = join_all(running.iter().map(|s| self.backend().usage(&s.sandbox))).await;
        let (memory_bytes, processes) = usages
            .into_iter()
            .flatten()
            .fold((0, 0), |(m, p), u| (m + u.memory_bytes, p + u.processes));
        Stats {
            sessions: running.len() as u32,
            pooled: self.pools().count(),
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
        let entry = ActivityEntry {
            at: sessions::rfc3339(OffsetDateTime::now_utc()),
            principal: actor.principal.clone(),
            interface: actor.interface.clone(),
            action: action.to_string(),
            target: target.to_string(),
            status: outcome.status,
            exit_code: outcome.exit_code,
            bytes: outcome.bytes,
            duration_ms: outcome.duration_ms,
            error: outcome.error,
        };
        if let Err(e) = self.sessions().store().record_activity(session_id, &entry) {
            tracing::error!(session = session_id, action, error = %e, "cannot write the activity log");
        }
    }
}

/// The router with every route, the token check and request metrics. `address` is where the
/// service listens: the MCP endpoint at `/mcp` forwards its tool calls to the API there.
pub fn app(service: Service, address: SocketAddr) -> Router {
    let exec_body_limit = usize::try_from(service.config().policy.max_upload_bytes)
        .unwrap_or(usize::MAX)
        .saturating_add(1 << 20);
    // Each annotated handler is routed at the path its annotation documents.
    let (api, document) = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(routes::list_runtimes))
        .routes(routes!(images::build_runtime))
        .routes(routes!(routes::policy))
        .routes(routes!(routes::config_in_force))
        .routes(routes!(engine::engine_report))
        .routes(routes!(routes::stats))
        .routes(
            routes!(routes::list_sessions, routes::create_session)
                .layer(DefaultBodyLimit::max(routes::CREATE_BODY_LIMIT)),
        )
        .routes(routes!(routes::get_session, routes::close_session))
        .routes(routes!(routes::exec_command).layer(DefaultBodyLimit::max(exec_body_limit)))
        .routes(routes!(routes::session_activity))
        .merge(files::routes(&service))
        .merge(processes::routes(&service))
        .routes(routes!(routes::prometheus))
        .split_for_parts();
    let api = api
        .route("/v1/openapi.json", openapi::serve(document))
        .route_service("/mcp", sandboxd_mcp::http_service(address))
        .route_layer(middleware::from_fn_with_state(
            service.clone(),
            auth::tenant_scope,
        ))
        .route_layer(middleware::from_fn_with_state(
            service.clone(),
            auth::require_token,
        ));
    Router::new()
        .route(
            "/healthz",
            get(|| async { Json(serde_json::json!({"status": "ok"})) }),
        )
        .merge(api)
        .merge(dashboard::routes())
        .fallback(|| async { ApiError::NotFound("no such route; the API is under /v1".into()) })
        .route_layer(middleware::from_fn_with_state(
            service.inner.metrics.clone(),
            metrics::track,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::new(origin::Guard::from_env(address)),
            origin::guard,
        ))
        .with_state(service)
}

/// Takes back the sessions of an earlier run, then serves the API on `listener` until
/// `shutdown` completes, expiring sessions and noticing vanished sandboxes meanwhile.
/// Sandboxes stay up when the service stops, so a restart loses nothing.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Service,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let maintenance = tokio::spawn(maintenance::run(service.clone()));
    let address = listener.local_addr()?;
    let app = app(service.clone(), address);
    // Client addresses, for rate-limiting failed authentication per address.
    let result = axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await;
    maintenance.abort();
    // Pooled sandboxes belong to no session: remove them rather than leave them to the next start.
    let pooled = service.pools().drain();
    futures_util::future::join_all(pooled.iter().map(|p| service.backend().destroy(&p.sandbox)))
        .await;
    result
}
