//! A sandbox's own servers through the face (`get_host(port)`, or `E2b-Sandbox-Port`): the
//! request is authenticated by the sandbox's access token, as E2B's sandboxes that refuse
//! public traffic do (`X-Access-Token` with the `envdAccessToken`, or E2B's
//! `E2b-Traffic-Access-Token` with the same), stripped of it and of the routing headers, and
//! handed to the service's port proxy as a [`PortRequest`]. A browser without the token uses
//! a share link instead.

use crate::errors::E2bError;
use crate::naming::{ACCESS_TOKEN_HEADERS, SANDBOX_ID_HEADER, SANDBOX_PORT_HEADER};
use crate::routing::{SandboxId, SandboxPort};
use crate::state::ClientAddress;
use crate::state::Face;
use axum::extract::{Request, State};
use axum::response::IntoResponse;
use axum::{Extension, Router};
use sandboxd_core::{Caller, Interface};
use tower::ServiceExt;

/// A request for port `port` of session `session_id`, as `caller`, that the face has
/// authenticated: what the service's port proxy serves.
#[derive(Clone)]
pub struct PortRequest {
    pub caller: Caller,
    pub session_id: String,
    pub port: u16,
}

/// The router for a sandbox's own ports, handing each authenticated request to `proxy`.
pub fn router(face: Face, proxy: Router) -> Router {
    Router::new()
        .fallback(
            move |State(face): State<Face>,
                  Extension(sandbox): Extension<SandboxId>,
                  Extension(SandboxPort(port)): Extension<SandboxPort>,
                  address: ClientAddress,
                  mut request: Request| {
                let proxy = proxy.clone();
                async move {
                    let headers = request.headers_mut();
                    let token = ACCESS_TOKEN_HEADERS
                        .iter()
                        .find_map(|name| headers.get(*name).and_then(|v| v.to_str().ok()))
                        .unwrap_or("")
                        .to_string();
                    for name in ACCESS_TOKEN_HEADERS
                        .into_iter()
                        .chain([SANDBOX_ID_HEADER, SANDBOX_PORT_HEADER])
                    {
                        headers.remove(name);
                    }
                    let principal = match face.core.authenticate_session_token(
                        &sandbox.0,
                        &token,
                        address.0,
                    ) {
                        Ok(principal) => principal,
                        Err(sandboxd_core::Error::Unauthorized) => {
                            return E2bError::unauthenticated(format!(
                                "port {port} of sandbox {} needs its access token in X-Access-Token or E2b-Traffic-Access-Token (the envdAccessToken its create or connect answered); for a browser, make a share link",
                                sandbox.0
                            ))
                            .into_http();
                        }
                        Err(other) => return E2bError::from(other).into_http(),
                    };
                    request.extensions_mut().insert(PortRequest {
                        caller: Caller::new(principal, Interface::E2b),
                        session_id: sandbox.0,
                        port,
                    });
                    match proxy.oneshot(request).await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    }
                    .into_response()
                }
            },
        )
        .with_state(face)
}
