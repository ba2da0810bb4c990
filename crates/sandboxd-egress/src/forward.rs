//! One request passed on to its host, counted and recorded, and the proxy's own answers: for
//! plain HTTP and for the intercepted TLS of secrets' hosts alike.

use crate::policy::ConnectionRecord;
use crate::policy::{Refusal, SecretRecord, SessionRules};
use crate::secrets;
use crate::state::Shared;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode, Uri};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// Marks the proxy's own answers, so they are not taken for the host's.
const EGRESS_HEADER: &str = "x-sandboxd-egress";

pub(crate) type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// Sends one request on to `host:port` over `upstream` (its `Host` without the port when it
/// is `default_port`) and passes the answer back, recorded when its body is done with.
pub(crate) async fn forward<U>(
    shared: Arc<Shared>,
    upstream: U,
    request: Request<Incoming>,
    (host, port, default_port): (&str, u16, u16),
    record: ConnectionRecord,
) -> Response<ProxyBody>
where
    U: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let started = std::time::Instant::now();
    let unreachable = |why: String| Refusal::Unreachable {
        host: host.to_string(),
        why,
    };
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(e) => return failed(&shared, record, unreachable(e.to_string())),
        };
    tokio::spawn(connection);
    let (mut parts, body) = request.into_parts();
    parts.uri = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/")
        .parse::<Uri>()
        .unwrap_or_else(|_| Uri::from_static("/"));
    strip_hop_by_hop(&mut parts.headers);
    // The host routed to is the host asked for: no other virtual host behind the same address.
    let authority = if port == default_port {
        host.to_string()
    } else {
        format!("{host}:{port}")
    };
    if let Ok(value) = HeaderValue::from_str(&authority) {
        parts.headers.insert(header::HOST, value);
    }
    let sent = Arc::new(AtomicU64::new(0));
    let body = Counted::new(body, sent.clone(), None);
    let response = match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(response) => response,
        Err(e) => return failed(&shared, record, unreachable(e.to_string())),
    };
    let (mut parts, body) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    let finish = Finish {
        shared,
        record,
        sent,
        started,
    };
    let body = Counted::new(body, Arc::new(AtomicU64::new(0)), Some(finish));
    Response::from_parts(parts, body.boxed())
}

pub(crate) fn failed(
    shared: &Shared,
    mut record: ConnectionRecord,
    refusal: Refusal,
) -> Response<ProxyBody> {
    let response = refusal_answer(&refusal);
    record.outcome = Err(refusal);
    shared.policy.record(record);
    response
}

/// Headers that concern one hop only, never passed on.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| name.trim().parse().ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in [
        "connection",
        "proxy-connection",
        "proxy-authorization",
        "proxy-authenticate",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
    ] {
        headers.remove(name);
    }
}

pub(crate) fn refusal_answer(refusal: &Refusal) -> Response<ProxyBody> {
    let status = match refusal {
        _ if refusal.by_policy() => StatusCode::FORBIDDEN,
        Refusal::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::BAD_GATEWAY,
    };
    let mut response = answer(status, refusal.to_string());
    response
        .headers_mut()
        .insert(EGRESS_HEADER, HeaderValue::from_static("refused"));
    response
}

pub(crate) fn answer(status: StatusCode, message: impl Into<String>) -> Response<ProxyBody> {
    let mut body = message.into();
    body.push('\n');
    let mut response = Response::new(Full::new(Bytes::from(body)).map_err(|e| match e {}).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

pub(crate) fn empty() -> ProxyBody {
    Full::new(Bytes::new()).map_err(|e| match e {}).boxed()
}

/// Records the request once its answer's body is done with (read to the end or dropped).
struct Finish {
    shared: Arc<Shared>,
    record: ConnectionRecord,
    sent: Arc<AtomicU64>,
    started: std::time::Instant,
}

/// A body passed on as it is, counting its bytes.
struct Counted {
    inner: Incoming,
    bytes: Arc<AtomicU64>,
    finish: Option<Finish>,
}

impl Counted {
    fn new(inner: Incoming, bytes: Arc<AtomicU64>, finish: Option<Finish>) -> Counted {
        Counted {
            inner,
            bytes,
            finish,
        }
    }
}

impl Body for Counted {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            if let Some(data) = frame.data_ref() {
                self.bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(finish) = self.finish.take() {
            let mut record = finish.record;
            record.bytes_sent = finish.sent.load(Ordering::Relaxed);
            record.bytes_received = self.bytes.load(Ordering::Relaxed);
            record.duration = finish.started.elapsed();
            finish.shared.policy.record(record);
        }
    }
}

impl Shared {
    /// Refuses a request for the placeholder it carries: recorded, and answered 403.
    pub(crate) fn secret_refused(
        &self,
        session: &SessionRules,
        host: &str,
        port: u16,
        misplaced: secrets::Misplaced,
    ) -> ::http::Response<ProxyBody> {
        let refusal = Refusal::Secret {
            secret: misplaced.secret.clone(),
            why: misplaced.why,
        };
        let response = refusal_answer(&refusal);
        self.policy.record_secret(SecretRecord {
            session_id: session.session_id.clone(),
            host: host.to_string(),
            port,
            secret: misplaced.secret,
            refusal: Some(refusal),
        });
        response
    }
}
