//! Clients for the ping and exec requests. Every byte from the agent is untrusted: output is
//! kept only up to the requested limit whatever the agent sends, and every call has a deadline.

use super::framing::{read_frame, write_frame, write_json};
use crate::error::ProtoError;
use crate::frame::FrameKind;
use crate::limits::STDIN_CHUNK_LEN;
use crate::message::{Event, ExecRequest, ExitReport, Request};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// What sees an exec's output as it arrives, for progress reports.
pub type OutputSink = std::sync::Arc<dyn Fn(&[u8]) + Send + Sync>;

tokio::task_local! {
    /// Set by whoever awaits [`run_exec`] and wants its output as it comes (the service's
    /// progress reports), without every layer between passing it on; unset, nothing sees it.
    pub static OUTPUT_SINK: OutputSink;
}

/// The outcome of [`run_exec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecResult {
    pub report: ExitReport,
    /// At most the request's `output_limit` bytes: all of the output, or its head and its
    /// tail around a line saying how much was left out between them.
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
        if matches!(frame.kind, FrameKind::Stdout | FrameKind::Stderr) {
            let _ = OUTPUT_SINK.try_with(|sink| sink(&frame.payload));
        }
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
                Event::OutputOmitted {
                    stderr: false,
                    bytes,
                } => stdout.omit(bytes),
                Event::OutputOmitted {
                    stderr: true,
                    bytes,
                } => stderr.omit(bytes),
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

/// One output stream: keeps the first `limit` bytes the agent sends and counts the rest. The
/// agent sends the head, then (past its limit) how much it left out and the tail.
struct Capture {
    kept: Vec<u8>,
    received: u64,
    limit: usize,
    /// Where the agent left bytes out, and how many (the first time it says so).
    omitted: Option<(usize, u64)>,
}

impl Capture {
    fn new(limit: u64) -> Self {
        Self {
            kept: Vec::new(),
            received: 0,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            omitted: None,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.received = self.received.saturating_add(data.len() as u64);
        let room = self.limit - self.kept.len();
        self.kept.extend_from_slice(&data[..data.len().min(room)]);
    }

    fn omit(&mut self, bytes: u64) {
        if self.omitted.is_none() && bytes > 0 {
            self.omitted = Some((self.kept.len(), bytes));
        }
    }

    /// The kept bytes, with a line where bytes were left out (within the limit: the line
    /// takes the place of the tail's oldest bytes), and whether the agent's total or what it
    /// sent exceeds what was kept.
    fn finish(mut self, reported_total: u64) -> (Vec<u8>, bool) {
        let truncated = reported_total.max(self.received) > self.kept.len() as u64;
        if let Some((at, bytes)) = self.omitted {
            let tail = self.kept.split_off(at);
            let (marker, replaced) = marker_within(bytes, &self.kept, tail.len());
            self.kept.extend_from_slice(&marker);
            self.kept.extend_from_slice(&tail[replaced..]);
        }
        (self.kept, truncated)
    }
}

/// The line for `bytes` left out after `head`, and how many of the `tail_len` bytes after it
/// it takes the place of (as many as it is long, counted as left out too, when the tail is
/// longer than the line; none otherwise).
fn marker_within(bytes: u64, head: &[u8], tail_len: usize) -> (Vec<u8>, usize) {
    let mut replaced = omitted_line(bytes, head).len();
    // Counting the replaced bytes may lengthen the line by a digit: settle on a fixed point.
    loop {
        let line = omitted_line(bytes + replaced as u64, head);
        if line.len() == replaced {
            return if replaced < tail_len {
                (line, replaced)
            } else {
                (omitted_line(bytes, head), 0)
            };
        }
        replaced = line.len();
    }
}

/// The line standing for `bytes` left out after `head`.
fn omitted_line(bytes: u64, head: &[u8]) -> Vec<u8> {
    let newline = if head.is_empty() || head.ends_with(b"\n") {
        ""
    } else {
        "\n"
    };
    format!("{newline}[... {bytes} bytes left out here: the output went past its limit; its first and last parts are kept ...]\n")
        .into_bytes()
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

    #[test]
    fn what_the_agent_left_out_is_a_line_between_head_and_tail_within_the_limit() {
        let mut capture = Capture::new(400);
        capture.push(&[b'h'; 200]);
        capture.omit(5000);
        capture.omit(7);
        capture.push(&[b't'; 200]);
        let (kept, truncated) = capture.finish(5400);
        assert!(truncated);
        assert_eq!(kept.len(), 400, "the line takes the place of tail bytes");
        let text = String::from_utf8(kept).unwrap();
        let marker = "\n[... 5".to_string();
        assert!(
            text.starts_with(&format!("{}{marker}", "h".repeat(200))),
            "{text}"
        );
        let tail_kept = text.rsplit("]\n").next().unwrap().len();
        let left_out = 5000 + (200 - tail_kept);
        assert!(
            text.contains(&format!("[... {left_out} bytes left out here")),
            "{text}"
        );
        assert!(
            text.contains("kept ...]\nttt") && text.ends_with("ttt"),
            "{text}"
        );

        // A tail shorter than the line keeps the tail and adds the line.
        let mut short = Capture::new(400);
        short.push(b"head\n");
        short.omit(3);
        short.push(b"end");
        let (kept, _) = short.finish(11);
        let text = String::from_utf8(kept).unwrap();
        assert!(
            text.starts_with("head\n[... 3 bytes left out") && text.ends_with("]\nend"),
            "{text}"
        );
    }
}
