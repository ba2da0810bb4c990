//! The E2B face's route table: the control plane under `/`, and each sandbox's envd and ports
//! reached by host name.

use crate::control;
use crate::envd;
use crate::files;
use crate::filesystem;
use crate::interpreter;
use crate::listing;
use crate::naming;
use crate::network;
use crate::pause;
use crate::ports;
use crate::process;
use crate::routing;
use crate::snapshots;
use crate::state::Face;
use crate::volume_content;
use crate::volumes;
use crate::watchers;
use axum::extract::DefaultBodyLimit;
use axum::routing::{any, delete, get, post, put};
use axum::Router;
use sandboxd_core::Core;

/// The E2B face, answering what it recognises and handing everything else to `others`; a
/// request for a sandbox's own port goes to `port_proxy` as a [`PortRequest`](crate::ports::PortRequest).
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
        .route("/volumes", post(volumes::create).get(volumes::list))
        .route(
            "/volumes/{id}",
            get(volumes::get_one).delete(volumes::delete),
        )
        .route("/volumes/{id}/{*rest}", any(control::unsupported))
        .route(
            "/volumecontent/{id}/path",
            get(volume_content::get_path)
                .delete(volume_content::delete_path)
                .patch(volume_content::patch_path),
        )
        .route(
            "/volumecontent/{id}/dir",
            get(volume_content::list_dir).post(volume_content::make_dir),
        )
        .route(
            "/volumecontent/{id}/file",
            // Streamed to the volume's file, capped by the core.
            get(volume_content::read_file)
                .put(volume_content::write_file)
                .layer(DefaultBodyLimit::disable()),
        )
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
