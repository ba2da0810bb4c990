//! The route table: every route of the REST API, MCP, the dashboard and the E2B face, with the
//! token check, the origin guard and request metrics; and the server that runs it.

use crate::admission;
use crate::auth;
use crate::connections;
use crate::dashboard;
use crate::inflight;
use crate::linger;
use crate::mcp;
use crate::metrics;
use crate::metrics::Metrics;
use crate::openapi;
use crate::origin;
use crate::origin::Guard;
use crate::routes;
use crate::routes::{
    archive, audit, computer, computer_view, contexts, events, files, files_meta, network, pause,
    ports, processes, service, sessions, share_path, snapshots, stream, terminal, tickets, tunnel,
    volumes,
};
use crate::state::AppState;
use axum::extract::State;
use axum::middleware;
use axum::routing::{get, on};
use axum::{Json, Router};
use sandboxd_core::Core;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

/// The router with every route, the token check and request metrics, for a service listening
/// on `address` that also answers to the host names in `allowed_hosts`.
pub fn app(core: Core, address: SocketAddr, allowed_hosts: &[String]) -> Router {
    let guard = Guard::new(address, allowed_hosts.iter().map(String::as_str))
        .with_mcp_origins(&core.config().extra_allowed_origins)
        .allowing_subdomains_of(core.config().e2b.domain.as_deref())
        .allowing_subdomains_of(core.config().ports.share_domain.as_deref());
    let policy = &core.config().policy;
    let upload_limit = usize::try_from(policy.max_upload_bytes).unwrap_or(usize::MAX);
    let exec_body_limit = upload_limit.saturating_add(1 << 20);
    let budget = inflight::Budget::new(policy.max_body_bytes_in_flight);
    let state = AppState {
        core: core.clone(),
        metrics: Metrics::default(),
    };
    // Each routes file routes its annotated handlers at the paths their annotations document.
    let (api, document) = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(service::routes())
        .merge(sessions::routes(exec_body_limit))
        .merge(files::routes())
        .merge(processes::routes(upload_limit))
        .merge(stream::routes())
        .merge(terminal::routes())
        .merge(tickets::routes())
        .merge(audit::routes())
        .merge(pause::routes())
        .merge(archive::routes())
        .merge(snapshots::routes())
        .merge(events::routes())
        .merge(files_meta::routes())
        .merge(ports::routes())
        .merge(tunnel::routes())
        .merge(contexts::routes())
        .merge(network::routes())
        .merge(computer::routes())
        .merge(computer_view::routes())
        .merge(volumes::routes())
        .split_for_parts();
    let api = api
        .route("/v1/openapi.json", openapi::serve(document))
        // Any method, any path below the port: described in the document by hand.
        .route("/v1/sessions/{id}/ports/{port}", get(ports::to_root))
        .route(
            "/v1/sessions/{id}/ports/{port}/",
            on(ports::proxied_methods(), ports::proxy),
        )
        .route(
            "/v1/sessions/{id}/ports/{port}/{*path}",
            on(ports::proxied_methods(), ports::proxy),
        )
        .route_layer(middleware::from_fn_with_state(
            state.core.clone(),
            auth::require_token,
        ));
    let e2b = sandboxd_e2b::router(
        core.clone(),
        Router::new().fallback(share_path::no_route),
        Router::new()
            .fallback(ports::e2b_port)
            .with_state(state.clone()),
    );
    Router::new()
        .route(
            "/healthz",
            get(|| async { Json(serde_json::json!({"status": "ok"})) }),
        )
        .merge(api)
        .merge(mcp::routes(&core))
        // Share links carry their own capability instead of the token.
        .merge(share_path::routes())
        .merge(dashboard::routes())
        // The E2B-compatible API answers what none of these routes do (README, "Using the E2B
        // SDK"); what it does not recognise either gets the usual answer.
        .fallback_service(e2b.clone())
        .route_layer(middleware::from_fn_with_state(
            state.metrics.clone(),
            metrics::track,
        ))
        // A request naming an E2B sandbox is the sandbox's (its envd, its own server at `/`),
        // whatever the path: none of the service's routes may shadow it.
        .layer(middleware::from_fn_with_state(
            (e2b, core.config().e2b.domain.clone()),
            e2b_sandbox_first,
        ))
        // A share link's own host name is the link's, whatever the path.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            routes::share_host::route,
        ))
        .layer(middleware::from_fn_with_state(budget, inflight::hold))
        .layer(middleware::from_fn_with_state(
            admission::Admission::new(core.clone()),
            admission::admit,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::new(guard),
            origin::guard,
        ))
        .layer(middleware::from_fn(linger::drain_unread))
        .with_state(state)
}

/// Hands a request naming an E2B sandbox to the E2B face; any other goes on to the routes.
async fn e2b_sandbox_first(
    State((e2b, domain)): State<(Router, Option<String>)>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    if !sandboxd_e2b::names_a_sandbox(&request, domain.as_deref()) {
        return next.run(request).await;
    }
    match e2b.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// Serves the API on `listener` until `shutdown` completes, expiring sessions and noticing
/// vanished sandboxes meanwhile. A client must send a request's headers within
/// `header_timeout`. Sandboxes stay up when the service stops, so a restart loses nothing;
/// pooled ones belong to no session and are removed.
pub async fn serve(
    listener: tokio::net::TcpListener,
    core: Core,
    allowed_hosts: &[String],
    header_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let maintenance = tokio::spawn(core.clone().maintain());
    let app = app(core.clone(), listener.local_addr()?, allowed_hosts);
    let limit = core.config().policy.max_connections;
    let result = connections::run(listener, app, limit, header_timeout, shutdown).await;
    maintenance.abort();
    core.drain_pools().await;
    core.flush_activity();
    result
}
