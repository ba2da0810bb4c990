//! The E2B-compatible face of sandboxd: the control plane of E2B's API and the API of its
//! in-sandbox daemon (envd), so that the official E2B SDKs run unchanged against sandboxd.
//! Translation only: every call is one or a few operations of [`sandboxd_core::Core`], made
//! as interface `e2b`; sandboxes are sessions, commands background processes.
//!
//! One address serves both, routed per request: a request naming a sandbox (the SDKs'
//! `E2b-Sandbox-Id` header with `E2b-Sandbox-Port`, or a `PORT-SANDBOXID.DOMAIN` host when
//! `e2b.domain` is set) goes to envd for envd's port, to the sandbox's own server through the
//! service's port proxy for any other, and anything else on E2B's control-plane paths (or on `api.DOMAIN`) to the control
//! plane, and the rest to the service's own answer for unknown routes. A signed file URL
//! (`/files?signature=...`) goes to envd once its signature names the sandbox. Mounted as the
//! service's fallback, so it never shadows a route of sandboxd's own; a request naming a
//! sandbox is handed to it first ([`names_a_sandbox`]), as every path is the sandbox's.

mod caller;
mod connect;
mod control;
mod envd;
mod errors;
mod files;
mod filesystem;
mod interpreter;
mod listing;
mod naming;
mod network;
mod pause;
mod ports;
mod process;
mod routing;
mod signed;
mod snapshots;
mod watch_limits;
mod watchers;

use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequestParts};
use axum::http::request::Parts;
use axum::routing::{any, delete, get, post, put};
use axum::Router;
use sandboxd_core::Core;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

pub use naming::{ACCESS_TOKEN_HEADERS, SANDBOX_ID_HEADER};
pub use ports::PortRequest;
pub use routing::names_a_sandbox;

/// The envd version reported: the SDKs enable by it what this face implements (stdin
/// closing 0.5.2, octet-stream uploads 0.5.7), and refuse themselves what it does not (file
/// metadata 0.6.2, watch events with entries 0.6.3).
pub const ENVD_VERSION: &str = "0.5.7";

/// What the handlers share.
#[derive(Clone)]
pub struct Face {
    core: Core,
    watchers: watchers::Watchers,
}

/// The client's address, for the core's count of failed authentications.
pub struct ClientAddress(Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(ClientAddress(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|info| info.0.ip()),
        ))
    }
}

/// The E2B face, answering what it recognises and handing everything else to `others`; a
/// request for a sandbox's own port goes to `port_proxy` as a [`PortRequest`].
pub fn router(core: Core, others: Router, port_proxy: Router) -> Router {
    let face = Face {
        watchers: watchers::Watchers::new(core.clone()),
        core,
    };
    let control = Router::new()
        .route("/sandboxes", post(control::create).get(listing::list))
        .route("/v2/sandboxes", post(control::create).get(listing::list))
        .route(
            "/sandboxes/{id}",
            get(control::get_one).delete(control::kill),
        )
        .route("/sandboxes/{id}/timeout", post(control::set_timeout))
        .route("/sandboxes/{id}/connect", post(pause::connect))
        .route("/v2/sandboxes/{id}/connect", post(pause::connect))
        .route("/sandboxes/{id}/pause", post(pause::pause))
        .route("/sandboxes/{id}/resume", post(pause::resume))
        .route("/sandboxes/{id}/snapshots", post(snapshots::create))
        .route("/sandboxes/{id}/fork", post(snapshots::fork))
        .route("/sandboxes/{id}/network", put(network::update))
        .route("/sandboxes/{id}/{*rest}", any(control::unsupported))
        .route("/v2/sandboxes/{id}/{*rest}", any(control::unsupported))
        .route("/v3/{*rest}", any(control::unsupported))
        .route("/snapshots", get(snapshots::list))
        .route("/snapshots/{*rest}", any(control::unsupported))
        .route("/volumes", any(control::unsupported))
        .route("/volumes/{*rest}", any(control::unsupported))
        .route("/secrets", any(control::unsupported))
        .route("/secrets/{*rest}", any(control::unsupported))
        .route("/templates", any(control::unsupported))
        .route(
            "/templates/{id}",
            delete(snapshots::delete).fallback(control::unsupported),
        )
        .route("/templates/{id}/{*rest}", any(control::unsupported))
        .route("/v2/templates", any(control::unsupported))
        .route("/v2/templates/{*rest}", any(control::unsupported))
        .with_state(face.clone())
        .fallback_service(others);
    let envd = Router::new()
        .route("/health", get(envd::health))
        .route(
            "/files",
            // An upload is streamed to the sandbox file by file, each capped by the core.
            get(files::download)
                .post(files::upload)
                .layer(DefaultBodyLimit::disable()),
        )
        .route("/process.Process/{method}", post(process::call))
        .route("/filesystem.Filesystem/{method}", post(filesystem::call))
        .fallback(envd::unknown)
        .with_state(face.clone());
    let ports = ports::router(face.clone(), port_proxy);
    let served = vec![
        (naming::ENVD_PORT, envd),
        (interpreter::PORT, interpreter::router(face.clone())),
    ];
    routing::dispatch(face, control, served, ports)
}
