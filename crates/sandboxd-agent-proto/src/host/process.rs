//! Clients for the tracked-process ops. Every answer is bounded in size and time like any
//! other from the agent. An attached output stream is read one frame at a time, only when
//! the caller asks for the next event, so a slow consumer slows the agent's sender (which
//! drops from its ring rather than wait) instead of making anything buffer here.

use super::framing::{read_frame, read_frame_limited, write_frame, write_json};
use crate::error::ProtoError;
use crate::frame::FrameKind;
use crate::limits::{OUTPUT_CHUNK_LEN, STDIN_CHUNK_LEN};
use crate::message::{
    Event, ProcessEvent, ProcessInfo, ProcessRequest, ProcessStartRequest, Request, TermSize,
};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadHalf, WriteHalf};

/// The largest frame an attached stream accepts: the agent sends output in chunks of at most
/// [`OUTPUT_CHUNK_LEN`], and its control events are far smaller.
const ATTACH_FRAME_LIMIT: usize = 2 * OUTPUT_CHUNK_LEN;

/// Starts a tracked process.
pub async fn start_process<S: AsyncRead + AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    request: &ProcessStartRequest,
    timeout: Duration,
) -> Result<ProcessInfo, ProtoError> {
    let request = Request::Process(ProcessRequest::ProcessStart(request.clone()));
    call(stream, &request, &[], timeout, process_info).await
}

/// The tracked processes, oldest first.
pub async fn list_processes<S: AsyncRead + AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    timeout: Duration,
) -> Result<Vec<ProcessInfo>, ProtoError> {
    call(
        stream,
        &Request::Process(ProcessRequest::ProcessList),
        &[],
        timeout,
        |event| match event {
            Event::Process(ProcessEvent::ProcessList { processes }) => Ok(processes),
            other => Err(unexpected(other)),
        },
    )
    .await
}

/// SIGKILLs every process in the sandbox but the agent and init; returns how many were
/// killed and how many were still alive when the agent gave up.
pub async fn kill_all_processes<S: AsyncRead + AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    timeout: Duration,
) -> Result<(u32, u32), ProtoError> {
    call(
        stream,
        &Request::Process(ProcessRequest::KillAll),
        &[],
        timeout,
        |event| match event {
            Event::Process(ProcessEvent::KilledAll { killed, remaining }) => {
                Ok((killed, remaining))
            }
            other => Err(unexpected(other)),
        },
    )
    .await
}

/// Sends `signal` to a process's group; returns the process's state right after.
pub async fn signal_process<S: AsyncRead + AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    id: &str,
    signal: i32,
    timeout: Duration,
) -> Result<ProcessInfo, ProtoError> {
    let request = Request::Process(ProcessRequest::ProcessSignal {
        id: id.into(),
        signal,
    });
    call(stream, &request, &[], timeout, process_info).await
}

/// Sets the window size of a process's terminal.
pub async fn resize_process<S: AsyncRead + AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    id: &str,
    size: TermSize,
    timeout: Duration,
) -> Result<ProcessInfo, ProtoError> {
    let request = Request::Process(ProcessRequest::ProcessResize {
        id: id.into(),
        size,
    });
    call(stream, &request, &[], timeout, process_info).await
}

/// Writes `data` to a process's stdin and closes it afterwards if `close`; returns once the
/// process has taken every byte. The agent fails the write if the process stops reading.
pub async fn write_process_stdin<S: AsyncRead + AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    id: &str,
    data: &[u8],
    close: bool,
    timeout: Duration,
) -> Result<u64, ProtoError> {
    let len = data.len() as u64;
    let request = Request::Process(ProcessRequest::ProcessStdin {
        id: id.into(),
        len,
        close,
    });
    call(stream, &request, data, timeout, |event| match event {
        Event::Process(ProcessEvent::StdinWritten { bytes }) if bytes == len => Ok(bytes),
        other => Err(unexpected(other)),
    })
    .await
}

