//! envd's `filesystem.Filesystem` service over the core's file operations: ListDir (to a
//! depth), Remove, Stat, MakeDir, Move, and directory watches (the WatchDir stream, and the
//! CreateWatcher / GetWatcherEvents / RemoveWatcher calls the SDKs poll with).

use crate::call::SandboxCall;
use crate::connect;
use crate::envd::{authenticate, user_path};
use crate::errors::{Code, E2bError};
use crate::routing::SandboxId;
use crate::state::ClientAddress;
use crate::state::Face;
use crate::watchers;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Extension;
use sandboxd_api::{FileEntry, FileInfo, FileKind};
use serde::Deserialize;
use serde_json::{json, Value};

/// How deep a listing goes at most, and how many entries it gathers.
const MAX_LIST_DEPTH: u32 = 16;
const MAX_LIST_ENTRIES: usize = 10_000;

#[derive(Deserialize, Default)]
#[serde(default)]
struct PathRequest {
    path: String,
    depth: u32,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MoveRequest {
    source: String,
    destination: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WatchRequest {
    path: String,
    recursive: bool,
    include_entry: bool,
    allow_network_mounts: bool,
    watcher_id: String,
}

pub async fn call(
    State(face): State<Face>,
    Path(method): Path<String>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let call = match authenticate(&face, &sandbox, &headers, &address) {
        Ok(call) => call,
        Err(e) if method == "WatchDir" => return connect::failed_stream(e).await,
        Err(e) => return connect::unary(Err(e)),
    };
    if method == "WatchDir" {
        let watch = async {
            let request: WatchRequest = connect::request(body, true).await?;
            let watch = start_watch(&face, &call, &request).await?;
            Ok::<_, E2bError>((watch.path().to_string(), watch))
        };
        return match watch.await {
            Ok((path, watch)) => {
                let (sender, response) = connect::stream();
                tokio::spawn(watchers::stream(sender, path, watch));
                response
            }
            Err(e) => connect::failed_stream(e).await,
        };
    }
    connect::unary(unary(&face, &call, &method, body).await)
}

async fn unary(
    face: &Face,
    call: &SandboxCall,
    method: &str,
    body: Body,
) -> Result<Value, E2bError> {
    let (caller, id) = (&call.caller, &call.id);
    match method {
        "ListDir" => list_dir(face, call, connect::request(body, false).await?).await,
        "Stat" => {
            let request: PathRequest = connect::request(body, false).await?;
            let path = user_path(&request.path)?;
            let info = face.core.stat(caller, id, Some(path)).await?;
            Ok(json!({"entry": described(&info)}))
        }
        "MakeDir" => {
            let request: PathRequest = connect::request(body, false).await?;
            let path = user_path(&request.path)?;
            let made = face.core.make_dir(caller, id, path, true).await?;
            if !made.created {
                return Err(E2bError::new(
                    Code::AlreadyExists,
                    StatusCode::CONFLICT,
                    format!("{} already exists", made.path),
                ));
            }
            let info = face.core.stat(caller, id, Some(made.path)).await?;
            Ok(json!({"entry": described(&info)}))
        }
        "Move" => {
            let request: MoveRequest = connect::request(body, false).await?;
            // envd renames over what is at the destination, as rename(2) does.
            let info = face
                .core
                .move_path(
                    caller,
                    id,
                    user_path(&request.source)?,
                    user_path(&request.destination)?,
                    true,
                )
                .await?;
            Ok(json!({"entry": described(&info)}))
        }
        "Remove" => {
            let request: PathRequest = connect::request(body, false).await?;
            // envd removes with Go's os.RemoveAll: a tree whole, and nothing there is no error.
            let path = user_path(&request.path)?;
            face.core.delete_file(caller, id, Some(path), true).await?;
            Ok(json!({}))
        }
        "CreateWatcher" => {
            let request: WatchRequest = connect::request(body, false).await?;
            let watch = start_watch(face, call, &request).await?;
            let path = watch.path().to_string();
            let watcher = face
                .watchers
                .add(call, path, watch, face.watchers.slot(call))?;
            Ok(json!({"watcherId": watcher}))
        }
        "GetWatcherEvents" => {
            let request: WatchRequest = connect::request(body, false).await?;
            face.watchers.poll(call, &request.watcher_id)
        }
        "RemoveWatcher" => {
            let request: WatchRequest = connect::request(body, false).await?;
            face.watchers.remove(call, &request.watcher_id)?;
            Ok(json!({}))
        }
        other => Err(E2bError::new(
            Code::Unimplemented,
            StatusCode::NOT_FOUND,
            format!("filesystem.Filesystem has no method {other}"),
        )),
    }
}

async fn start_watch(
    face: &Face,
    call: &SandboxCall,
    request: &WatchRequest,
) -> Result<sandboxd_core::files_meta::Watch, E2bError> {
    if request.include_entry || request.allow_network_mounts {
        return Err(E2bError::unsupported(
            "watch events with entries (include_entry) or on network mounts",
        ));
    }
    // A watch of a file, or of nothing, is refused as envd refuses it.
    let path = user_path(&request.path)?;
    let info = face
        .core
        .stat(&call.caller, &call.id, Some(path.clone()))
        .await?;
    if info.kind != FileKind::Dir && info.target_type != Some(FileKind::Dir) {
        return Err(E2bError::invalid(format!(
            "{} is not a directory",
            request.path
        )));
    }
    Ok(face
        .core
        .watch(&call.caller, &call.id, Some(path), request.recursive)
        .await?)
}

/// A stat answer as envd's entry: a symlink's with where it leads, resolved.
fn described(info: &FileInfo) -> Value {
    let entry = FileEntry {
        name: info.name.clone(),
        kind: info.kind,
        size: info.size,
        mode: info.mode.clone(),
        modified: info.modified.clone(),
        target_type: info.target_type,
    };
    let mut described = entry_info(&info.path, &entry);
    if info.kind == FileKind::Symlink {
        // envd names the link itself when it leads nowhere.
        let target = info.target_path.as_deref().unwrap_or(&info.path);
        described["symlinkTarget"] = target.into();
    }
    described
}

/// A directory's entries, and theirs down to `depth` levels (1: the directory's own).
async fn list_dir(
    face: &Face,
    call: &SandboxCall,
    request: PathRequest,
) -> Result<Value, E2bError> {
    let depth = request.depth.clamp(1, MAX_LIST_DEPTH);
    let mut entries = Vec::new();
    let mut level = vec![user_path(&request.path)?];
    for _ in 0..depth {
        let mut next = Vec::new();
        for dir in level {
            let listing = face
                .core
                .list_files(&call.caller, &call.id, Some(dir))
                .await?;
            let dir = listing.path.trim_end_matches('/');
            for entry in listing.entries {
                let path = format!("{dir}/{}", entry.name);
                if entry.kind == FileKind::Dir {
                    next.push(path.clone());
                }
                if entries.len() == MAX_LIST_ENTRIES {
                    return Err(E2bError::invalid(format!(
                        "the listing holds more than {MAX_LIST_ENTRIES} entries; list a smaller depth"
                    )));
                }
                entries.push(entry_info(&path, &entry));
            }
        }
        level = next;
    }
    Ok(json!({"entries": entries}))
}

/// An entry as envd describes it (proto3 JSON: 64-bit sizes as strings). A symlink has the
/// type of what it leads to (unspecified when nothing), and `L` in its permissions, as Go's
/// file modes show one.
pub fn entry_info(path: &str, entry: &FileEntry) -> Value {
    let mode = u32::from_str_radix(&entry.mode, 8).unwrap_or(0);
    let (kind, letter) = match entry.kind {
        FileKind::Symlink => (entry.target_type, 'L'),
        FileKind::File => (Some(FileKind::File), '-'),
        FileKind::Dir => (Some(FileKind::Dir), 'd'),
        FileKind::Other => (None, '?'),
    };
    let kind = match kind {
        Some(FileKind::File) => "FILE_TYPE_FILE",
        Some(FileKind::Dir) => "FILE_TYPE_DIRECTORY",
        _ => "FILE_TYPE_UNSPECIFIED",
    };
    let mut info = json!({
        "name": entry.name,
        "type": kind,
        "path": path,
        "size": entry.size.to_string(),
        "mode": mode,
        "permissions": permissions(letter, mode),
        "owner": "user",
        "group": "user",
        "isSymlink": entry.kind == FileKind::Symlink,
    });
    if let Some(modified) = &entry.modified {
        info["modifiedTime"] = modified.clone().into();
    }
    info
}

/// `drwxr-xr-x`, as `ls -l` (and Go's FileMode) shows a mode.
fn permissions(kind: char, mode: u32) -> String {
    let mut text = String::from(kind);
    for shift in [6, 3, 0] {
        let bits = (mode >> shift) & 7;
        text.push(if bits & 4 != 0 { 'r' } else { '-' });
        text.push(if bits & 2 != 0 { 'w' } else { '-' });
        text.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    text
}
