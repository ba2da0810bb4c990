//! Archives of the fake sandbox's directories, for snapshots: its files by name below the
//! directory, as JSON (the service keeps archives as opaque bytes, so any encoding does).

use super::store::Files;
use super::wire::{read_input, refuse, Input};
use sandboxd_agent_proto::host::{write_frame, write_json};
use sandboxd_agent_proto::{ArchiveSummary, ErrorCode, Event, FilesEvent, FrameKind};
use sandboxd_backend::WORKDIR;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tokio::io::DuplexStream;

/// What keeps a session's archives waiting, as a starved agent's do: held for writing by a
/// test, `hold` makes each archive wait, counted in `waiting` while it does.
pub(in crate::fake) struct ArchiveGate {
    pub(in crate::fake) hold: Option<Arc<tokio::sync::RwLock<()>>>,
    pub(in crate::fake) waiting: Arc<AtomicU32>,
}

pub(super) async fn read_archive(
    stream: &mut DuplexStream,
    files: &Files,
    (path, max_bytes): (&str, u64),
    gate: ArchiveGate,
) -> Option<()> {
    if let Some(hold) = gate.hold {
        gate.waiting.fetch_add(1, Ordering::SeqCst);
        let _ = hold.read().await;
        gate.waiting.fetch_sub(1, Ordering::SeqCst);
    }
    let tree = archive_of(files, path);
    let bytes: u64 = tree.values().map(|c| c.len() as u64).sum();
    if bytes > max_bytes {
        return refuse(stream, ErrorCode::TooLarge, "over the limit").await;
    }
    let entries = tree.len() as u64;
    let opened = Event::Files(FilesEvent::ArchiveOpened { entries, bytes });
    write_json(stream, &opened).await.ok()?;
    let encoded = serde_json::to_vec(&tree).ok()?;
    write_frame(stream, FrameKind::Stdout, &encoded)
        .await
        .ok()?;
    let summary = ArchiveSummary {
        files: entries,
        bytes,
        ..ArchiveSummary::default()
    };
    write_json(stream, &FilesEvent::ArchiveEnd(summary))
        .await
        .ok()
}

pub(super) async fn write_archive(
    stream: &mut DuplexStream,
    files: &Files,
    path: &str,
) -> Option<()> {
    write_json(stream, &Event::WriteReady).await.ok()?;
    let Input::Complete(encoded) = read_input(stream).await? else {
        return refuse(stream, ErrorCode::Cancelled, "upload cancelled").await;
    };
    let tree: BTreeMap<String, Vec<u8>> = serde_json::from_slice(&encoded).ok()?;
    let summary = ArchiveSummary {
        files: tree.len() as u64,
        bytes: tree.values().map(|c| c.len() as u64).sum(),
        ..ArchiveSummary::default()
    };
    files.lock().ok()?.extend(
        tree.into_iter()
            .map(|(name, contents)| (in_sandbox(path, &name), contents)),
    );
    write_json(stream, &FilesEvent::ArchiveWritten(summary))
        .await
        .ok()
}

/// The files below `dir` by their names under it. A relative name is in the working
/// directory, as the agent resolves it.
fn archive_of(files: &Files, dir: &str) -> BTreeMap<String, Vec<u8>> {
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    let files = files.lock().map(|f| f.clone()).unwrap_or_default();
    files
        .into_iter()
        .filter_map(|(name, contents)| {
            let absolute = match name.starts_with('/') {
                true => name,
                false => format!("{WORKDIR}/{name}"),
            };
            Some((absolute.strip_prefix(&prefix)?.to_string(), contents))
        })
        .collect()
}

/// The key a file extracted under `dir` is kept by: relative in the working directory.
fn in_sandbox(dir: &str, name: &str) -> String {
    match dir.trim_end_matches('/') {
        WORKDIR => name.to_string(),
        dir => format!("{dir}/{name}"),
    }
}
