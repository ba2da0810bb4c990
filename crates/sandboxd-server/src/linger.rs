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
    let _ = tokio::time::timeout(time, discard(body, bytes)).await;
}

/// Reads `body` until its end or past `bytes`, dropping each frame as it comes: a refused body
/// takes no memory beyond the frame in hand.
async fn discard(mut body: Body, bytes: usize) {
    let mut read = 0usize;
    while read <= bytes {
        let Some(Ok(frame)) = body.frame().await else {
            return;
        };
        read = read.saturating_add(frame.data_ref().map_or(0, Bytes::len));
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A frame's bytes that count their own drop.
    struct Counted(Arc<AtomicUsize>, Vec<u8>);

    impl AsRef<[u8]> for Counted {
        fn as_ref(&self) -> &[u8] {
            &self.1
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A body of `frames` frames of 1 KiB, and for each frame pulled, how many had been
    /// dropped by then.
    fn counted_body(frames: usize) -> (Body, Arc<Mutex<Vec<usize>>>) {
        let dropped = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stream = futures_util::stream::iter(0..frames).map({
            let seen = seen.clone();
            move |_| {
                seen.lock().unwrap().push(dropped.load(Ordering::SeqCst));
                let bytes = Bytes::from_owner(Counted(dropped.clone(), vec![0; 1024]));
                Ok::<_, std::io::Error>(Frame::data(bytes))
            }
        });
        (Body::new(http_body_util::StreamBody::new(stream)), seen)
    }

    #[tokio::test]
    async fn a_drained_body_is_dropped_frame_by_frame() {
        let (body, seen) = counted_body(8);
        drain(body, 1 << 20, Duration::from_secs(5)).await;
        // Frame i is pulled once the i frames before it are gone.
        assert_eq!(*seen.lock().unwrap(), (0..8).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_drain_stops_past_its_bytes() {
        let (body, seen) = counted_body(100);
        drain(body, 4 * 1024, Duration::from_secs(5)).await;
        assert_eq!(seen.lock().unwrap().len(), 5);
    }
}