/// One request, its stdin payload and its one answer, within `timeout`.
async fn call<S: AsyncRead + AsyncWrite + Unpin + ?Sized, T>(
    stream: &mut S,
    request: &Request,
    stdin: &[u8],
    timeout: Duration,
    answer: impl FnOnce(Event) -> Result<T, ProtoError>,
) -> Result<T, ProtoError> {
    let exchange = async {
        write_json(stream, request).await?;
        for chunk in stdin.chunks(STDIN_CHUNK_LEN) {
            write_frame(stream, FrameKind::Stdin, chunk).await?;
        }
        match read_frame(stream).await?.parse_json::<Event>()? {
            Event::Error { code, message } => Err(ProtoError::Agent { code, message }),
            event => answer(event),
        }
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| ProtoError::Timeout(timeout))?
}

fn process_info(event: Event) -> Result<ProcessInfo, ProtoError> {
    match event {
        Event::Process(ProcessEvent::Process(info)) => Ok(info),
        other => Err(unexpected(other)),
    }
}

fn unexpected(event: Event) -> ProtoError {
    ProtoError::Unexpected(format!("{event:?} in answer to a process request"))
}

/// What an attached stream delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputEvent {
    /// Output at byte `offset` of the process's output: [`FrameKind::Stdout`] or
    /// [`FrameKind::Stderr`] (a terminal's output is stdout).
    Output {
        kind: FrameKind,
        offset: u64,
        data: Vec<u8>,
    },
    /// `bytes` bytes from `offset` on left the agent's ring before they could be sent.
    Dropped { offset: u64, bytes: u64 },
    /// The process has exited and all its output was delivered; nothing follows.
    Exited(ProcessInfo),
}

/// The output side of an attached process.
#[derive(Debug)]
pub struct ProcessOutput<R> {
    reader: R,
    /// The offset of the next byte to deliver.
    next_offset: u64,
    /// Where the agent resumes after a gap not yet reported.
    resume_at: Option<u64>,
}

/// The input side of an interactive attachment.
#[derive(Debug)]
pub struct ProcessInput<W> {
    writer: W,
    id: String,
}

/// Attaches to a process's output from byte offset `since` on a fresh agent connection,
/// which it consumes. Fails within `timeout` if the agent refuses (no such process, too many
/// streams); after that, events arrive as the process writes, without a deadline.
#[allow(clippy::type_complexity)]
pub async fn attach_process<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    id: &str,
    since: u64,
    interactive: bool,
    timeout: Duration,
) -> Result<(ProcessOutput<ReadHalf<S>>, ProcessInput<WriteHalf<S>>), ProtoError> {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let request = Request::Process(ProcessRequest::ProcessAttach {
        id: id.into(),
        since,
        interactive,
    });
    let first = async {
        write_json(&mut writer, &request).await?;
        read_frame_limited(&mut reader, ATTACH_FRAME_LIMIT)
            .await?
            .parse_json::<Event>()
    };
    let resume_at = match tokio::time::timeout(timeout, first)
        .await
        .map_err(|_| ProtoError::Timeout(timeout))??
    {
        Event::Process(ProcessEvent::OutputFrom { offset }) if offset >= since => offset,
        Event::Error { code, message } => return Err(ProtoError::Agent { code, message }),
        other => {
            return Err(ProtoError::Unexpected(format!(
                "{other:?} in answer to {request:?}"
            )))
        }
    };
    let output = ProcessOutput {
        reader,
        next_offset: since,
        resume_at: Some(resume_at),
    };
    let input = ProcessInput {
        writer,
        id: id.into(),
    };
    Ok((output, input))
}

