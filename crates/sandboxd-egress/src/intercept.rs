//! TLS to the host of a secret the session has: ended by the proxy with a certificate the
//! service's CA signed for the host, each HTTP/1.1 request read (hyper), its placeholders put
//! right ([`crate::secrets`]), and sent on over the proxy's own TLS to the host, verified.
//! Hosts of no secret are never intercepted.

use crate::forward::{forward, refusal_answer};
use crate::policy::ConnectionRecord;
use crate::policy::Door;
use crate::policy::Refusal;
use crate::policy::SecretRecord;
use crate::secrets::{substitute, Destination};
use crate::state::Client;
use crate::state::Shared;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

const HTTPS_PORT: u16 = 443;

impl Shared {
    /// Whether a connection of `client` to `host:port` is intercepted: the session has a
    /// secret for it and may reach it now.
    pub(crate) fn intercepts(&self, client: &Client, host: &str, port: u16) -> bool {
        let Some(name) = sandboxd_api::normalize_host(host) else {
            return false;
        };
        self.settings.interception.is_some()
            && sandboxd_api::egress_allows(&client.session.rules, &name, port)
            && client
                .session
                .secrets
                .iter()
                .any(|s| sandboxd_api::egress_allows(&s.secret.hosts, &name, port))
    }
}

/// Serves the sandbox's TLS to `host:port` as the host, until it closes.
pub(crate) async fn serve<S>(
    shared: Arc<Shared>,
    client: Client,
    stream: S,
    host: String,
    port: u16,
    door: Door,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Some(interception) = shared.settings.interception.clone() else {
        return;
    };
    let session = client.session.clone();
    let host = sandboxd_api::normalize_host(&host).unwrap_or(host);
    let config = match interception.server_config(&host) {
        Ok(config) => config,
        Err(e) => {
            let refusal = Refusal::Unreachable {
                host: host.clone(),
                why: e.to_string(),
            };
            return shared.refused(&session, door, &host, port, refusal);
        }
    };
    let accept = tokio_rustls::TlsAcceptor::from(config).accept(stream);
    let Ok(Ok(tls)) = tokio::time::timeout(shared.settings.header_timeout, accept).await else {
        // The sandbox does not trust the CA, or is not speaking TLS: nothing was sent.
        let refusal = Refusal::NotHttp("the sandbox's TLS to a host of a secret did not complete (does it trust the service's CA?)");
        return shared.refused(&session, door, &host, port, refusal);
    };
    let handler = {
        let (shared, host) = (shared.clone(), host.clone());
        hyper::service::service_fn(move |request| {
            let (shared, client, host) = (shared.clone(), client.clone(), host.clone());
            async move {
                Ok::<_, std::convert::Infallible>(
                    handle(shared, client, request, &host, port, door).await,
                )
            }
        })
    };
    let connection = hyper::server::conn::http1::Builder::new()
        .max_buf_size(shared.settings.max_header_bytes.max(8192))
        .timer(TokioTimer::new())
        .header_read_timeout(shared.settings.header_timeout)
        .serve_connection(TokioIo::new(tls), handler);
    let _ = tokio::time::timeout(shared.settings.max_connection_time, connection).await;
}

async fn handle(
    shared: Arc<Shared>,
    client: Client,
    request: hyper::Request<Incoming>,
    host: &str,
    port: u16,
    door: Door,
) -> hyper::Response<crate::forward::ProxyBody> {
    let session = &client.session;
    if request.method() == hyper::Method::CONNECT {
        let message = "CONNECT goes to the proxy, not inside TLS to a host";
        return crate::forward::answer(hyper::StatusCode::METHOD_NOT_ALLOWED, message);
    }
    let (mut parts, body) = request.into_parts();
    let to = Destination {
        host,
        port,
        intercepted: true,
    };
    let put = match substitute(&session.secrets, &to, &parts.uri, &mut parts.headers) {
        Ok(put) => put,
        Err(misplaced) => return shared.secret_refused(session, host, port, misplaced),
    };
    let request = hyper::Request::from_parts(parts, body);
    let upstream = match shared.open(session, host, port).await {
        Ok(upstream) => upstream,
        Err(refusal) => {
            let response = refusal_answer(&refusal);
            shared.refused(session, door, host, port, refusal);
            return response;
        }
    };
    let record = ConnectionRecord::allowed(session, door, host, port);
    let upstream = match upstream_tls(&shared, host, upstream).await {
        Ok(tls) => tls,
        Err(why) => {
            let refusal = Refusal::Unreachable {
                host: host.to_string(),
                why,
            };
            return crate::forward::failed(&shared, record, refusal);
        }
    };
    for secret in put {
        shared.policy.record_secret(SecretRecord {
            session_id: session.session_id.clone(),
            host: host.to_string(),
            port,
            secret,
            refusal: None,
        });
    }
    forward(shared, upstream, request, (host, port, HTTPS_PORT), record).await
}

/// The proxy's own TLS to the host, verified against the roots it trusts.
async fn upstream_tls(
    shared: &Shared,
    host: &str,
    upstream: tokio::net::TcpStream,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
    let interception = shared
        .settings
        .interception
        .as_ref()
        .ok_or("no interception")?;
    let name =
        rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| e.to_string())?;
    let connect = tokio_rustls::TlsConnector::from(interception.upstream()).connect(name, upstream);
    match tokio::time::timeout(shared.settings.connect_timeout, connect).await {
        Ok(Ok(tls)) => Ok(tls),
        Ok(Err(e)) => Err(format!("TLS: {e}")),
        Err(_) => Err("the TLS handshake did not finish in time".into()),
    }
}
