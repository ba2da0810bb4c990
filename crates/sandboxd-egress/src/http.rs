//! Plain HTTP (routed by `Host`, or by the absolute URI a proxy client sends) and `CONNECT`
//! tunnels, with hyper on both sides. A refusal is an answer the sandbox's program can show:
//! 403 with the reason in the body.

use crate::secrets::{substitute, Destination};
use crate::{intercept, Client, ConnectionRecord, Door, Refusal, Shared};
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::net::TcpStream;

const HTTP_PORT: u16 = 80;
const HTTPS_PORT: u16 = 443;
/// Marks the proxy's own answers, so they are not taken for the host's.
const EGRESS_HEADER: &str = "x-sandboxd-egress";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The explicit proxy: absolute-form requests and `CONNECT`.
    Proxy,
    /// Redirected from port 80: origin-form requests routed by `Host`.
    Transparent,
}

pub(crate) type ProxyBody = BoxBody<Bytes, hyper::Error>;

pub(crate) async fn serve(shared: Arc<Shared>, stream: TcpStream, client: Client, mode: Mode) {
    let session = client.session.clone();
    let handler = {
        let shared = shared.clone();
        hyper::service::service_fn(move |request| {
            handle(shared.clone(), client.clone(), mode, request)
        })
    };
    let connection = hyper::server::conn::http1::Builder::new()
        .max_buf_size(shared.settings.max_header_bytes.max(8192))
        .timer(TokioTimer::new())
        .header_read_timeout(shared.settings.header_timeout)
        .serve_connection(TokioIo::new(stream), handler)
        .with_upgrades();
    match tokio::time::timeout(shared.settings.max_connection_time, connection).await {
        Ok(Err(e)) if e.is_parse() || e.is_parse_too_large() => {
            let port = match mode {
                Mode::Proxy => 0,
                Mode::Transparent => HTTP_PORT,
            };
            let refusal = Refusal::NotHttp("only HTTP goes through port 80 and the proxy");
            shared.refused(&session, Door::Http, "", port, refusal);
        }
        _ => {}
    }
}

async fn handle(
    shared: Arc<Shared>,
    client: Client,
    mode: Mode,
    mut request: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    let session = &client.session;
    if request.method() == Method::CONNECT {
        if mode == Mode::Transparent {
            return Ok(answer(
                StatusCode::METHOD_NOT_ALLOWED,
                "CONNECT goes to the proxy (HTTPS_PROXY), not to port 80",
            ));
        }
        return Ok(connect(shared, client, request).await);
    }
    let (host, port) = match target(&request, mode) {
        Ok(target) => target,
        Err(message) => return Ok(answer(StatusCode::BAD_REQUEST, message)),
    };
    // Plain HTTP never carries a secret: a placeholder in it is refused, whatever the host.
    let to = Destination {
        host: &host,
        port,
        intercepted: false,
    };
    let uri = request.uri().clone();
    if let Err(misplaced) = substitute(&session.secrets, &to, &uri, request.headers_mut()) {
        return Ok(shared.secret_refused(session, &host, port, misplaced));
    }
    let upstream = match shared.open(session, &host, port).await {
        Ok(upstream) => upstream,
        Err(refusal) => {
            let response = refusal_answer(&refusal);
            shared.refused(session, Door::Http, &host, port, refusal);
            return Ok(response);
        }
    };
    let record = ConnectionRecord::allowed(session, Door::Http, &host, port);
    let to = (host.as_str(), port, HTTP_PORT);
    Ok(forward(shared, upstream, request, to, record).await)
}

/// The host and port a plain request goes to: its absolute URI's through the proxy, its
/// `Host` on port 80.
fn target(request: &Request<Incoming>, mode: Mode) -> Result<(String, u16), &'static str> {
    match mode {
        Mode::Proxy => {
            let uri = request.uri();
            match (uri.scheme_str(), uri.authority()) {
                (Some("http"), Some(authority)) => Ok((
                    authority.host().to_string(),
                    authority.port_u16().unwrap_or(HTTP_PORT),
                )),
                (Some(_), Some(_)) => {
                    Err("only http:// URLs are sent as plain requests; HTTPS goes through CONNECT")
                }
                _ => Err("a request to the proxy names its URL in full (http://host/path)"),
            }
        }
        Mode::Transparent => {
            let host = request
                .headers()
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .and_then(|h| h.parse::<http::uri::Authority>().ok())
                .ok_or("a request must name its host (Host header)")?;
            // The connection was made to port 80, whatever the header says.
            Ok((host.host().to_string(), HTTP_PORT))
        }
    }
}

async fn connect(
    shared: Arc<Shared>,
    client: Client,
    request: Request<Incoming>,
) -> Response<ProxyBody> {
    let session = &client.session;
    let Some(authority) = request.uri().authority().cloned() else {
        return answer(StatusCode::BAD_REQUEST, "CONNECT names host:port");
    };
    let (host, port) = (
        authority.host().to_string(),
        authority.port_u16().unwrap_or(HTTPS_PORT),
    );
    if shared.intercepts(&client, &host, port) {
        tokio::spawn(async move {
            if let Ok(upgraded) = hyper::upgrade::on(request).await {
                let stream = TokioIo::new(upgraded);
                intercept::serve(shared, client, stream, host, port, Door::Connect).await;
            }
        });
        return Response::new(empty());
    }
    let upstream = match shared.open(session, &host, port).await {
        Ok(upstream) => upstream,
        Err(refusal) => {
            let response = refusal_answer(&refusal);
            shared.refused(session, Door::Connect, &host, port, refusal);
            return response;
        }
    };
    let record = ConnectionRecord::allowed(session, Door::Connect, &host, port);
    tokio::spawn(async move {
        // The client's place under its bound is held while the tunnel lasts.
        let _client = client;
        match hyper::upgrade::on(request).await {
            Ok(upgraded) => {
                shared
                    .tunnel(TokioIo::new(upgraded), upstream, record)
                    .await
            }
            Err(_) => shared.policy.record(record),
        }
    });
    Response::new(empty())
}

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

fn empty() -> ProxyBody {
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
