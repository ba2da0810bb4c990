//! The service-wide budget of request bodies held in memory (`policy.max_body_bytes_in_flight`).
//!
//! Every buffered body takes its share before it is read: its whole length when hyper knows it
//! (from `Content-Length`), otherwise as the buffer grows. The share is held until the handler
//! has answered, since the parsed request still holds the bytes, and a body that cannot get it
//! within [`BUDGET_WAIT`] is refused with 503 `service_busy` instead of queueing without end. Streamed
//! uploads (`PUT .../files/content`) hold at most a chunk at a time and take no share.

use crate::error::ApiError;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, RequestExt};
use http_body_util::{BodyExt, LengthLimitError};
use sandboxd_api::{ErrorBody, ErrorDetail};
use sandboxd_core::Error;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a body may wait for its share before the request is refused as busy.
const BUDGET_WAIT: Duration = Duration::from_secs(3);
/// How long a buffered body may take to arrive whole (a slow sender holds its share).
const BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Permits count KiB, so that a budget of up to 4 TiB fits the semaphore's `u32` requests.
const PERMIT_BYTES: u64 = 1024;

/// The budget: a semaphore of KiB.
pub struct Budget {
    permits: Arc<Semaphore>,
    total: u32,
}

impl Budget {
    pub fn new(bytes: u64) -> Arc<Budget> {
        let total = u32::try_from(bytes.div_ceil(PERMIT_BYTES)).unwrap_or(u32::MAX);
        Arc::new(Budget {
            permits: Arc::new(Semaphore::new(total as usize)),
            total,
        })
    }
}

/// One request's share, shared between the layer that releases it and the extractor that
/// takes it.
#[derive(Clone)]
struct Share {
    budget: Arc<Budget>,
    held: Arc<Mutex<Option<OwnedSemaphorePermit>>>,
}

impl Share {
    fn held(&self) -> u32 {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.as_ref()
            .map_or(0, |p| u32::try_from(p.num_permits()).unwrap_or(u32::MAX))
    }

    /// Grows the share to cover `bytes` in all.
    async fn cover(&self, bytes: usize) -> Result<(), BodyError> {
        let budget = &self.budget;
        let wanted = u32::try_from((bytes as u64).div_ceil(PERMIT_BYTES)).unwrap_or(u32::MAX);
        if wanted > budget.total {
            return Err(BodyError::Api(ApiError(Error::PayloadTooLarge(format!(
                "a body of {bytes} bytes is over the service's budget for request bodies of {} MiB (policy.max_body_bytes_in_flight); send less, or a file by upload",
                budget.total / 1024
            )))));
        }
        let more = wanted.saturating_sub(self.held());
        if more == 0 {
            return Ok(());
        }
        let acquire = budget.permits.clone().acquire_many_owned(more);
        let permit = match tokio::time::timeout(BUDGET_WAIT, acquire).await {
            Ok(Ok(permit)) => permit,
            // The semaphore is never closed; a timeout is the only way here.
            _ => {
                let busy = budget.total as usize - budget.permits.available_permits();
                return Err(BodyError::Busy(format!(
                    "the service holds {} MiB of request bodies (policy.max_body_bytes_in_flight is {} MiB); try again shortly",
                    busy / 1024,
                    budget.total / 1024
                )));
            }
        };
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        match held.as_mut() {
            Some(share) => share.merge(permit),
            None => *held = Some(permit),
        }
        Ok(())
    }
}

/// Gives each request an empty share, and releases it once the handler has answered.
pub async fn hold(State(budget): State<Arc<Budget>>, mut request: Request, next: Next) -> Response {
    let held = Arc::new(Mutex::new(None));
    request.extensions_mut().insert(Share {
        budget,
        held: held.clone(),
    });
    let response = next.run(request).await;
    drop(held);
    response
}

/// Why a body was not read.
pub enum BodyError {
    Api(ApiError),
    Busy(String),
    TimedOut,
}

