//! What every envd call shares: who is calling, by the sandbox's own access token (the
//! `envdAccessToken` create answered), and as which user.

use crate::call::SandboxCall;
use crate::errors::{Code, E2bError};
use crate::routing::SandboxId;
use crate::state::ClientAddress;
use crate::state::Face;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use base64::Engine;
use sandboxd_core::{Caller, Interface, HOME_DIR};

const ACCESS_TOKEN_HEADER: &str = "x-access-token";
/// The user E2B runs commands as by default; here, every command runs as the sandbox's one
/// unprivileged user, whatever it is called.
const DEFAULT_USER: &str = "user";

/// Checks the access token of the sandbox the request names, and the user it asks for.
pub fn authenticate(
    face: &Face,
    sandbox: &SandboxId,
    headers: &HeaderMap,
    address: &ClientAddress,
) -> Result<SandboxCall, E2bError> {
    let token = headers
        .get(ACCESS_TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let principal = face
        .core
        .authenticate_session_token(&sandbox.0, token, address.0)
        .map_err(|e| match e {
            sandboxd_core::Error::Unauthorized => E2bError::unauthenticated(format!(
                "missing or wrong X-Access-Token for sandbox {}: use the envdAccessToken its create or connect answered",
                sandbox.0
            )),
            other => other.into(),
        })?;
    check_user(headers)?;
    Ok(SandboxCall {
        caller: Caller::new(principal, Interface::E2b),
        id: sandbox.0.clone(),
    })
}

/// A path as envd resolves it for its user: `~` is the home, `/home/user`, and a relative
/// path starts there (the sandbox's working directory is sandboxd's own faces'). The core
/// answers it absolute, `.` and `..` resolved by name, as envd does.
pub fn user_path(path: &str) -> Result<String, E2bError> {
    match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => Ok(format!("{HOME_DIR}{rest}")),
        Some(_) => Err(E2bError::invalid(format!(
            "{path}: only the sandbox user's own home (~) can be expanded"
        ))),
        None if path.starts_with('/') => Ok(path.to_string()),
        None => Ok(format!("{HOME_DIR}/{path}")),
    }
}

/// E2B names the user in `Authorization: Basic base64(user:)`; only the default one exists.
fn check_user(headers: &HeaderMap) -> Result<(), E2bError> {
    let Some(basic) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
    else {
        return Ok(());
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_default();
    let user = decoded.split(':').next().unwrap_or("");
    if user.is_empty() || user == DEFAULT_USER {
        return Ok(());
    }
    Err(E2bError::new(
        Code::PermissionDenied,
        StatusCode::FORBIDDEN,
        format!(
            "user \"{user}\" is not available: sandboxd runs everything in a sandbox as its one unprivileged user (E2B's \"{DEFAULT_USER}\"); leave user unset"
        ),
    ))
}

/// `GET /health`: 204 while the sandbox runs; 502 with "was not found" once it has ended,
/// which the SDKs read as the sandbox gone.
pub async fn health(
    State(face): State<Face>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    headers: HeaderMap,
) -> Response {
    let result = async {
        let call = authenticate(&face, &sandbox, &headers, &address)?;
        let info = face.core.get_session(&call.caller, &call.id).await?;
        match info.state {
            sandboxd_api::SessionState::Running => Ok(()),
            _ => Err(E2bError::new(
                Code::Unavailable,
                StatusCode::BAD_GATEWAY,
                format!("sandbox {} was not found: it has ended", call.id),
            )),
        }
    }
    .await;
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => e.into_http(),
    }
}

/// Any other envd route.
pub async fn unknown(uri: axum::http::Uri) -> Response {
    E2bError::unsupported(&format!("envd's {}", uri.path())).into_http()
}
