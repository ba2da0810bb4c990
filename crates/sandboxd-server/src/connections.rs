//! Serving HTTP/1.1 connections with hyper directly (`axum::serve` exposes none of its
//! settings): a deadline for each request's headers, the client's address for the handlers,
//! upgrades for the terminal's WebSocket, a graceful stop, and at most `policy.max_connections`
//! held at once.
//!
//! The header deadline runs from the moment a connection waits for a request, so neither a
//! client that sends its headers a byte at a time nor an idle keep-alive connection can
//! stretch it. When every connection is taken, a new one is not left waiting behind them: it
//! closes the longest-idle connection (no request in progress: still sending headers, or
//! waiting between requests) of the client address holding the most connections, so a flood
//! of slow or idle connections from one place closes its own. Only when every connection has a
//! request in progress is a new one refused, with 503; the requests themselves are shared out
//! per caller by [`crate::admission`].

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio_util::task::TaskTracker;
use tower::Service;

/// What a connection refused because every one has a request in progress is answered.
const REFUSED_BODY: &str = r#"{"error":{"code":"service_busy","message":"every connection of the service has a request in progress (policy.max_connections); try again shortly"}}"#;
/// How long a refused client is given to take its answer.
const REFUSAL_WRITE: Duration = Duration::from_secs(1);

/// One connection held: whose, whether a request is in progress, and how to close it.
struct Held {
    address: IpAddr,
    requests: u32,
    idle_since: Instant,
    close: oneshot::Sender<()>,
}

/// The connections held, by a number of their own.
struct Connections {
    limit: usize,
    held: Mutex<HashMap<u64, Held>>,
    next: Mutex<u64>,
}

impl Connections {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Held>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds a new connection from `address`, closing another if all are taken; `None` when
    /// every connection has a request in progress.
    fn open(&self, address: IpAddr) -> Option<(u64, oneshot::Receiver<()>)> {
        let mut held = self.lock();
        if held.len() >= self.limit {
            let victim = longest_idle_of_busiest_address(&held)?;
            if let Some(closed) = held.remove(&victim) {
                // The connection may have ended by itself meanwhile: nothing to tell then.
                let _ = closed.close.send(());
            }
        }
        let id = {
            let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
            *next += 1;
            *next
        };
        let (close, closing) = oneshot::channel();
        held.insert(
            id,
            Held {
                address,
                requests: 0,
                idle_since: Instant::now(),
                close,
            },
        );
        Some((id, closing))
    }

    fn request_started(&self, id: u64) {
        if let Some(held) = self.lock().get_mut(&id) {
            held.requests += 1;
        }
    }

    fn request_ended(&self, id: u64) {
        if let Some(held) = self.lock().get_mut(&id) {
            held.requests = held.requests.saturating_sub(1);
            held.idle_since = Instant::now();
        }
    }

    fn closed(&self, id: u64) {
        self.lock().remove(&id);
    }
}

/// The connection to close for a new one: of the idle ones, the longest idle of the address
/// that holds the most connections.
fn longest_idle_of_busiest_address(held: &HashMap<u64, Held>) -> Option<u64> {
    let mut per_address: HashMap<IpAddr, usize> = HashMap::new();
    for connection in held.values() {
        *per_address.entry(connection.address).or_default() += 1;
    }
    held.iter()
        .filter(|(_, connection)| connection.requests == 0)
        .max_by_key(|(_, connection)| {
            (
                per_address[&connection.address],
                std::cmp::Reverse(connection.idle_since),
            )
        })
        .map(|(id, _)| *id)
}

/// A request in progress on a connection, until its answer has been sent or dropped.
struct InProgress {
    connections: Arc<Connections>,
    id: u64,
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.connections.request_ended(self.id);
    }
}

