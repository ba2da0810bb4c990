//! envd's `filesystem.Filesystem` service over the core's file operations: ListDir (to a
//! depth), Remove, Stat, MakeDir, Move, and directory watches (the WatchDir stream, and the
//! CreateWatcher / GetWatcherEvents / RemoveWatcher calls the SDKs poll with).

use crate::connect;
use crate::envd::{authenticate, SandboxCall};
use crate::errors::{Code, E2bError};
use crate::routing::SandboxId;
use crate::{ClientAddress, Face};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Extension;
use sandboxd_api::{FileEntry, FileKind};
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

pub async fn call(
    State(face): State<Face>,
    Path(method): Path<String>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let result = async {
        let call = authenticate(&face, &sandbox, &headers, &address)?;
        match method.as_str() {
            "ListDir" => list_dir(&face, &call, connect::request(body, false).await?).await,
            "Remove" => {
                let request: PathRequest = connect::request(body, false).await?;
                face.core
                    .delete_file(&call.caller, &call.id, Some(request.path), true)
                    .await?;
                Ok(json!({}))
            }
            other => Err(E2bError::new(
                Code::Unimplemented,
                StatusCode::NOT_FOUND,
                format!("filesystem.Filesystem has no method {other}"),
            )),
        }
    }
    .await;
    connect::unary(result)
}

/// A directory's entries, and theirs down to `depth` levels (1: the directory's own).
async fn list_dir(
    face: &Face,
    call: &SandboxCall,
    request: PathRequest,
) -> Result<Value, E2bError> {
    let depth = request.depth.clamp(1, MAX_LIST_DEPTH);
    let mut entries = Vec::new();
    let mut level = vec![trim_dir(&request.path)];
    for _ in 0..depth {
        let mut next = Vec::new();
        for dir in level {
            let listing = face
                .core
                .list_files(&call.caller, &call.id, Some(dir.clone()))
                .await?;
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
                entries.push(entry_info(&path, &entry, None));
            }
        }
        level = next;
    }
    Ok(json!({"entries": entries}))
}

fn trim_dir(path: &str) -> String {
    match path.trim_end_matches('/') {
        "" if path.starts_with('/') => String::new(),
        "" => ".".into(),
        trimmed => trimmed.to_string(),
    }
}

/// An entry as envd describes it (proto3 JSON: 64-bit sizes as strings).
pub fn entry_info(path: &str, entry: &FileEntry, symlink_target: Option<&str>) -> Value {
    let mode = u32::from_str_radix(&entry.mode, 8).unwrap_or(0);
    let (kind, letter) = match entry.kind {
        FileKind::File => ("FILE_TYPE_FILE", '-'),
        FileKind::Dir => ("FILE_TYPE_DIRECTORY", 'd'),
        FileKind::Symlink => ("FILE_TYPE_SYMLINK", 'l'),
        FileKind::Other => ("FILE_TYPE_UNSPECIFIED", '?'),
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
    if let Some(target) = symlink_target {
        info["symlinkTarget"] = target.into();
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
