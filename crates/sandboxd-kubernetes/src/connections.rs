//! Connections to a sandbox's agent through the API server's port-forward, which reaches the
//! agent's loopback port in the pod without giving the pod a network. Opening one costs a
//! WebSocket to the API server and a claim, so connections that ended a request cleanly are
//! kept (a few per sandbox) and handed out again.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use sandboxd_agent_proto::host::claim;
use sandboxd_agent_proto::AgentSecret;
use sandboxd_backend::{AgentIo, BackendError};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};

/// Idle connections kept per sandbox: here they cost the agent nothing while idle, and each
/// new one a WebSocket and a claim.
const MAX_IDLE: usize = 4;
/// An idle connection older than this is closed rather than reused: the API server or the
/// kubelet may have dropped its stream meanwhile.
const MAX_IDLE_AGE: Duration = Duration::from_secs(60);
/// Opening and claiming a connection.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);

type Idle = Vec<(DuplexStream, Instant)>;

/// The idle connections of every sandbox, by pod name.
#[derive(Default)]
pub struct Connections {
    idle: Arc<Mutex<HashMap<String, Idle>>>,
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
        if let Some(stream) = self.take_idle(pod) {
            return Ok(self.wrap(pod, stream));
        }
        let stream = tokio::time::timeout(OPEN_TIMEOUT, open(pods, pod, port, secret))
            .await
            .map_err(|_| {
                BackendError::AgentUnavailable(format!(
                    "no connection to the agent of pod {pod} within {}s",
                    OPEN_TIMEOUT.as_secs()
                ))
            })??;
        Ok(self.wrap(pod, stream))
    }

    /// Makes the pod known, so its connections are kept after use.
    pub fn register(&self, pod: &str) {
        self.lock().entry(pod.to_string()).or_default();
    }

    /// Forgets the pod's idle connections (its sandbox is gone).
    pub fn forget(&self, pod: &str) {
        self.lock().remove(pod);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Idle>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take_idle(&self, pod: &str) -> Option<DuplexStream> {
        let mut idle = self.lock();
        let streams = idle.get_mut(pod)?;
        while let Some((stream, since)) = streams.pop() {
            if since.elapsed() < MAX_IDLE_AGE {
                return Some(stream);
            }
        }
        None
    }

    fn wrap(&self, pod: &str, stream: DuplexStream) -> Box<PooledConnection> {
        Box::new(PooledConnection {
            stream,
            pod: pod.to_string(),
            idle: self.idle.clone(),
        })
    }
}

/// A claimed connection: a port-forward stream to the agent's port.
async fn open(
    pods: &Api<Pod>,
    pod: &str,
    port: u16,
    secret: &AgentSecret,
) -> Result<DuplexStream, BackendError> {
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
    Ok(stream)
}

/// A connection handed out for one request; [`AgentIo::reuse`] puts it back.
pub struct PooledConnection {
    stream: DuplexStream,
    pod: String,
    idle: Arc<Mutex<HashMap<String, Idle>>>,
}

impl AgentIo for PooledConnection {
    fn reuse(self: Box<Self>) {
        let PooledConnection { stream, pod, idle } = *self;
        let mut idle = idle.lock().unwrap_or_else(PoisonError::into_inner);
        // Only sandboxes still known keep connections: a forgotten one's entry is not remade.
        if let Some(streams) = idle.get_mut(&pod) {
            if streams.len() < MAX_IDLE {
                streams.push((stream, Instant::now()));
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
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for PooledConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
