//! Clients for the file operations. The agent is untrusted: every wait has a deadline, a
//! listing is bounded in entries and name length, and a download never yields more bytes than
//! the agent announced (or the limit asked for when it announced no size).

use super::framing::{read_frame, write_frame, write_json};
use crate::error::ProtoError;
use crate::frame::FrameKind;
use crate::limits::FILE_CHUNK_LEN;
use crate::message::{DirEntry, Event, FilesEvent, FilesRequest, Request};
use std::io;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

/// Longer names than this are refused: Linux allows 255 bytes, which become at most three
/// times as many when bytes that are not UTF-8 are replaced.
const MAX_NAME_LEN: usize = 3 * 255;

/// A directory's entries, in the order the agent read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirListing {
    pub entries: Vec<DirEntry>,
    /// The directory held more than the entries asked for.
    pub truncated: bool,
}

/// Why an upload failed.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("the upload is over the limit of {limit} bytes")]
    TooLarge { limit: u64 },
    /// Reading the bytes to upload failed or stalled (e.g. the client went away).
    #[error("reading the upload failed: {0}")]
    Source(io::Error),
    #[error(transparent)]
    Proto(#[from] ProtoError),
}

/// Lists the directory at `path`, each wait for the agent bounded by `step_timeout`.
pub async fn list_dir<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    path: &str,
    max_entries: u32,
    step_timeout: Duration,
) -> Result<DirListing, ProtoError> {
    let request = Request::Files(FilesRequest::ListDir {
        path: path.to_string(),
        max_entries,
    });
    within(step_timeout, write_json(&mut stream, &request)).await?;
    let mut entries = Vec::new();
    loop {
        match next_event(&mut stream, step_timeout).await? {
            Event::Files(FilesEvent::DirEntries { entries: batch }) => {
                if entries.len() + batch.len() > max_entries as usize {
                    return Err(ProtoError::Unexpected(format!(
                        "more than the {max_entries} entries asked for"
                    )));
                }
                if let Some(long) = batch.iter().find(|e| e.name.len() > MAX_NAME_LEN) {
                    return Err(ProtoError::Unexpected(format!(
                        "an entry name of {} bytes",
                        long.name.len()
                    )));
                }
                entries.extend(batch);
            }
            Event::Files(FilesEvent::DirEnd { truncated }) => {
                return Ok(DirListing { entries, truncated })
            }
            other => return Err(unexpected(other, "a listing")),
        }
    }
}

/// Removes the file, symlink or (with `recursive`) directory tree at `path`.
pub async fn delete_path<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    path: &str,
    recursive: bool,
    timeout: Duration,
) -> Result<(), ProtoError> {
    let request = Request::Files(FilesRequest::Delete {
        path: path.to_string(),
        recursive,
    });
    within(timeout, write_json(&mut stream, &request)).await?;
    match next_event(&mut stream, timeout).await? {
        Event::Files(FilesEvent::Deleted) => Ok(()),
        other => Err(unexpected(other, "a delete")),
    }
}

/// A file being read from the agent; see [`open_file`].
#[derive(Debug)]
pub struct FileDownload<S> {
    stream: S,
    /// The exact size, when the agent knows it.
    size: Option<u64>,
    /// The most bytes accepted: the size, or the limit asked for.
    limit: u64,
    received: u64,
    finished: bool,
    idle_timeout: Duration,
}

/// What a download may be; see [`FilesRequest::ReadFile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// A file of unknown size is accepted up to this many bytes.
    pub unsized_limit: u64,
    /// The agent refuses a larger file.
    pub max_size: u64,
    /// The agent refuses a file with more bytes of holes (size beyond its allocation).
    pub max_unallocated: u64,
}

/// Opens the regular file at `path` for reading, within `limits`. Each wait for the agent,
/// now and per chunk later, is bounded by `idle_timeout`. The size the agent announces is
/// its word: the caller checks it against `max_size` before relying on it.
pub async fn open_file<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    path: &str,
    limits: ReadLimits,
    idle_timeout: Duration,
) -> Result<FileDownload<S>, ProtoError> {
    let unsized_limit = limits.unsized_limit;
    let request = Request::Files(FilesRequest::ReadFile {
        path: path.to_string(),
        unsized_limit,
        max_size: Some(limits.max_size),
        max_unallocated: Some(limits.max_unallocated),
    });
    within(idle_timeout, write_json(&mut stream, &request)).await?;
    let size = match next_event(&mut stream, idle_timeout).await? {
        Event::Files(FilesEvent::FileOpened { size }) => size,
        other => return Err(unexpected(other, "opening a file")),
    };
    let mut download = FileDownload {
        stream,
        size,
        limit: size.unwrap_or(unsized_limit),
        received: 0,
        finished: false,
        idle_timeout,
    };
    download.expect_end_when_complete().await?;
    Ok(download)
}

