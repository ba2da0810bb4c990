//! Connections to a sandbox's agent: through the API server's port-forward, which reaches the
//! agent's loopback port in the pod without giving the pod a network; or, for a pod whose agent
//! listens on the pod network (a `bridge` sandbox of a service that runs in the cluster), a TCP
//! connection to the pod's address, which spares the API server and the kubelet the stream.
//! Opening one costs a claim (and through the port-forward a WebSocket to the API server), so
//! connections that ended a request cleanly are kept (a few per sandbox) and handed out again.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use sandboxd_agent_proto::host::claim;
use sandboxd_agent_proto::AgentSecret;
use sandboxd_backend::{AgentIo, BackendError};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Idle connections kept per sandbox: here they cost the agent nothing while idle, and each
/// new one a WebSocket and a claim.
const MAX_IDLE: usize = 4;
/// An idle connection older than this is closed rather than reused: the API server or the
/// kubelet may have dropped its stream meanwhile.
const MAX_IDLE_AGE: Duration = Duration::from_secs(60);
/// Opening and claiming a connection.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to an agent, whichever way it goes (a port-forward stream, a TCP connection).
trait Duplex: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Duplex for T {}
type Link = Box<dyn Duplex>;

type Idle = Vec<(Link, Instant)>;

/// What is known of a sandbox: its idle connections, and the agent's address on the pod
/// network when it listens there.
#[derive(Default)]
struct Known {
    idle: Idle,
    direct: Option<SocketAddr>,
}

/// The idle connections of every sandbox, by pod name.
#[derive(Default)]
pub struct Connections {
    known: Arc<Mutex<HashMap<String, Known>>>,
}

impl Connections {
    /// An idle connection to the pod's agent, or a new one claimed with `secret`.
    pub async fn take(
        &self,
        pods: &Api<Pod>,
        pod: &str,
        port: u16,
        secret: &AgentSecret,
    ) -> Result<Box<PooledConnection>, BackendError> {
        if let Some(link) = self.take_idle(pod) {
            return Ok(self.wrap(pod, link));
        }
        let direct = self.lock().get(pod).and_then(|known| known.direct);
        let opened = async {
            match direct {
                Some(address) => open_direct(pod, address, secret).await,
                None => open(pods, pod, port, secret).await,
            }
        };
        let link = tokio::time::timeout(OPEN_TIMEOUT, opened)
            .await
            .map_err(|_| {
                BackendError::AgentUnavailable(format!(
                    "no connection to the agent of pod {pod} within {}s",
                    OPEN_TIMEOUT.as_secs()
                ))
            })??;
        Ok(self.wrap(pod, link))
    }

    /// Makes the pod known, so its connections are kept after use; with `direct`, its agent
    /// is dialed there rather than through the port-forward.
    pub fn register(&self, pod: &str, direct: Option<SocketAddr>) {
        let mut known = self.lock();
        let entry = known.entry(pod.to_string()).or_default();
        if direct.is_some() {
            entry.direct = direct;
        }
    }

    /// Whether the pod was registered.
    pub fn knows(&self, pod: &str) -> bool {
        self.lock().contains_key(pod)
    }

    /// Forgets the pod's idle connections (its sandbox is gone).
    pub fn forget(&self, pod: &str) {
        self.lock().remove(pod);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Known>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take_idle(&self, pod: &str) -> Option<Link> {
        let mut known = self.lock();
        let links = &mut known.get_mut(pod)?.idle;
        while let Some((link, since)) = links.pop() {
            if since.elapsed() < MAX_IDLE_AGE {
                return Some(link);
            }
        }
        None
    }

    fn wrap(&self, pod: &str, link: Link) -> Box<PooledConnection> {
        Box::new(PooledConnection {
            link,
            pod: pod.to_string(),
            known: self.known.clone(),
        })
    }
}

/// A claimed connection over the pod network.
async fn open_direct(
    pod: &str,
    address: SocketAddr,
    secret: &AgentSecret,
) -> Result<Link, BackendError> {
    let unavailable = |what: String| BackendError::AgentUnavailable(format!("pod {pod}: {what}"));
    let mut stream = TcpStream::connect(address)
        .await
        .map_err(|e| unavailable(format!("no connection to the agent at {address}: {e}")))?;
    // Requests are small frames answered at once: no waiting to fill a segment.
    let _ = stream.set_nodelay(true);
    claim(&mut stream, secret)
        .await
        .map_err(|e| unavailable(format!("the agent did not accept the connection: {e}")))?;
    Ok(Box::new(stream))
}

/// A claimed connection: a port-forward stream to the agent's port.
async fn open(
    pods: &Api<Pod>,
    pod: &str,
    port: u16,
    secret: &AgentSecret,
) -> Result<Link, BackendError> {
    let unavailable = |what: String| BackendError::AgentUnavailable(format!("pod {pod}: {what}"));
    let mut forwarder = pods
        .portforward(pod, &[port])
        .await
        .map_err(|e| unavailable(format!("port-forward to the agent failed: {e}")))?;
    let mut stream = forwarder
        .take_stream(port)
        .ok_or_else(|| unavailable("port-forward gave no stream".into()))?;
    // The forwarder's task carries the stream until it closes; nothing else is needed of it.
    drop(forwarder);
    claim(&mut stream, secret)
        .await
        .map_err(|e| unavailable(format!("the agent did not accept the connection: {e}")))?;
    Ok(Box::new(stream))
}

/// A connection handed out for one request; [`AgentIo::reuse`] puts it back.
pub struct PooledConnection {
    link: Link,
    pod: String,
    known: Arc<Mutex<HashMap<String, Known>>>,
}

impl AgentIo for PooledConnection {
    fn reuse(self: Box<Self>) {
        let PooledConnection { link, pod, known } = *self;
        let mut known = known.lock().unwrap_or_else(PoisonError::into_inner);
        // Only sandboxes still known keep connections: a forgotten one's entry is not remade.
        if let Some(entry) = known.get_mut(&pod) {
            if entry.idle.len() < MAX_IDLE {
                entry.idle.push((link, Instant::now()));
            }
        }
    }
}

impl AsyncRead for PooledConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.link).poll_read(cx, buf)
    }
}

impl AsyncWrite for PooledConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.link).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.link).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.link).poll_shutdown(cx)
    }
}
