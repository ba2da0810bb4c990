//! Clients for the ping and exec requests. Every byte from the agent is untrusted: output is
//! kept only up to the requested limit whatever the agent sends, and every call has a deadline.

use super::{read_frame, write_frame, write_json};
use crate::{Event, ExecRequest, ExitReport, FrameKind, ProtoError, Request, STDIN_CHUNK_LEN};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// The outcome of [`run_exec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecResult {
    pub report: ExitReport,
    /// At most the request's `output_limit` bytes.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The process wrote more than `stdout` holds.
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
}

/// Sends a ping and waits for the pong. The stream can be used for another request afterwards.
pub async fn ping<S: AsyncRead + AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    timeout: Duration,
) -> Result<(), ProtoError> {
    let exchange = async {
        write_json(stream, &Request::Ping).await?;
        match read_frame(stream).await?.parse_json::<Event>()? {
            Event::Pong => Ok(()),
            Event::Error { code, message } => Err(ProtoError::Agent { code, message }),
            other => Err(ProtoError::Unexpected(format!("{other:?} instead of pong"))),
        }
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| ProtoError::Timeout(timeout))?
}

/// Runs `req` on a fresh agent connection, which it consumes.
///
/// `stdin` decides whether the process gets input (`req.stdin` is ignored): it is sent in
/// chunks followed by an end-of-input frame, while output is being read, so a process that
/// writes a lot before reading cannot deadlock. The whole exchange is bounded by `deadline`,
/// which should be the request's timeout plus a grace for the agent to report.
pub async fn run_exec<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    req: &ExecRequest,
    stdin: Option<Vec<u8>>,
    deadline: Duration,
) -> Result<ExecResult, ProtoError> {
    tokio::time::timeout(deadline, exchange(stream, req, stdin))
        .await
        .map_err(|_| ProtoError::Timeout(deadline))?
}

async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    req: &ExecRequest,
    stdin: Option<Vec<u8>>,
) -> Result<ExecResult, ProtoError> {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let request = Request::Exec(ExecRequest {
        stdin: stdin.is_some(),
        ..req.clone()
    });
    write_json(&mut writer, &request).await?;

    let feed = feed_stdin(&mut writer, stdin);
    let collect = collect_output(&mut reader, req.output_limit);
    tokio::pin!(feed, collect);
    let mut feeding = true;
    loop {
        tokio::select! {
            // A failed feed is no error of its own: the process may have exited without
            // reading its input, and the outcome comes from the agent's events.
            _ = &mut feed, if feeding => feeding = false,
            result = &mut collect => return result,
        }
    }
}

async fn feed_stdin<W: AsyncWrite + Unpin>(
    writer: &mut W,
    stdin: Option<Vec<u8>>,
) -> Result<(), ProtoError> {
    let Some(input) = stdin else {
        return Ok(());
    };
    for chunk in input.chunks(STDIN_CHUNK_LEN) {
        write_frame(writer, FrameKind::Stdin, chunk).await?;
    }
    write_frame(writer, FrameKind::Stdin, &[]).await
}

async fn collect_output<R: AsyncRead + Unpin>(
    reader: &mut R,
    output_limit: u64,
) -> Result<ExecResult, ProtoError> {
    let mut stdout = Capture::new(output_limit);
    let mut stderr = Capture::new(output_limit);
    loop {
        let frame = read_frame(reader).await?;
        match frame.kind {
            FrameKind::Stdout => stdout.push(&frame.payload),
            FrameKind::Stderr => stderr.push(&frame.payload),
            FrameKind::Stdin => {
                return Err(ProtoError::Unexpected(
                    "a stdin frame from the agent".into(),
                ))
            }
            FrameKind::Json => match frame.parse_json::<Event>()? {
                Event::Started { .. } => {}
                Event::Exited(report) => {
                    let (stdout, stdout_truncated) = stdout.finish(report.stdout_bytes);
                    let (stderr, stderr_truncated) = stderr.finish(report.stderr_bytes);
                    return Ok(ExecResult {
                        report,
                        stdout,
                        stderr,
                        stdout_truncated,
                        stderr_truncated,
                    });
                }
                Event::Error { code, message } => return Err(ProtoError::Agent { code, message }),
                other => return Err(ProtoError::Unexpected(format!("{other:?} during an exec"))),
            },
        }
    }
}

/// One output stream: keeps the first `limit` bytes and counts the rest.
struct Capture {
    kept: Vec<u8>,
    received: u64,
    limit: usize,
}

impl Capture {
    fn new(limit: u64) -> Self {
        Self {
            kept: Vec::new(),
            received: 0,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.received = self.received.saturating_add(data.len() as u64);
        let room = self.limit - self.kept.len();
        self.kept.extend_from_slice(&data[..data.len().min(room)]);
    }

    /// The kept bytes, and whether the agent's total or what it sent exceeds them.
    fn finish(self, reported_total: u64) -> (Vec<u8>, bool) {
        let truncated = reported_total.max(self.received) > self.kept.len() as u64;
        (self.kept, truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_the_limit_and_counts_the_rest() {
        let mut capture = Capture::new(5);
        capture.push(b"abc");
        capture.push(b"defgh");
        capture.push(b"ij");
        assert_eq!(capture.received, 10);
        assert_eq!(capture.finish(0), (b"abcde".to_vec(), true));

        let mut exact = Capture::new(3);
        exact.push(b"abc");
        assert_eq!(exact.finish(3), (b"abc".to_vec(), false));

        // The agent reports more than it sent (it stopped forwarding at the limit).
        let mut reported = Capture::new(3);
        reported.push(b"abc");
        assert_eq!(reported.finish(1000), (b"abc".to_vec(), true));
    }
}
