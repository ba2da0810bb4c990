//! Serving HTTP/1.1 connections with hyper directly (`axum::serve` exposes none of its
//! settings): a deadline for each request's headers, a cap on connections served at once, the
//! client's address for the handlers, upgrades for the terminal's WebSocket, and a graceful stop.

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower::Service;

/// Connections served at once; more wait in the listen backlog until one ends.
const MAX_CONNECTIONS: u32 = 1024;

/// Serves `app` on `listener` until `shutdown` completes, then waits for the requests in
/// progress to be answered (connections upgraded to WebSockets are not waited for).
pub async fn run(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS as usize));
    let (stop, stopping) = watch::channel(());
    let mut shutdown = pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
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
        // Streamed answers (process output, E2B's Connect streams) go out in small writes:
        // Nagle's algorithm would hold each behind the client's delayed ACK (about 40 ms).
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let mut stopping = stopping.clone();
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    // What `into_make_service_with_connect_info` would insert.
                    request.extensions_mut().insert(ConnectInfo(peer));
                    app.clone().call(request.map(Body::new))
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
                _ = stopping.changed() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    stop.send_replace(());
    // Every connection holds a slot until it ends.
    let _all = slots
        .acquire_many(MAX_CONNECTIONS)
        .await
        .expect("the semaphore is never closed");
    Ok(())
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
