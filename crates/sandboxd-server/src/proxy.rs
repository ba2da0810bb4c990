//! Forwarding one HTTP request to a port in a sandbox over a connection the core opened
//! (through the sandbox's agent), with hyper's client: any method, bodies streamed both ways
//! (chunked, Server-Sent Events), and WebSocket upgrades joined end to end. The service's
//! credentials never reach the sandbox: `Authorization`, the client header and hop-by-hop
//! headers are dropped, and `Host` names the sandbox's own loopback port.

use crate::error::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use sandboxd_core::Error;
use std::time::Duration;
use tokio::io::DuplexStream;

/// How long the sandbox's server may take to answer with its headers.
const RESPONSE_HEADER_TIMEOUT: Duration = Duration::from_secs(120);

/// Headers that describe one hop, never forwarded (RFC 9110, 7.6.1), and ours.
const DROPPED: [&str; 10] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "authorization",
    sandboxd_api::CLIENT_HEADER,
];

/// Sends `request` (whose path is replaced by `path`) to `port` over `stream` and answers
/// with what the port answered.
pub async fn forward(
    stream: DuplexStream,
    port: u16,
    path: &str,
    mut request: Request,
) -> Result<Response, ApiError> {
    let websocket = is_websocket(request.headers());
    let client_upgrade = websocket.then(|| hyper::upgrade::on(&mut request));
    let (parts, body) = request.into_parts();
    let target = match parts.uri.query() {
        Some(query) => format!("/{path}?{query}"),
        None => format!("/{path}"),
    };
    let uri: Uri = target.parse().map_err(|_| {
        ApiError(Error::bad_request(
            "invalid_request",
            "the path is not a valid URI path",
        ))
    })?;
    let mut upstream = hyper::Request::builder()
        .method(parts.method)
        .uri(uri)
        .body(body)
        .map_err(|e| ApiError(Error::bad_request("invalid_request", e.to_string())))?;
    *upstream.headers_mut() = forwarded_headers(&parts.headers, port, websocket);

    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(upstream_error)?;
    tokio::spawn(connection.with_upgrades());
    let answer = tokio::time::timeout(RESPONSE_HEADER_TIMEOUT, sender.send_request(upstream))
        .await
        .map_err(|_| {
            ApiError(Error::BadGateway {
                code: "upstream_timeout",
                message: format!(
                    "the sandbox's port {port} did not answer within {} s",
                    RESPONSE_HEADER_TIMEOUT.as_secs()
                ),
            })
        })?
        .map_err(upstream_error)?;
    let mut answer = answer;
    if answer.status() == StatusCode::SWITCHING_PROTOCOLS && client_upgrade.is_none() {
        // Passed on, it would leave the client's connection in a protocol it never asked for.
        return Err(ApiError(Error::BadGateway {
            code: "upstream_error",
            message: format!(
                "the sandbox's port {port} answered 101 Switching Protocols to a request that asked for no upgrade"
            ),
        }));
    }
    if let (Some(client_upgrade), StatusCode::SWITCHING_PROTOCOLS) =
        (client_upgrade, answer.status())
    {
        let upstream_upgrade = hyper::upgrade::on(&mut answer);
        tokio::spawn(async move {
            if let (Ok(client), Ok(upstream)) = (client_upgrade.await, upstream_upgrade.await) {
                let (mut client, mut upstream) = (TokioIo::new(client), TokioIo::new(upstream));
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            }
        });
        let (parts, _) = answer.into_parts();
        return Ok(Response::from_parts(parts, Body::empty()));
    }
    let (mut parts, body) = answer.into_parts();
    strip(&mut parts.headers, false);
    Ok(Response::from_parts(parts, Body::new(body)).into_response())
}

fn is_websocket(headers: &HeaderMap) -> bool {
    let names = |name| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|v| v.trim().to_ascii_lowercase())
            .collect::<Vec<_>>()
    };
    names(header::UPGRADE).iter().any(|v| v == "websocket")
        && names(header::CONNECTION).iter().any(|v| v == "upgrade")
}

fn forwarded_headers(headers: &HeaderMap, port: u16, websocket: bool) -> HeaderMap {
    let mut forwarded = headers.clone();
    strip(&mut forwarded, websocket);
    let host = HeaderValue::from_str(&format!("127.0.0.1:{port}")).expect("a valid header value");
    forwarded.insert(header::HOST, host);
    forwarded
}

/// Drops the hop-by-hop headers, also those `Connection` names; an upgrade keeps its own.
fn strip(headers: &mut HeaderMap, websocket: bool) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|v| HeaderName::from_bytes(v.trim().as_bytes()).ok())
        .collect();
    for name in named {
        if !(websocket && name == header::UPGRADE) {
            headers.remove(name);
        }
    }
    for name in DROPPED {
        headers.remove(name);
    }
    if websocket {
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    } else {
        headers.remove(header::UPGRADE);
    }
}

fn upstream_error(error: hyper::Error) -> ApiError {
    ApiError(Error::BadGateway {
        code: "upstream_error",
        message: format!("the sandbox's port did not answer with HTTP: {error}"),
    })
}
