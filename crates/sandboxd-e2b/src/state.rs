//! What the E2B face's handlers share (the core and the polled directory watchers), the envd
//! version it reports, and the client's address as the listener saw it.

use crate::watchers;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use sandboxd_core::Core;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

/// The envd version reported: the SDKs enable by it what this face implements (stdin
/// closing 0.5.2, octet-stream uploads 0.5.7), and refuse themselves what it does not (file
/// metadata 0.6.2, watch events with entries 0.6.3).
pub const ENVD_VERSION: &str = "0.5.7";

/// What the handlers share.
#[derive(Clone)]
pub struct Face {
    pub(crate) core: Core,
    pub(crate) watchers: watchers::Watchers,
}

/// The client's address, for the core's count of failed authentications.
pub struct ClientAddress(pub(crate) Option<IpAddr>);

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