impl<R: AsyncRead + Unpin> ProcessOutput<R> {
    /// The next event. Not cancel-safe: a call dropped midway may lose part of a frame, so
    /// run it to completion (or drop the whole stream).
    pub async fn next(&mut self) -> Result<OutputEvent, ProtoError> {
        loop {
            if let Some(resume_at) = self.resume_at.take() {
                if resume_at > self.next_offset {
                    let gap = OutputEvent::Dropped {
                        offset: self.next_offset,
                        bytes: resume_at - self.next_offset,
                    };
                    self.next_offset = resume_at;
                    return Ok(gap);
                }
            }
            let frame = read_frame_limited(&mut self.reader, ATTACH_FRAME_LIMIT).await?;
            match frame.kind {
                FrameKind::Stdout | FrameKind::Stderr if frame.payload.is_empty() => {}
                FrameKind::Stdout | FrameKind::Stderr => {
                    let offset = self.next_offset;
                    self.next_offset += frame.payload.len() as u64;
                    return Ok(OutputEvent::Output {
                        kind: frame.kind,
                        offset,
                        data: frame.payload,
                    });
                }
                FrameKind::Stdin => {
                    return Err(ProtoError::Unexpected(
                        "a stdin frame from the agent".into(),
                    ))
                }
                FrameKind::Json => match frame.parse_json::<Event>()? {
                    Event::Process(ProcessEvent::OutputFrom { offset })
                        if offset >= self.next_offset =>
                    {
                        self.resume_at = Some(offset);
                    }
                    Event::Process(ProcessEvent::Process(info)) if info.exit.is_some() => {
                        return Ok(OutputEvent::Exited(info))
                    }
                    Event::Error { code, message } => {
                        return Err(ProtoError::Agent { code, message })
                    }
                    other => {
                        return Err(ProtoError::Unexpected(format!(
                            "{other:?} on an output stream at offset {}",
                            self.next_offset
                        )))
                    }
                },
            }
        }
    }

    /// The offset of the next byte this stream will deliver.
    pub fn offset(&self) -> u64 {
        self.next_offset
    }
}

impl<W: AsyncWrite + Unpin> ProcessInput<W> {
    /// Sends input to the process (of an interactive attachment). Nothing is sent for empty
    /// input: an empty stdin frame would mean end of input.
    pub async fn send(&mut self, data: &[u8]) -> Result<(), ProtoError> {
        for chunk in data.chunks(STDIN_CHUNK_LEN) {
            write_frame(&mut self.writer, FrameKind::Stdin, chunk).await?;
        }
        Ok(())
    }

