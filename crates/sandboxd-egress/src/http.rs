//! Plain HTTP (routed by `Host`, or by the absolute URI a proxy client sends) and `CONNECT`
//! tunnels, with hyper on both sides. A refusal is an answer the sandbox's program can show:
//! 403 with the reason in the body.

use crate::forward::{answer, empty, forward, refusal_answer, ProxyBody};
use crate::intercept;
use crate::policy::ConnectionRecord;
use crate::policy::Door;
use crate::policy::Refusal;
use crate::secrets::{substitute, Destination};
use crate::state::Client;
use crate::state::Shared;
use http::{header, Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpStream;

const HTTP_PORT: u16 = 80;
const HTTPS_PORT: u16 = 443;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The explicit proxy: absolute-form requests and `CONNECT`.
    Proxy,
    /// Redirected from port 80: origin-form requests routed by `Host`.
    Transparent,
}

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
