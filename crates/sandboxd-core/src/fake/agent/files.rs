//! File operations on the fake sandbox's map: every path is a file, or a directory when a
//! file lies below it.

use super::archive::{self, ArchiveGate};
use super::store::{fake_key, is_dir, Files};
use super::wire::{read_input, refuse, Input};
use sandboxd_agent_proto::host::{read_frame, write_frame, write_json};
use sandboxd_agent_proto::{
    DirEntry, EntryKind, ErrorCode, Event, FileStat, FilesEvent, FilesRequest, FrameKind,
};
use tokio::io::DuplexStream;

/// The table of the file requests the fake answers (archives in `archive.rs`).
pub(super) async fn serve(
    stream: &mut DuplexStream,
    files: &Files,
    request: FilesRequest,
    gate: ArchiveGate,
) -> Option<()> {
    let (c, f) = (stream, files);
    match request {
        FilesRequest::ListDir { path, .. } => list_dir(c, f, &path).await,
        FilesRequest::ReadFile { path, .. } => read_file(c, f, &path).await,
        FilesRequest::WriteFile { path, .. } => write_file(c, f, &path).await,
        FilesRequest::Delete { path, .. } => delete(c, f, &path).await,
        FilesRequest::Stat { path } => stat(c, f, &path).await,
        FilesRequest::MakeDir { path, .. } => make_dir(c, f, &path).await,
        FilesRequest::Move {
            from,
            to,
            overwrite,
        } => move_path(c, f, (&from, &to), overwrite).await,
        FilesRequest::Watch { path, .. } => watch(c, f, &path).await,
        FilesRequest::ReadArchive { path, max_bytes } => {
            archive::read_archive(c, f, (&path, max_bytes), gate).await
        }
        FilesRequest::WriteArchive { path, .. } => archive::write_archive(c, f, &path).await,
    }
}

async fn list_dir(stream: &mut DuplexStream, files: &Files, path: &str) -> Option<()> {
    let path = fake_key(path);
    let prefix = format!("{}/", path.trim_end_matches('/'));
    let listed = files.lock().ok()?.clone();
    let entries: Vec<DirEntry> = listed
        .iter()
        .filter_map(|(name, contents)| {
            let rest = name.strip_prefix(&prefix).or_else(|| {
                (path == ".")
                    .then_some(name.as_str())
                    .filter(|n| !n.contains('/'))
            })?;
            Some(DirEntry {
                name: rest.to_string(),
                kind: EntryKind::File,
                size: contents.len() as u64,
                mode: 0o644,
                modified_secs: 0,
                modified_nanos: 0,
                target_kind: None,
            })
        })
        .collect();
    write_json(stream, &FilesEvent::DirEntries { entries })
        .await
        .ok()?;
    write_json(stream, &FilesEvent::DirEnd { truncated: false })
        .await
        .ok()
}

async fn read_file(stream: &mut DuplexStream, files: &Files, path: &str) -> Option<()> {
    let path = fake_key(path);
    let contents = files.lock().ok()?.get(&path).cloned();
    let Some(contents) = contents else {
        return refuse(stream, ErrorCode::NotFound, "no such file").await;
    };
    let size = Some(contents.len() as u64);
    write_json(stream, &FilesEvent::FileOpened { size })
        .await
        .ok()?;
    write_frame(stream, FrameKind::Stdout, &contents)
        .await
        .ok()?;
    let bytes = contents.len() as u64;
    write_json(stream, &FilesEvent::FileEnd { bytes })
        .await
        .ok()
}

async fn write_file(stream: &mut DuplexStream, files: &Files, path: &str) -> Option<()> {
    let path = fake_key(path);
    write_json(stream, &Event::WriteReady).await.ok()?;
    let Input::Complete(contents) = read_input(stream).await? else {
        return refuse(stream, ErrorCode::Cancelled, "upload cancelled").await;
    };
    let bytes = contents.len() as u64;
    files.lock().ok()?.insert(path, contents);
    write_json(stream, &FilesEvent::FileWritten { bytes })
        .await
        .ok()
}

/// As the agent: nothing there is no error.
async fn delete(stream: &mut DuplexStream, files: &Files, path: &str) -> Option<()> {
    files.lock().ok()?.remove(&fake_key(path));
    write_json(stream, &FilesEvent::Deleted).await.ok()
}

async fn stat(stream: &mut DuplexStream, files: &Files, path: &str) -> Option<()> {
    match fake_stat(files, &fake_key(path)) {
        Some(stat) => write_json(stream, &FilesEvent::Stat(stat)).await.ok(),
        None => refuse(stream, ErrorCode::NotFound, "no such file").await,
    }
}

async fn make_dir(stream: &mut DuplexStream, files: &Files, path: &str) -> Option<()> {
    let path = fake_key(path);
    if files.lock().ok()?.contains_key(&path) {
        return refuse(stream, ErrorCode::NotADirectory, "a file is there").await;
    }
    let created = !is_dir(files, &path);
    write_json(stream, &FilesEvent::DirMade { created })
        .await
        .ok()
}

async fn move_path(
    stream: &mut DuplexStream,
    files: &Files,
    (from, to): (&str, &str),
    overwrite: bool,
) -> Option<()> {
    let (from, to) = (fake_key(from), fake_key(to));
    let moved = {
        let mut files = files.lock().ok()?;
        if files.contains_key(&to) && !overwrite {
            Err((ErrorCode::Exists, "the destination exists"))
        } else if let Some(contents) = files.remove(&from) {
            files.insert(to.clone(), contents);
            Ok(())
        } else {
            Err((ErrorCode::NotFound, "no such file"))
        }
    };
    match moved.map(|()| fake_stat(files, &to)) {
        Ok(Some(stat)) => write_json(stream, &FilesEvent::Stat(stat)).await.ok(),
        Ok(None) => None,
        Err((code, message)) => refuse(stream, code, message).await,
    }
}

/// Watches without reporting anything, until the service lets go.
async fn watch(stream: &mut DuplexStream, files: &Files, path: &str) -> Option<()> {
    if !is_dir(files, &fake_key(path)) {
        return refuse(stream, ErrorCode::NotFound, "no such directory").await;
    }
    write_json(stream, &FilesEvent::Watching).await.ok()?;
    let _ = read_frame(stream).await;
    Some(())
}

/// A file of the map, or a directory holding one.
fn fake_stat(files: &Files, path: &str) -> Option<FileStat> {
    let size = files.lock().ok()?.get(path).map(|c| c.len() as u64);
    let kind = match size {
        Some(_) => EntryKind::File,
        None if is_dir(files, path) => EntryKind::Dir,
        None => return None,
    };
    let entry = DirEntry {
        name: path.rsplit('/').next().unwrap_or(path).to_string(),
        kind,
        size: size.unwrap_or(0),
        mode: 0o644,
        modified_secs: 0,
        modified_nanos: 0,
        target_kind: None,
    };
    Some(FileStat {
        entry,
        symlink_target: None,
        resolved_target: None,
    })
}