impl<S: AsyncRead + AsyncWrite + Unpin> FileDownload<S> {
    /// The file's size, when the agent announced it.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Whether every byte arrived and the agent confirmed the end.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The next chunk of the file, or `None` after the last one. The chunk that completes an
    /// announced size comes back only after the agent confirmed the end, so a caller that
    /// sees [`is_finished`](Self::is_finished) then knows the whole file arrived intact.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, ProtoError> {
        if self.finished {
            return Ok(None);
        }
        let frame = within(self.idle_timeout, read_frame(&mut self.stream)).await?;
        match frame.kind {
            FrameKind::Stdout if frame.payload.is_empty() => Err(ProtoError::Unexpected(
                "an empty data frame while reading a file".into(),
            )),
            FrameKind::Stdout => {
                self.received += frame.payload.len() as u64;
                if self.received > self.limit {
                    return Err(ProtoError::Unexpected(format!(
                        "more than the {} bytes expected of the file",
                        self.limit
                    )));
                }
                self.expect_end_when_complete().await?;
                Ok(Some(frame.payload))
            }
            FrameKind::Json => {
                let event = frame.parse_json()?;
                self.accept_end(event)?;
                Ok(None)
            }
            kind => Err(ProtoError::Unexpected(format!(
                "a {kind:?} frame while reading a file"
            ))),
        }
    }

    async fn expect_end_when_complete(&mut self) -> Result<(), ProtoError> {
        if self.size == Some(self.received) {
            let event = next_event(&mut self.stream, self.idle_timeout).await?;
            self.accept_end(event)?;
        }
        Ok(())
    }

    fn accept_end(&mut self, event: Event) -> Result<(), ProtoError> {
        match event {
            Event::Files(FilesEvent::FileEnd { bytes })
                if bytes == self.received && self.size.is_none_or(|size| size == bytes) =>
            {
                self.finished = true;
                Ok(())
            }
            Event::Files(FilesEvent::FileEnd { bytes }) => Err(ProtoError::Unexpected(format!(
                "the file ended after {bytes} bytes; {} arrived of {:?} announced",
                self.received, self.size
            ))),
            Event::Error { code, message } => Err(ProtoError::Agent { code, message }),
            other => Err(unexpected(other, "reading a file")),
        }
    }
}

/// Writes the bytes of `source` to the file at `path`, atomically, and returns how many were
/// written. More than `max_bytes` is refused without sending the excess. The file gets
/// `mode`'s permission bits, or 0644 without one.
///
/// Whenever this returns, the agent has either committed the file or been told to drop it,
/// and on a refusal or a failed `source` it is given up to `step_timeout` to confirm that
/// the temporary file is gone, so nothing partial outlives the answer. `step_timeout` bounds
/// each wait for the agent and for `source`.
pub async fn upload_file<S, R>(
    stream: S,
    path: &str,
    mode: Option<u32>,
    max_bytes: u64,
    source: R,
    step_timeout: Duration,
) -> Result<u64, UploadError>
where
    S: AsyncRead + AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let request = Request::Files(FilesRequest::WriteFile {
        path: path.to_string(),
        max_bytes,
        mode,
    });
    match upload(stream, &request, max_bytes, source, step_timeout).await? {
        (sent, Event::Files(FilesEvent::FileWritten { bytes })) if bytes == sent => Ok(sent),
        (_, other) => Err(unexpected(other, "committing an upload").into()),
    }
}

