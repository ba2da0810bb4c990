//! The route table: every route of the REST API, MCP, the dashboard and the E2B face, with the
//! token check, the origin guard and request metrics; and the server that runs it.

use crate::admission;
use crate::auth;
use crate::connections;
use crate::dashboard;
use crate::error::ApiError;
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
    files, files_meta, pause, ports, processes, service, sessions, snapshots, stream, terminal,
    tickets,
};
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, State};
use axum::middleware;
use axum::routing::{get, on};
use axum::{Json, Router};
use sandboxd_core::{Core, Error};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;
use utoipa::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

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
    // Each annotated handler is routed at the path its annotation documents.
    let (api, document) = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(service::list_runtimes))
        .routes(routes!(service::build_runtime))
        .routes(routes!(service::policy))
        .routes(routes!(service::config_in_force))
        .routes(routes!(service::engine_report))
        .routes(routes!(service::stats))
        .routes(
            routes!(sessions::list_sessions, sessions::create_session)
                .layer(DefaultBodyLimit::max(sessions::CREATE_BODY_LIMIT)),
        )
        .routes(routes!(sessions::get_session, sessions::close_session))
        .routes(routes!(sessions::exec_command).layer(DefaultBodyLimit::max(exec_body_limit)))
        .routes(routes!(sessions::session_activity))
        .routes(routes!(files::list_files, files::delete_file))
        // The upload body is streamed, not collected: the core counts it.
        .routes(routes!(files::read_file, files::write_file))
        .routes(
            routes!(processes::list, processes::start, processes::kill_all)
                .layer(DefaultBodyLimit::max(processes::START_BODY_LIMIT)),
        )
        .routes(routes!(processes::get_one))
        .routes(routes!(stream::stream))
        .routes(routes!(processes::write_stdin).layer(DefaultBodyLimit::max(upload_limit)))
        .routes(routes!(processes::close_stdin))
        .routes(
            routes!(processes::signal).layer(DefaultBodyLimit::max(processes::CONTROL_BODY_LIMIT)),
        )
        .routes(
            routes!(processes::resize).layer(DefaultBodyLimit::max(processes::CONTROL_BODY_LIMIT)),
        )
        .routes(routes!(terminal::terminal))
        .routes(routes!(tickets::issue))
        .routes(routes!(service::prometheus))
        .routes(routes!(routes::audit::audit_log))
        .routes(routes!(pause::pause))
        .routes(routes!(pause::resume))
        // Streamed both ways, as file contents are: the agent counts the bytes.
        .routes(routes!(routes::archive::download, routes::archive::upload))
        .routes(routes!(snapshots::create).layer(DefaultBodyLimit::max(snapshots::BODY_LIMIT)))
        .routes(routes!(snapshots::list))
        .routes(routes!(snapshots::get_one, snapshots::delete))
        .routes(routes!(snapshots::fork).layer(DefaultBodyLimit::max(snapshots::BODY_LIMIT)))
        .routes(routes!(stream::run).layer(DefaultBodyLimit::max(processes::START_BODY_LIMIT)))
        .routes(routes!(routes::events::events))
        .routes(routes!(files_meta::stat))
        .routes(routes!(files_meta::watch))
        .routes(routes!(files_meta::make_dir).layer(DefaultBodyLimit::max(files_meta::BODY_LIMIT)))
        .routes(routes!(files_meta::move_path).layer(DefaultBodyLimit::max(files_meta::BODY_LIMIT)))
        .routes(routes!(ports::list_ports))
        .routes(routes!(ports::share).layer(DefaultBodyLimit::max(ports::SHARE_BODY_LIMIT)))
        .routes(routes!(ports::list_shares))
        .routes(routes!(ports::revoke_share))
        .routes(routes!(routes::tunnel::tunnel))
        .routes(
            routes!(routes::contexts::create, routes::contexts::list)
                .layer(DefaultBodyLimit::max(routes::contexts::BODY_LIMIT)),
        )
        .routes(routes!(routes::contexts::restart))
        .routes(routes!(routes::contexts::delete))
        .routes(
            routes!(routes::contexts::run)
                .layer(DefaultBodyLimit::max(routes::contexts::BODY_LIMIT)),
        )
        .routes(
            routes!(routes::contexts::code)
                .layer(DefaultBodyLimit::max(routes::contexts::BODY_LIMIT)),
        )
        .routes(
            routes!(routes::network::get_network, routes::network::set_network)
                .layer(DefaultBodyLimit::max(routes::network::BODY_LIMIT)),
        )
        .routes(
            routes!(routes::computer::act)
                .layer(DefaultBodyLimit::max(routes::computer::BODY_LIMIT)),
        )
        .routes(routes!(routes::computer::screenshot))
        .merge(routes::volumes::router())
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
        Router::new().fallback(|| async {
            ApiError(Error::NotFound(
                "no such route; the API is under /v1".into(),
            ))
        }),
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
        .route("/p/{capability}", get(ports::shared_root))
        .route(
            "/p/{capability}/",
            on(ports::proxied_methods(), ports::shared),
        )
        .route(
            "/p/{capability}/{*path}",
            on(ports::proxied_methods(), ports::shared),
        )
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
