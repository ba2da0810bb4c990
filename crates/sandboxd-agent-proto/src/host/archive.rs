//! Clients for directory trees as tar archives. The agent is untrusted: a download yields no
//! more than the tar of what it announced (its entries and content bytes, each within the
//! limits asked for) can take, and every wait has a deadline.

use super::files::{next_event, unexpected, upload, within, UploadError};
use super::framing::{read_frame, write_json};
use crate::error::ProtoError;
use crate::frame::FrameKind;
use crate::limits::MAX_ARCHIVE_ENTRIES;
use crate::message::{ArchiveSummary, Event, FilesEvent, FilesRequest, Request};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// The most a tar spends on one entry beyond its contents: its header, a long name and a
/// long link target (a header and up to 4 KiB each), and the padding of its contents.
const ENTRY_OVERHEAD: u64 = 3 * 512 + 2 * 4096 + 512;
/// The end marker and the padding of the last record.
const END_OVERHEAD: u64 = 20 * 512;

/// The most bytes a tar of `entries` entries holding `bytes` bytes of contents may take.
pub fn archive_stream_limit(entries: u64, bytes: u64) -> u64 {
    bytes
        .saturating_add(entries.saturating_mul(ENTRY_OVERHEAD))
        .saturating_add(END_OVERHEAD)
}

/// A directory tree being read from the agent as a tar; see [`open_archive`].
#[derive(Debug)]
pub struct ArchiveDownload<S> {
    stream: S,
    /// The content bytes announced.
    bytes: u64,
    /// The most tar bytes accepted.
    limit: u64,
    received: u64,
    summary: Option<ArchiveSummary>,
    idle_timeout: Duration,
}

/// Asks for the tree at `path` as a tar, its files holding at most `max_bytes`. Each wait
/// for the agent, now and per chunk later, is bounded by `idle_timeout`.
pub async fn open_archive<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    path: &str,
    max_bytes: u64,
    idle_timeout: Duration,
) -> Result<ArchiveDownload<S>, ProtoError> {
    let request = Request::Files(FilesRequest::ReadArchive {
        path: path.to_string(),
        max_bytes,
    });
    within(idle_timeout, write_json(&mut stream, &request)).await?;
    let (entries, bytes) = match next_event(&mut stream, idle_timeout).await? {
        Event::Files(FilesEvent::ArchiveOpened { entries, bytes }) => (entries, bytes),
        other => return Err(unexpected(other, "opening an archive")),
    };
    if entries > MAX_ARCHIVE_ENTRIES || bytes > max_bytes {
        return Err(ProtoError::Unexpected(format!(
            "an archive of {entries} entries and {bytes} bytes, over the limits asked for"
        )));
    }
    Ok(ArchiveDownload {
        stream,
        bytes,
        limit: archive_stream_limit(entries, bytes),
        received: 0,
        summary: None,
        idle_timeout,
    })
}

impl<S: AsyncRead + AsyncWrite + Unpin> ArchiveDownload<S> {
    /// The content bytes the archive holds, as the agent announced them.
    pub fn content_bytes(&self) -> u64 {
        self.bytes
    }

    /// What the archive held, once the agent confirmed its end.
    pub fn summary(&self) -> Option<ArchiveSummary> {
        self.summary
    }

    /// The next chunk of the tar, or `None` after the agent confirmed its end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, ProtoError> {
        if self.summary.is_some() {
            return Ok(None);
        }
        let frame = within(self.idle_timeout, read_frame(&mut self.stream)).await?;
        match frame.kind {
            FrameKind::Stdout => {
                self.received += frame.payload.len() as u64;
                if self.received > self.limit {
                    return Err(ProtoError::Unexpected(format!(
                        "more than the {} bytes an archive of what was announced takes",
                        self.limit
                    )));
                }
                Ok(Some(frame.payload))
            }
            FrameKind::Json => match frame.parse_json()? {
                Event::Files(FilesEvent::ArchiveEnd(summary)) if summary.bytes == self.bytes => {
                    self.summary = Some(summary);
                    Ok(None)
                }
                Event::Error { code, message } => Err(ProtoError::Agent { code, message }),
                other => Err(unexpected(other, "reading an archive")),
            },
            kind => Err(ProtoError::Unexpected(format!(
                "a {kind:?} frame while reading an archive"
            ))),
        }
    }
}

/// Has the agent extract the tar read from `source` under the directory `path`, its files
/// holding at most `max_bytes`. Whenever this returns, the agent has either put the whole
/// tree in place or been told to drop it, as for an upload of a file.
pub async fn upload_archive<S, R>(
    stream: S,
    path: &str,
    max_bytes: u64,
    source: R,
    step_timeout: Duration,
) -> Result<ArchiveSummary, UploadError>
where
    S: AsyncRead + AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let request = Request::Files(FilesRequest::WriteArchive {
        path: path.to_string(),
        max_bytes,
    });
    let limit = archive_stream_limit(MAX_ARCHIVE_ENTRIES, max_bytes);
    match upload(stream, &request, limit, source, step_timeout).await {
        Ok((_, Event::Files(FilesEvent::ArchiveWritten(summary))))
            if summary.bytes <= max_bytes =>
        {
            Ok(summary)
        }
        Ok((_, other)) => Err(unexpected(other, "extracting an archive").into()),
        // Over the stream's bound, the contents are over theirs.
        Err(UploadError::TooLarge { .. }) => Err(UploadError::TooLarge { limit: max_bytes }),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::framing::write_frame;
    use tokio::io::DuplexStream;

    const STEP: Duration = Duration::from_secs(5);

    async fn fake_agent(mut agent: DuplexStream, entries: u64, bytes: u64, data: Vec<u8>) {
        let _ = read_frame(&mut agent).await;
        let opened = Event::Files(FilesEvent::ArchiveOpened { entries, bytes });
        write_json(&mut agent, &opened).await.unwrap();
        for chunk in data.chunks(4096) {
            if write_frame(&mut agent, FrameKind::Stdout, chunk)
                .await
                .is_err()
            {
                return;
            }
        }
        let summary = ArchiveSummary {
            files: entries,
            bytes,
            ..ArchiveSummary::default()
        };
        let _ = write_json(&mut agent, &FilesEvent::ArchiveEnd(summary)).await;
        let _ = read_frame(&mut agent).await;
    }

    async fn download(entries: u64, bytes: u64, data: Vec<u8>) -> Result<Vec<u8>, ProtoError> {
        let (service, agent) = tokio::io::duplex(1 << 20);
        tokio::spawn(fake_agent(agent, entries, bytes, data));
        let mut archive = open_archive(service, "d", 1 << 20, STEP).await?;
        let mut received = Vec::new();
        while let Some(chunk) = archive.next_chunk().await? {
            received.extend(chunk);
        }
        assert_eq!(archive.summary().unwrap().bytes, bytes);
        Ok(received)
    }

    #[tokio::test]
    async fn a_download_is_bounded_by_what_was_announced() {
        let fits = vec![1u8; 512 + 512 + 1024];
        assert_eq!(download(1, 100, fits.clone()).await.unwrap(), fits);
        let limit = usize::try_from(archive_stream_limit(1, 100)).unwrap();
        let result = download(1, 100, vec![1u8; limit + 1]).await;
        assert!(
            matches!(result, Err(ProtoError::Unexpected(_))),
            "{result:?}"
        );
        let over = download(1, 2 << 20, Vec::new()).await;
        assert!(matches!(over, Err(ProtoError::Unexpected(_))), "{over:?}");
    }
}
