//! Clients for describing, creating and moving paths and for watching a directory. As for the
//! other file operations, every wait for an answer has a deadline; a watch's changes may be
//! quiet for as long as the directory is, so only their size is bounded.

use super::files::{next_event, unexpected, within};
use super::framing::{read_frame, write_json};
use crate::error::ProtoError;
use crate::message::{Event, FileChange, FileStat, FilesEvent, FilesRequest, Request};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// Changes accepted in one frame; the agent sends far fewer.
const MAX_CHANGES_PER_FRAME: usize = 1024;
/// The longest path a change may name: PATH_MAX, with room for replaced non-UTF-8 bytes.
const MAX_CHANGE_PATH_LEN: usize = 3 * 4096;

/// What is at `path`, a final symlink described.
pub async fn stat_path<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    path: &str,
    timeout: Duration,
) -> Result<FileStat, ProtoError> {
    let request = Request::Files(FilesRequest::Stat {
        path: path.to_string(),
    });
    within(timeout, write_json(&mut stream, &request)).await?;
    match next_event(&mut stream, timeout).await? {
        Event::Files(FilesEvent::Stat(stat)) => Ok(stat),
        other => Err(unexpected(other, "a stat")),
    }
}

/// Creates a directory (with `parents`, its ancestors); whether it was made now.
pub async fn make_dir<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    path: &str,
    parents: bool,
    timeout: Duration,
) -> Result<bool, ProtoError> {
    let request = Request::Files(FilesRequest::MakeDir {
        path: path.to_string(),
        parents,
    });
    within(timeout, write_json(&mut stream, &request)).await?;
    match next_event(&mut stream, timeout).await? {
        Event::Files(FilesEvent::DirMade { created }) => Ok(created),
        other => Err(unexpected(other, "a mkdir")),
    }
}

/// Renames `from` to `to`; what is at `to` afterwards.
pub async fn move_path<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    from: &str,
    to: &str,
    overwrite: bool,
    timeout: Duration,
) -> Result<FileStat, ProtoError> {
    let request = Request::Files(FilesRequest::Move {
        from: from.to_string(),
        to: to.to_string(),
        overwrite,
    });
    within(timeout, write_json(&mut stream, &request)).await?;
    match next_event(&mut stream, timeout).await? {
        Event::Files(FilesEvent::Stat(stat)) => Ok(stat),
        other => Err(unexpected(other, "a move")),
    }
}

/// A directory being watched; see [`watch_dir`]. Dropping it ends the watch (the agent sees
/// its connection close).
#[derive(Debug)]
pub struct DirWatch<S> {
    stream: S,
    ended: bool,
}

/// Starts watching the directory at `path`, waiting up to `timeout` for the agent to confirm.
pub async fn watch_dir<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    path: &str,
    recursive: bool,
    max_watches: u32,
    timeout: Duration,
) -> Result<DirWatch<S>, ProtoError> {
    let request = Request::Files(FilesRequest::Watch {
        path: path.to_string(),
        recursive,
        max_watches,
    });
    within(timeout, write_json(&mut stream, &request)).await?;
    match next_event(&mut stream, timeout).await? {
        Event::Files(FilesEvent::Watching) => Ok(DirWatch {
            stream,
            ended: false,
        }),
        other => Err(unexpected(other, "starting a watch")),
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> DirWatch<S> {
    /// The next batch of changes, waiting as long as the directory stays quiet; `None` once
    /// the directory is gone.
    pub async fn next_changes(&mut self) -> Result<Option<Vec<FileChange>>, ProtoError> {
        if self.ended {
            return Ok(None);
        }
        match read_frame(&mut self.stream).await?.parse_json()? {
            Event::Files(FilesEvent::FileChanges { changes }) => {
                if changes.len() > MAX_CHANGES_PER_FRAME {
                    return Err(ProtoError::Unexpected(format!(
                        "{} changes in one frame",
                        changes.len()
                    )));
                }
                if let Some(long) = changes.iter().find(|c| c.path.len() > MAX_CHANGE_PATH_LEN) {
                    return Err(ProtoError::Unexpected(format!(
                        "a change path of {} bytes",
                        long.path.len()
                    )));
                }
                Ok(Some(changes))
            }
            Event::Files(FilesEvent::WatchEnd) => {
                self.ended = true;
                Ok(None)
            }
            Event::Error { code, message } => Err(ProtoError::Agent { code, message }),
            other => Err(unexpected(other, "a watch")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FrameKind;
    use crate::host::framing::write_frame;
    use crate::message::ChangeKind;

    const STEP: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn a_watch_yields_batches_until_its_end_and_refuses_oversized_ones() {
        let (service, mut agent) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let request: Request = read_frame(&mut agent).await?.parse_json()?;
            assert!(matches!(
                request,
                Request::Files(FilesRequest::Watch {
                    recursive: true,
                    max_watches: 7,
                    ..
                })
            ));
            write_json(&mut agent, &FilesEvent::Watching).await?;
            let change = FileChange {
                kind: ChangeKind::Create,
                path: "d/f".into(),
            };
            let changes = vec![change.clone()];
            write_json(&mut agent, &FilesEvent::FileChanges { changes }).await?;
            write_json(&mut agent, &FilesEvent::WatchEnd).await?;
            let changes = vec![change; MAX_CHANGES_PER_FRAME + 1];
            write_json(&mut agent, &FilesEvent::FileChanges { changes }).await?;
            write_frame(&mut agent, FrameKind::Stdout, b"x").await
        });
        let mut watch = watch_dir(service, "d", true, 7, STEP).await.unwrap();
        let batch = watch.next_changes().await.unwrap().unwrap();
        assert_eq!(batch[0].path, "d/f");
        assert_eq!(watch.next_changes().await.unwrap(), None);
        assert_eq!(
            watch.next_changes().await.unwrap(),
            None,
            "ended stays ended"
        );
        watch.ended = false;
        assert!(matches!(
            watch.next_changes().await,
            Err(ProtoError::Unexpected(_))
        ));
    }
}
