//! Who is calling. The service token is the administrator's; each tenant of the config has a
//! token of its own and sees, lists and touches only its own sessions (another tenant's session
//! is "not found", so ids cannot be probed). Failed authentication is answered identically
//! whatever was wrong, and rate-limited per client address.

use crate::error::ApiError;
use crate::Service;
use axum::extract::{ConnectInfo, FromRequestParts, RawPathParams, Request, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Failed attempts are counted per address in windows of this length
/// (`policy.auth_failures_per_minute` per window).
const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// Addresses tracked at most; the oldest windows are dropped first.
const MAX_TRACKED: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    Admin,
    Tenant(String),
}

impl Principal {
    /// How the activity log names it.
    pub fn name(&self) -> String {
        match self {
            Principal::Admin => "admin".into(),
            Principal::Tenant(name) => format!("tenant:{name}"),
        }
    }

    pub fn tenant(&self) -> Option<&str> {
        match self {
            Principal::Admin => None,
            Principal::Tenant(name) => Some(name),
        }
    }

    /// Refuses what only the administrator may see or do.
    pub fn require_admin(&self, what: &str) -> Result<(), ApiError> {
        match self {
            Principal::Admin => Ok(()),
            Principal::Tenant(_) => Err(ApiError::Forbidden {
                code: "admin_only",
                message: format!("{what} needs the service token; a tenant token cannot use it"),
            }),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Principal, ApiError> {
        parts
            .extensions
            .get::<Principal>()
            .cloned()
            .ok_or(ApiError::Unauthorized)
    }
}

/// Failed attempts per client address, in fixed windows.
#[derive(Default)]
pub struct FailedAttempts {
    by_address: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

impl FailedAttempts {
    /// How long the address must wait, if it made too many failed attempts.
    fn wait(&self, address: IpAddr, allowed: u32) -> Option<Duration> {
        let by_address = self.by_address.lock().expect("auth lock");
        let (failures, since) = by_address.get(&address)?;
        let remaining = FAILURE_WINDOW.checked_sub(since.elapsed())?;
        (*failures >= allowed).then_some(remaining)
    }

    fn note_failure(&self, address: IpAddr) {
        let mut by_address = self.by_address.lock().expect("auth lock");
        if by_address.len() >= MAX_TRACKED {
            by_address.retain(|_, (_, since)| since.elapsed() < FAILURE_WINDOW);
        }
        if by_address.len() >= MAX_TRACKED {
            return;
        }
        let entry = by_address.entry(address).or_insert((0, Instant::now()));
        if entry.1.elapsed() >= FAILURE_WINDOW {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
    }
}

pub async fn require_token(
    State(service): State<Service>,
    mut request: Request,
    next: Next,
) -> Response {
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    let failed = &service.inner.failed_auth;
    let allowed = service.config().policy.auth_failures_per_minute;
    if let Some(wait) = address.and_then(|a| failed.wait(a, allowed)) {
        return ApiError::LimitReached {
            code: "too_many_attempts",
            message: format!(
                "too many failed authentication attempts from this address; try again in {} s",
                wait.as_secs().max(1)
            ),
        }
        .into_response();
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or("");
    // Compared in constant time so the answer's timing says nothing about the token.
    let principal = if bool::from(presented.as_bytes().ct_eq(service.inner.token.as_bytes())) {
        Some(Principal::Admin)
    } else {
        service
            .config()
            .tenant_for(presented)
            .map(|tenant| Principal::Tenant(tenant.name.clone()))
    };
    match principal {
        Some(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        None => {
            if let Some(address) = address {
                failed.note_failure(address);
            }
            ApiError::Unauthorized.into_response()
        }
    }
}

/// A tenant reaches only its own sessions: any route naming a session id (`{id}`) of another
/// tenant, or of none, answers "not found", exactly as for an id that does not exist.
pub async fn tenant_scope(
    State(service): State<Service>,
    params: RawPathParams,
    request: Request,
    next: Next,
) -> Response {
    let tenant = request
        .extensions()
        .get::<Principal>()
        .and_then(Principal::tenant);
    let session_id = params
        .iter()
        .find(|(name, _)| *name == "id")
        .map(|(_, id)| id);
    if let (Some(tenant), Some(id)) = (tenant, session_id) {
        let owned = service
            .sessions()
            .get(id)
            .is_ok_and(|session| session.tenant.as_deref() == Some(tenant));
        if !owned {
            return crate::sessions::not_found(id).into_response();
        }
    }
    next.run(request).await
}
