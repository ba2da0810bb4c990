//! A stream that counts the bytes read from it, so a tunnel's figures survive the reset or
//! error that ends it (`copy_bidirectional` reports its counts only when both sides close
//! cleanly, and a browser or curl often resets a finished TLS connection). It can also give
//! back first what was read from its stream already (a ClientHello read for its server name).

use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub(crate) struct Counted<S> {
    inner: S,
    /// Bytes read so far.
    pub(crate) read: u64,
    /// Read before `inner`, from `replayed` on.
    replay: Vec<u8>,
    replayed: usize,
}

impl<S> Counted<S> {
    pub(crate) fn new(inner: S) -> Counted<S> {
        Counted::replaying(Vec::new(), inner)
    }

    /// A stream whose first bytes, `replay`, were read from `inner` already.
    pub(crate) fn replaying(replay: Vec<u8>, inner: S) -> Counted<S> {
        Counted {
            inner,
            read: 0,
            replay,
            replayed: 0,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.replayed < self.replay.len() {
            let (start, n) = (
                self.replayed,
                buf.remaining().min(self.replay.len() - self.replayed),
            );
            buf.put_slice(&self.replay[start..start + n]);
            self.replayed += n;
            self.read += n as u64;
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.read += (buf.filled().len() - before) as u64;
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
