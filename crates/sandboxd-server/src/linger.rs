//! A request body the handler answered without reading (a 401, a 413 on `Content-Length`, a
//! refused origin) is read and dropped, up to a bound, before the answer goes out. Closing a
//! socket with unread bytes makes the kernel send a reset, and a client still sending its body
//! then loses the answer, or a kept-alive connection dies under its next request.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::BodyExt;
use hyper::body::Frame;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

/// At most this much of a refused body is read; a client sending more gets the reset.
const DRAIN_BYTES: usize = 1 << 20;
/// And for at most this long, so a slow sender cannot hold the answer back.
const DRAIN_TIME: Duration = Duration::from_secs(2);

/// Where a body dropped before its end is put back for the layer to drain.
type Slot = Arc<Mutex<Option<Body>>>;

/// The middleware: hands the handler a body that returns itself to the slot when dropped
/// unfinished, then drains whatever came back.
pub async fn drain_unread(request: Request, next: Next) -> Response {
    let slot = Slot::default();
    let request = request.map(|body| {
        Body::new(Returning {
            inner: Some(body),
            slot: slot.clone(),
        })
    });
    let response = next.run(request).await;
    let unread = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(body) = unread {
        drain(body, DRAIN_BYTES, DRAIN_TIME).await;
    }
    response
}

/// Reads and drops `body` until its end, `bytes` or `time`, whichever comes first: whichever
/// it was, the answer is sent as it is.
pub async fn drain(body: Body, bytes: usize, time: Duration) {
    let limited = http_body_util::Limited::new(body, bytes);
    let _ = tokio::time::timeout(time, limited.collect()).await;
}

/// A body that gives itself back to `slot` when dropped before its end.
struct Returning {
    inner: Option<Body>,
    slot: Slot,
}

impl HttpBody for Returning {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let Some(body) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(body).poll_frame(cx);
        // A body that ended (or failed) is never polled again, by the handler or the drain.
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            self.inner = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| hyper::body::SizeHint::with_exact(0), HttpBody::size_hint)
    }
}

impl Drop for Returning {
    fn drop(&mut self) {
        if let Some(body) = self.inner.take().filter(|body| !body.is_end_stream()) {
            *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(body);
        }
    }
}