impl From<ApiError> for BodyError {
    fn from(error: ApiError) -> BodyError {
        BodyError::Api(error)
    }
}

impl IntoResponse for BodyError {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            BodyError::Api(error) => return error.into_response(),
            BodyError::Busy(message) => (StatusCode::SERVICE_UNAVAILABLE, "service_busy", message),
            BodyError::TimedOut => (
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!(
                    "the request body did not arrive whole within {} s",
                    BODY_READ_TIMEOUT.as_secs()
                ),
            ),
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: code.to_string(),
                message,
                remedy: None,
            },
        };
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            tracing::warn!("request refused: the budget for request bodies is spent");
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// Reads a request's body whole, within the route's limit, the budget and the read timeout.
pub async fn read_body(request: Request) -> Result<Bytes, BodyError> {
    let share = request
        .extensions()
        .get::<Share>()
        .cloned()
        .expect("the router gives every request a share");
    // Hyper knows the length from Content-Length; chunked bodies have none.
    let declared = request.body().size_hint().exact();
    let body = request.into_limited_body();
    let limit = body.size_hint().upper();
    if let (Some(declared), Some(limit)) = (declared, limit) {
        if declared > limit {
            return Err(too_large(&format!(
                "the body of {declared} bytes is over this route's limit of {limit} bytes"
            )));
        }
    }
    let ceiling = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    tokio::time::timeout(BODY_READ_TIMEOUT, collect(body, declared, ceiling, &share))
        .await
        .map_err(|_| BodyError::TimedOut)?
}

/// Collects the body, growing the buffer (and the share with it) up to `ceiling` bytes.
async fn collect(
    mut body: Body,
    declared: Option<u64>,
    ceiling: usize,
    share: &Share,
) -> Result<Bytes, BodyError> {
    let budget = u64::from(share.budget.total) * PERMIT_BYTES;
    let ceiling = ceiling.min(usize::try_from(budget).unwrap_or(usize::MAX));
    let mut buffer = Vec::new();
    if let Some(declared) = declared {
        let declared = usize::try_from(declared).unwrap_or(usize::MAX);
        if let Err(refused) = share.cover(declared).await {
            return Err(drained(body, refused, ceiling).await);
        }
        buffer.reserve_exact(declared);
    }
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(read_error)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let needed = buffer.len().saturating_add(data.len());
        if needed > buffer.capacity() {
            // Doubling keeps copies few; the share covers the capacity, not just the length.
            let capacity = needed.max(buffer.capacity().saturating_mul(2).min(ceiling));
            if let Err(refused) = share.cover(capacity).await {
                return Err(drained(body, refused, ceiling).await);
            }
            buffer.reserve_exact(capacity - buffer.len());
        }
        buffer.extend_from_slice(&data);
    }
    Ok(Bytes::from(buffer))
}

/// `refused`, once the rest of a body refused as busy has been read and dropped (see
/// [`crate::linger`]): its client is still sending. Up to the route's limit, within the read
/// timeout; nothing is kept.
async fn drained(body: Body, refused: BodyError, ceiling: usize) -> BodyError {
    if matches!(refused, BodyError::Busy(_)) {
        crate::linger::drain(body, ceiling, BODY_READ_TIMEOUT).await;
    }
    refused
}

/// A body over the route's limit, or cut off.
fn read_error(error: axum::Error) -> BodyError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    // The chain is short (axum's error, hyper's, the cause); bounded all the same.
    for _ in 0..8 {
        let Some(current) = source else { break };
        if current.is::<LengthLimitError>() {
            return too_large("the body is over this route's limit");
        }
        source = current.source();
    }
    BodyError::Api(ApiError::bad_request(
        "invalid_request",
        format!("the request body could not be read: {error}"),
    ))
}

fn too_large(what: &str) -> BodyError {
    BodyError::Api(ApiError(Error::PayloadTooLarge(format!(
        "{what}; the policy caps bodies (GET /v1/policy)"
    ))))
}