    /// Resizes the process's terminal (of an interactive attachment); unanswered.
    pub async fn resize(&mut self, size: TermSize) -> Result<(), ProtoError> {
        let request = Request::Process(ProcessRequest::ProcessResize {
            id: self.id.clone(),
            size,
        });
        write_json(&mut self.writer, &request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ExitReport;
    use tokio::io::{duplex, AsyncReadExt};

    const SECOND: Duration = Duration::from_secs(1);

    /// Plays the agent: reads the request, then writes `reply` frames.
    async fn agent_replying(
        reply: Vec<(FrameKind, Vec<u8>)>,
    ) -> (tokio::io::DuplexStream, tokio::task::JoinHandle<Request>) {
        let (host, mut agent) = duplex(1 << 20);
        let task = tokio::spawn(async move {
            let request = read_frame(&mut agent).await.unwrap().parse_json().unwrap();
            for (kind, payload) in reply {
                write_frame(&mut agent, kind, &payload).await.unwrap();
            }
            // Keep the connection open until the host is done with it.
            let _ = agent.read(&mut [0; 1]).await;
            request
        });
        (host, task)
    }

    fn json(event: &impl serde::Serialize) -> (FrameKind, Vec<u8>) {
        (FrameKind::Json, serde_json::to_vec(event).unwrap())
    }

    fn exited(id: &str) -> ProcessInfo {
        ProcessInfo {
            id: id.into(),
            exit: Some(ExitReport {
                exit_code: Some(0),
                ..ExitReport::default()
            }),
            ..ProcessInfo::default()
        }
    }

    #[tokio::test]
    async fn attached_stream_reports_offsets_gaps_and_the_exit() {
        let (host, _agent) = agent_replying(vec![
            json(&ProcessEvent::OutputFrom { offset: 10 }),
            (FrameKind::Stdout, b"abc".to_vec()),
            (FrameKind::Stderr, b"de".to_vec()),
            json(&ProcessEvent::OutputFrom { offset: 20 }),
            (FrameKind::Stdout, b"f".to_vec()),
            json(&ProcessEvent::Process(exited("p1"))),
        ])
        .await;
        let (mut output, _input) = attach_process(host, "p1", 4, false, SECOND).await.unwrap();
        let mut events = Vec::new();
        loop {
            let event = output.next().await.unwrap();
            let done = matches!(event, OutputEvent::Exited(_));
            events.push(event);
            if done {
                break;
            }
        }
        let output_at = |kind, offset, data: &[u8]| OutputEvent::Output {
            kind,
            offset,
            data: data.to_vec(),
        };
        assert_eq!(
            events,
            [
                OutputEvent::Dropped {
                    offset: 4,
                    bytes: 6
                },
                output_at(FrameKind::Stdout, 10, b"abc"),
                output_at(FrameKind::Stderr, 13, b"de"),
                OutputEvent::Dropped {
                    offset: 15,
                    bytes: 5
                },
                output_at(FrameKind::Stdout, 20, b"f"),
                OutputEvent::Exited(exited("p1")),
            ]
        );
        assert_eq!(output.offset(), 21);
    }

    #[tokio::test]
    async fn an_agent_going_backwards_or_refusing_is_an_error() {
        let (host, _agent) =
            agent_replying(vec![json(&ProcessEvent::OutputFrom { offset: 3 })]).await;
        let refused = attach_process(host, "p1", 5, false, SECOND).await;
        assert!(matches!(refused, Err(ProtoError::Unexpected(_))));

        let (host, _agent) = agent_replying(vec![
            json(&ProcessEvent::OutputFrom { offset: 0 }),
            (FrameKind::Stdout, b"abc".to_vec()),
            json(&ProcessEvent::OutputFrom { offset: 1 }),
        ])
        .await;
        let (mut output, _input) = attach_process(host, "p1", 0, false, SECOND).await.unwrap();
        output.next().await.unwrap();
        assert!(matches!(
            output.next().await,
            Err(ProtoError::Unexpected(_))
        ));

        let (host, _agent) = agent_replying(vec![json(&Event::Error {
            code: crate::error_code::ERROR_NO_SUCH_PROCESS.into(),
            message: "no p9".into(),
        })])
        .await;
        let refused = attach_process(host, "p9", 0, false, SECOND).await;
        assert!(
            matches!(refused, Err(ProtoError::Agent { code, .. }) if code == "no_such_process")
        );
    }

    #[tokio::test]
    async fn a_silent_agent_times_out_and_oversized_output_is_refused() {
        let (host, _agent) = agent_replying(vec![]).await;
        let mut host = host;
        let started = tokio::time::Instant::now();
        let result = list_processes(&mut host, Duration::from_millis(100)).await;
        assert!(matches!(result, Err(ProtoError::Timeout(_))));
        assert!(started.elapsed() < SECOND);

        let (host, _agent) = agent_replying(vec![
            json(&ProcessEvent::OutputFrom { offset: 0 }),
            (FrameKind::Stdout, vec![b'x'; ATTACH_FRAME_LIMIT + 1]),
        ])
        .await;
        let (mut output, _input) = attach_process(host, "p1", 0, false, SECOND).await.unwrap();
        assert!(matches!(
            output.next().await,
            Err(ProtoError::FrameTooLarge { .. })
        ));
    }

    #[tokio::test]
    async fn stdin_is_sent_after_the_request_and_must_be_taken_whole() {
        let (mut host, mut agent) = duplex(1 << 20);
        let data = vec![7u8; STDIN_CHUNK_LEN + 5];
        let agent_task = tokio::spawn(async move {
            let request: Request = read_frame(&mut agent).await.unwrap().parse_json().unwrap();
            let mut received = Vec::new();
            while received.len() < STDIN_CHUNK_LEN + 5 {
                let frame = read_frame(&mut agent).await.unwrap();
                assert_eq!(frame.kind, FrameKind::Stdin);
                received.extend(frame.payload);
            }
            // Claims fewer bytes than were sent.
            write_json(&mut agent, &ProcessEvent::StdinWritten { bytes: 1 })
                .await
                .unwrap();
            (request, received.len())
        });
        let result = write_process_stdin(&mut host, "p2", &data, true, SECOND).await;
        assert!(matches!(result, Err(ProtoError::Unexpected(_))));
        let (request, received) = agent_task.await.unwrap();
        assert_eq!(
            request,
            Request::Process(ProcessRequest::ProcessStdin {
                id: "p2".into(),
                len: data.len() as u64,
                close: true
            })
        );
        assert_eq!(received, data.len());
    }
}