/// Sends `request`, then, once the agent is ready, the bytes of `source` (at most
/// `max_bytes`) and the empty frame that ends them; returns the bytes sent and the agent's
/// answer. Every failure leaves the agent told to drop what it received, as for
/// [`upload_file`].
pub(crate) async fn upload<S, R>(
    stream: S,
    request: &Request,
    max_bytes: u64,
    source: R,
    step_timeout: Duration,
) -> Result<(u64, Event), UploadError>
where
    S: AsyncRead + AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let (mut reader, mut writer) = tokio::io::split(stream);
    within(step_timeout, write_json(&mut writer, request)).await?;
    match next_event(&mut reader, step_timeout).await? {
        Event::WriteReady => {}
        other => return Err(unexpected(other, "starting an upload").into()),
    }

    // The agent only speaks again to end the upload, so its answer is awaited while the
    // bytes go out: an early one is a refusal (e.g. the disk is full) and stops the sending.
    let answer = read_event(&mut reader);
    tokio::pin!(answer);
    let fed = {
        let feed = feed(&mut writer, source, max_bytes, step_timeout);
        tokio::pin!(feed);
        tokio::select! {
            fed = &mut feed => fed,
            early = &mut answer => {
                let refusal = match early {
                    Ok(other) => unexpected(other, "an upload"),
                    Err(e) => e,
                };
                return Err(refusal.into());
            }
        }
    };
    match fed {
        Ok(sent) => Ok((sent, within(step_timeout, answer).await?)),
        Err(e) => {
            // The answer to the cancel (or to the upload) confirms the temporary file is
            // gone; if it does not come in time, dropping the connection removes it too.
            let cancelled = async {
                write_json(&mut writer, &Request::Cancel).await?;
                answer.await
            };
            let _ = within(step_timeout, cancelled).await;
            Err(e)
        }
    }
}

/// Sends `source` in data frames, then the empty frame that commits; returns the bytes sent.
async fn feed<W, R>(
    writer: &mut W,
    mut source: R,
    max_bytes: u64,
    step_timeout: Duration,
) -> Result<u64, UploadError>
where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let mut buffer = vec![0; FILE_CHUNK_LEN];
    let mut sent = 0u64;
    loop {
        let read = tokio::time::timeout(step_timeout, source.read(&mut buffer))
            .await
            .map_err(|_| {
                UploadError::Source(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no data for {step_timeout:?}"),
                ))
            })?
            .map_err(UploadError::Source)?;
        if read == 0 {
            break;
        }
        sent += read as u64;
        if sent > max_bytes {
            return Err(UploadError::TooLarge { limit: max_bytes });
        }
        within(
            step_timeout,
            write_frame(writer, FrameKind::Stdin, &buffer[..read]),
        )
        .await?;
    }
    within(step_timeout, write_frame(writer, FrameKind::Stdin, &[])).await?;
    Ok(sent)
}

/// The next event from the agent; a data frame here is a protocol error and an error event
/// becomes [`ProtoError::Agent`].
pub(super) async fn read_event<R: AsyncRead + Unpin>(reader: &mut R) -> Result<Event, ProtoError> {
    match read_frame(reader).await?.parse_json()? {
        Event::Error { code, message } => Err(ProtoError::Agent { code, message }),
        event => Ok(event),
    }
}

pub(crate) async fn next_event<R: AsyncRead + Unpin>(
    reader: &mut R,
    timeout: Duration,
) -> Result<Event, ProtoError> {
    within(timeout, read_event(reader)).await
}

pub(crate) async fn within<T>(
    timeout: Duration,
    work: impl std::future::Future<Output = Result<T, ProtoError>>,
) -> Result<T, ProtoError> {
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(ProtoError::Timeout(timeout)),
    }
}

