//! The proxy: its doors (proxy, HTTP, TLS, DNS), the state its connections share, a client
//! admitted by its session, and a connection opened and tunnelled.

use crate::dns;
use crate::error::EgressError;
use crate::http;
use crate::limits;
use crate::policy::Policy;
use crate::resolve;
use crate::settings::Settings;
use crate::state::{Client, Shared};
use crate::tls;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream, UdpSocket};

/// The proxy; cheap to clone, one per service.
#[derive(Clone)]
pub struct Egress {
    shared: Arc<Shared>,
}

impl Egress {
    pub fn new(settings: Settings, policy: Arc<dyn Policy>) -> Result<Egress, EgressError> {
        let resolver = resolve::Resolver::new(&settings.upstream_dns, settings.dns_timeout)?;
        Ok(Egress {
            shared: Arc::new(Shared {
                limits: limits::PerKey::new(settings.max_connections_per_session),
                settings,
                policy,
                resolver,
            }),
        })
    }

    /// The explicit proxy: `CONNECT` and absolute-form requests.
    pub async fn serve_proxy(&self, listener: TcpListener) {
        self.accept(listener, |shared, stream, client| {
            http::serve(shared, stream, client, http::Mode::Proxy)
        })
        .await
    }

    /// Plain HTTP redirected from port 80: routed by `Host`.
    pub async fn serve_http(&self, listener: TcpListener) {
        self.accept(listener, |shared, stream, client| {
            http::serve(shared, stream, client, http::Mode::Transparent)
        })
        .await
    }

    /// TLS redirected from port 443: routed by the server name, passed through untouched.
    pub async fn serve_tls(&self, listener: TcpListener) {
        self.accept(listener, tls::serve).await
    }

    /// DNS over UDP for the sandboxes.
    pub async fn serve_dns(&self, socket: UdpSocket) {
        dns::serve(self.shared.clone(), socket).await
    }

    async fn accept<F, Fut>(&self, listener: TcpListener, handle: F)
    where
        F: Fn(Arc<Shared>, TcpStream, Client) -> Fut + Clone + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors and the like: wait rather than spin.
                    tracing::warn!(error = %e, "egress proxy cannot accept");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let (shared, handle) = (self.shared.clone(), handle.clone());
            tokio::spawn(async move {
                let Some(client) = shared.admit(peer).await else {
                    return;
                };
                let _ = stream.set_nodelay(true);
                handle(shared, stream, client).await
            });
        }
    }
}