/// Serves `app` on `listener`, at most `limit` connections at once, until `shutdown`
/// completes, then waits for the requests in progress to be answered (connections upgraded to
/// WebSockets are not waited for).
pub async fn run(
    listener: TcpListener,
    app: Router,
    limit: u32,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let connections = Arc::new(Connections {
        limit: limit as usize,
        held: Mutex::new(HashMap::new()),
        next: Mutex::new(0),
    });
    let tasks = TaskTracker::new();
    let (stop, stopping) = watch::channel(());
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some((id, closing)) = connections.open(peer.ip()) else {
            tasks.spawn(refuse(stream));
            continue;
        };
        // Streamed answers (process output, E2B's Connect streams) go out in small writes:
        // Nagle's algorithm would hold each behind the client's delayed ACK (about 40 ms).
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let mut stopping = stopping.clone();
        let tracked = connections.clone();
        let registry = connections.clone();
        tasks.spawn(async move {
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    // What `into_make_service_with_connect_info` would insert.
                    request.extensions_mut().insert(ConnectInfo(peer));
                    tracked.request_started(id);
                    let in_progress = InProgress {
                        connections: tracked.clone(),
                        id,
                    };
                    let answer = app.clone().call(request.map(Body::new));
                    async move {
                        let response = answer.await?;
                        // The request is in progress until its body has gone out.
                        Ok::<_, std::convert::Infallible>(response.map(|body| {
                            Body::new(body.map_frame(move |frame| {
                                let _held = &in_progress;
                                frame
                            }))
                        }))
                    }
                });
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let mut connection = pin!(builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades());
            let result = tokio::select! {
                result = connection.as_mut() => result,
                // Closed for a newer connection, or the service is stopping: a request in
                // progress (there should be none when closed) is still answered.
                _ = closing => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
                _ = stopping.changed() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
            registry.closed(id);
        });
    }
    drop(listener);
    stop.send_replace(());
    tasks.close();
    tasks.wait().await;
    Ok(())
}

/// Answers a connection that cannot be served now, without reading its request.
async fn refuse(mut stream: TcpStream) {
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{REFUSED_BODY}",
        REFUSED_BODY.len()
    );
    let _ = tokio::time::timeout(REFUSAL_WRITE, stream.write_all(answer.as_bytes())).await;
}

/// A failed accept: the client's own failure is ignored; anything else (e.g. out of file
/// descriptors) is logged and waited out for a second, as hyper's and axum's servers do.
async fn accept_failed(error: io::Error) {
    if matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(%error, "accepting a connection failed");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(address: &str, requests: u32, idle_for_ms: u64) -> Held {
        Held {
            address: address.parse().unwrap(),
            requests,
            idle_since: Instant::now() - Duration::from_millis(idle_for_ms),
            close: oneshot::channel().0,
        }
    }

    #[test]
    fn the_longest_idle_connection_of_the_address_holding_the_most_is_closed_first() {
        let all = HashMap::from([
            // The oldest idle connection, but its address holds only one.
            (1, held("192.0.2.1", 0, 9_000)),
            (2, held("192.0.2.2", 0, 10)),
            (3, held("192.0.2.2", 0, 500)),
            // Busy: never closed for a newcomer, however long it has been there.
            (4, held("192.0.2.2", 1, 20_000)),
        ]);
        assert_eq!(longest_idle_of_busiest_address(&all), Some(3));
    }

    #[test]
    fn nothing_is_closed_when_every_connection_has_a_request_in_progress() {
        let all = HashMap::from([(1, held("192.0.2.1", 1, 0)), (2, held("192.0.2.2", 2, 0))]);
        assert_eq!(longest_idle_of_busiest_address(&all), None);
    }

    #[tokio::test]
    async fn a_connection_over_the_limit_closes_an_idle_one_and_is_refused_when_none_is() {
        let connections = Connections {
            limit: 2,
            held: Mutex::new(HashMap::new()),
            next: Mutex::new(0),
        };
        let address: IpAddr = "192.0.2.9".parse().unwrap();
        let (first, mut first_closing) = connections.open(address).unwrap();
        let (second, _second_closing) = connections.open(address).unwrap();
        connections.request_started(second);
        let (third, _third_closing) = connections.open(address).unwrap();
        assert!(
            first_closing.try_recv().is_ok(),
            "the idle connection was told to close"
        );
        connections.request_started(third);
        assert!(
            connections.open(address).is_none(),
            "both held connections have a request in progress"
        );
        connections.request_ended(third);
        assert!(connections.open(address).is_some());
        assert_eq!(connections.lock().len(), 2);
        let _ = first;
    }
}
