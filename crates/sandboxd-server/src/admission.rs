//! Requests in progress, shared out so that no caller can take the service from the others:
//! each tenant, and each client address without a token, may have at most
//! `policy.max_requests_per_caller` in progress, and all of them together leave
//! `policy.reserved_connections` of `policy.max_connections` to the service token (the
//! administrator, the dashboard). A request holds its place until its answer has been sent
//! whole, so a long-lived stream (events, process output, a watch) counts for as long as it
//! lasts.
//!
//! Who a request is comes from its credential without checking it here (the routes do): a
//! bearer token or `X-API-Key`, else a sandbox's access token with the sandbox it names.
//! A wrong credential counts against the client's address. The dashboard's page and files and
//! `/healthz`, answered from memory at once, take no place: no flood keeps the dashboard from
//! loading.

use crate::error::ApiError;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use sandboxd_core::{Core, Error, Principal};
use sandboxd_e2b::{ACCESS_TOKEN_HEADERS, SANDBOX_ID_HEADER};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What a refused client is told to wait, in seconds.
const RETRY_AFTER_SECS: &str = "1";

/// Whose share a request takes.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Claimant {
    Tenant(String),
    Address(Option<IpAddr>),
}

impl Claimant {
    fn describe(&self) -> String {
        match self {
            Claimant::Tenant(name) => format!("tenant {name}"),
            Claimant::Address(Some(address)) => format!("client address {address}"),
            Claimant::Address(None) => "this client".into(),
        }
    }
}

/// The requests in progress, by claimant, and the places all but the administrator share.
pub struct Admission {
    core: Core,
    /// The domains whose hosts are sandboxes' (share links, E2B's `PORT-ID.DOMAIN`), where no
    /// path is the service's own.
    sandbox_domains: Vec<String>,
    per_caller: u32,
    shared: Arc<Semaphore>,
    shared_total: u32,
    in_progress: Mutex<HashMap<Claimant, u32>>,
}

impl Admission {
    pub fn new(core: Core) -> Arc<Admission> {
        let policy = &core.config().policy;
        let shared_total = policy
            .max_connections
            .saturating_sub(policy.reserved_connections);
        let config = core.config();
        let sandbox_domains = [&config.ports.share_domain, &config.e2b.domain]
            .into_iter()
            .flatten()
            .map(|domain| format!(".{}", domain.to_ascii_lowercase()))
            .collect();
        Arc::new(Admission {
            sandbox_domains,
            per_caller: policy.max_requests_per_caller,
            shared: Arc::new(Semaphore::new(shared_total as usize)),
            shared_total,
            in_progress: Mutex::new(HashMap::new()),
            core,
        })
    }

    /// Whether `request` is for the dashboard's page or files or `/healthz` of the service
    /// itself (not a sandbox's server under one of its domains): answered at once.
    fn answered_at_once(&self, request: &Request) -> bool {
        let path = request.uri().path();
        let static_path = path == "/" || path == "/healthz" || path.starts_with("/assets/");
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        matches!(*request.method(), Method::GET | Method::HEAD)
            && static_path
            && !request.headers().contains_key(SANDBOX_ID_HEADER)
            && !self
                .sandbox_domains
                .iter()
                .any(|domain| name.ends_with(domain.as_str()))
    }

    fn claimant(&self, headers: &HeaderMap, address: Option<IpAddr>) -> Option<Claimant> {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let bearer = text(header::AUTHORIZATION.as_str())
            .and_then(|value| value.strip_prefix("Bearer "))
            .or_else(|| text("x-api-key"));
        let sandbox = text(SANDBOX_ID_HEADER);
        let access = ACCESS_TOKEN_HEADERS.iter().find_map(|name| text(name));
        match self.core.claimant(bearer, sandbox.zip(access)) {
            Some(Principal::Admin) => None,
            Some(Principal::Tenant(name)) => Some(Claimant::Tenant(name)),
            None => Some(Claimant::Address(address)),
        }
    }

    /// A place for one request of `claimant`, or why there is none.
    fn take(self: &Arc<Self>, claimant: Claimant) -> Result<Place, Error> {
        let shared = self.shared.clone().try_acquire_owned().map_err(|_| {
            Error::LimitReached {
                code: "too_many_requests",
                message: format!(
                    "the service has {} requests of tenants and anonymous clients in progress (policy.max_connections less policy.reserved_connections); try again shortly",
                    self.shared_total
                ),
            }
        })?;
        let mut in_progress = self.lock();
        let count = in_progress.entry(claimant.clone()).or_insert(0);
        if *count >= self.per_caller {
            return Err(Error::LimitReached {
                code: "too_many_requests",
                message: format!(
                    "{} has {} requests in progress (policy.max_requests_per_caller), streams included; end some (event, process or watch streams) or try again when they finish",
                    claimant.describe(),
                    self.per_caller
                ),
            });
        }
        *count += 1;
        Ok(Place {
            admission: self.clone(),
            claimant,
            _shared: shared,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Claimant, u32>> {
        self.in_progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// One request's place, given back when its answer has gone out (or was dropped).
struct Place {
    admission: Arc<Admission>,
    claimant: Claimant,
    _shared: OwnedSemaphorePermit,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut in_progress = self.admission.lock();
        if let Some(count) = in_progress.get_mut(&self.claimant) {
            *count -= 1;
            if *count == 0 {
                in_progress.remove(&self.claimant);
            }
        }
    }
}

/// Lets a request in if its claimant has a place, and holds the place until the answer's
/// body has been sent or dropped; the service token's requests are always let in.
pub async fn admit(
    State(admission): State<Arc<Admission>>,
    request: Request,
    next: Next,
) -> Response {
    let address = crate::extract::client_address(&request);
    if admission.answered_at_once(&request) {
        return next.run(request).await;
    }
    let Some(claimant) = admission.claimant(request.headers(), address) else {
        return next.run(request).await;
    };
    let place = match admission.take(claimant) {
        Ok(place) => place,
        Err(error) => {
            let mut refused = ApiError(error).into_response();
            refused.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(RETRY_AFTER_SECS),
            );
            return refused;
        }
    };
    let response = next.run(request).await;
    // The place goes with the body: a stream keeps it until it ends.
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _held = &place;
            frame
        }))
    })
}
