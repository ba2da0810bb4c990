//! What every control-plane route of the E2B face shares: the caller an `X-API-Key` stands
//! for, the open session it names, and the answers in E2B's shape.

use crate::errors::E2bError;
use crate::state::Face;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_api::{SessionInfo, SessionState};
use sandboxd_core::{Caller, Interface};
use serde_json::Value;

/// The caller an `X-API-Key` stands for; a handler taking it answers 401 without one.
pub struct ApiCaller(pub(crate) Caller);

impl FromRequestParts<Face> for ApiCaller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, face: &Face) -> Result<Self, Response> {
        let Ok(address) = crate::state::ClientAddress::from_request_parts(parts, face).await;
        let key = parts
            .headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        face.core
            .authenticate(key, address.0)
            .map(|principal| ApiCaller(Caller::new(principal, Interface::E2b)))
            .map_err(|e| match e {
                sandboxd_core::Error::Unauthorized => E2bError::unauthenticated(
                    "missing or wrong API key: set E2B_API_KEY to the service token or a tenant token (sandboxd e2b env prints it)",
                ),
                other => other.into(),
            })
            .map_err(E2bError::into_http)
    }
}

/// The session, if the caller may reach it and it is open (running or paused); an ended one
/// is "not found", as a killed sandbox is to E2B.
pub(crate) async fn existing(
    face: &Face,
    caller: &Caller,
    id: &str,
) -> Result<SessionInfo, E2bError> {
    let info = face.core.get_session(caller, id).await?;
    match info.state {
        SessionState::Running | SessionState::Paused => Ok(info),
        SessionState::Ended => Err(E2bError::sandbox_not_found(id)),
    }
}

pub(crate) fn done(result: Result<(), E2bError>) -> Response {
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => e.into_http(),
    }
}

pub(crate) fn answer(status: StatusCode, result: Result<Value, E2bError>) -> Response {
    match result {
        Ok(body) => (status, Json(body)).into_response(),
        Err(e) => e.into_http(),
    }
}