pub(crate) fn unexpected(event: Event, during: &str) -> ProtoError {
    ProtoError::Unexpected(format!("{event:?} during {during}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_code::ERROR_CANCELLED;
    use tokio::io::{AsyncReadExt, DuplexStream};

    const STEP: Duration = Duration::from_secs(5);

    async fn next_request(agent: &mut DuplexStream) -> Request {
        read_frame(agent).await.unwrap().parse_json().unwrap()
    }

    /// A fake agent that answers a read with `size` and then sends `data`, and maybe an end.
    async fn download_from(size: Option<u64>, data: &[u8], end: Option<u64>) -> Vec<u8> {
        let (service, mut agent) = tokio::io::duplex(1 << 20);
        let data = data.to_vec();
        tokio::spawn(async move {
            next_request(&mut agent).await;
            write_json(&mut agent, &FilesEvent::FileOpened { size }).await?;
            write_frame(&mut agent, FrameKind::Stdout, &data).await?;
            if let Some(bytes) = end {
                write_json(&mut agent, &FilesEvent::FileEnd { bytes }).await?;
            }
            // Holds the connection open until the service drops it.
            read_frame(&mut agent).await
        });
        let limits = ReadLimits {
            unsized_limit: 4,
            max_size: 10,
            max_unallocated: 10,
        };
        let mut download = open_file(service, "f", limits, STEP).await.unwrap();
        let mut received = Vec::new();
        loop {
            match download.next_chunk().await {
                Ok(Some(chunk)) => received.extend(chunk),
                Ok(None) => return received,
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[tokio::test]
    async fn a_download_is_checked_against_what_was_announced() {
        assert_eq!(download_from(Some(3), b"abc", Some(3)).await, b"abc");
        assert_eq!(download_from(None, b"abcd", Some(4)).await, b"abcd");
    }

    #[tokio::test]
    #[should_panic(expected = "more than the 3 bytes")]
    async fn a_download_longer_than_announced_is_refused() {
        download_from(Some(3), b"abcd", Some(4)).await;
    }

    #[tokio::test]
    #[should_panic(expected = "the file ended after 3 bytes")]
    async fn a_download_shorter_than_announced_is_refused() {
        download_from(Some(5), b"abc", Some(3)).await;
    }

    #[tokio::test]
    #[should_panic(expected = "more than the 4 bytes")]
    async fn a_download_without_a_size_is_bounded() {
        download_from(None, b"abcde", Some(5)).await;
    }

    #[tokio::test]
    async fn an_upload_over_the_limit_is_cancelled_before_the_excess_is_sent() {
        let (service, mut agent) = tokio::io::duplex(1 << 20);
        let fake = tokio::spawn(async move {
            next_request(&mut agent).await;
            write_json(&mut agent, &Event::WriteReady).await.unwrap();
            let mut received = Vec::new();
            loop {
                let frame = read_frame(&mut agent).await.unwrap();
                if frame.kind == FrameKind::Json {
                    assert_eq!(frame.parse_json::<Request>().unwrap(), Request::Cancel);
                    let cancelled = Event::Error {
                        code: ERROR_CANCELLED.into(),
                        message: "cancelled".into(),
                    };
                    write_json(&mut agent, &cancelled).await.unwrap();
                    return received;
                }
                received.extend(frame.payload);
            }
        });
        // Two reads of 8 bytes against a limit of 10: the second must not be sent.
        let source = (&b"01234567"[..]).chain(&b"89abcdef"[..]);
        let result = upload_file(service, "f", None, 10, source, STEP).await;
        assert!(matches!(result, Err(UploadError::TooLarge { limit: 10 })));
        assert_eq!(fake.await.unwrap(), b"01234567");
    }

    #[tokio::test]
    async fn an_early_refusal_stops_an_endless_upload() {
        let (service, mut agent) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            next_request(&mut agent).await;
            write_json(&mut agent, &Event::WriteReady).await?;
            let full = Event::Error {
                code: "no_space".into(),
                message: "full".into(),
            };
            write_json(&mut agent, &full).await?;
            // Stops reading, as an agent that gave up may.
            std::future::pending::<Result<(), ProtoError>>().await
        });
        let result = upload_file(service, "f", None, u64::MAX, tokio::io::repeat(7), STEP).await;
        assert!(
            matches!(&result, Err(UploadError::Proto(ProtoError::Agent { code, .. })) if code == "no_space"),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn a_listing_is_bounded_in_entries() {
        let (service, mut agent) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            next_request(&mut agent).await;
            let entry = DirEntry {
                name: "x".into(),
                kind: crate::message::EntryKind::File,
                size: 0,
                mode: 0o644,
                modified_secs: 0,
                modified_nanos: 0,
                target_kind: None,
            };
            let entries = vec![entry; 3];
            write_json(&mut agent, &FilesEvent::DirEntries { entries }).await?;
            read_frame(&mut agent).await
        });
        let result = list_dir(service, ".", 2, STEP).await;
        assert!(
            matches!(result, Err(ProtoError::Unexpected(_))),
            "{result:?}"
        );
    }
}
