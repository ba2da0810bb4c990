//! E2B's volume content API (`spec/openapi-volumecontent.yml`): a volume's files without a
//! sandbox, at `/volumecontent/{volumeID}/...` on the control plane's address (the SDKs'
//! `E2B_VOLUME_API_URL`, else `api.DOMAIN`), authenticated by the volume's token
//! (`Authorization: Bearer`), which reaches that volume alone. Each route is one core
//! operation on the host, confined to the volume (no symlink followed). Files belong to the
//! sandboxes' user: E2B's `uid`, `gid` and `mode` are refused rather than ignored.

use crate::caller::{answer, done};
use crate::errors::{Code, E2bError};
use crate::state::{ClientAddress, Face};
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::TryStreamExt;
use sandboxd_core::{Caller, Interface, VolumeEntry, VolumeEntryKind, VolumePathOp};
use serde::Deserialize;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use tokio_util::io::StreamReader;

/// The query of every route: the path, and what making a file or directory may ask.
#[derive(Deserialize)]
pub struct ContentQuery {
    path: Option<String>,
    depth: Option<u32>,
    force: Option<bool>,
    uid: Option<u32>,
    gid: Option<u32>,
    mode: Option<u32>,
}

impl ContentQuery {
    fn refuse_ownership(&self) -> Result<(), E2bError> {
        if self.uid.is_some() || self.gid.is_some() || self.mode.is_some() {
            return Err(E2bError::invalid(
                "uid, gid and mode are not offered: a volume's files belong to the sandboxes' user (files 0644, directories 0755)",
            ));
        }
        Ok(())
    }
}

/// The volume's owner, if the request carries the volume's token.
fn volume_caller(
    face: &Face,
    headers: &HeaderMap,
    address: &ClientAddress,
    name: &str,
) -> Result<Caller, E2bError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    face.core
        .authenticate_volume_token(name, token, address.0)
        .map(|principal| Caller::new(principal, Interface::E2b))
        .map_err(|e| match e {
            sandboxd_core::Error::Unauthorized => E2bError::unauthenticated(
                "missing or wrong volume token: use the token Volume.create or Volume.connect gives",
            ),
            other => other.into(),
        })
}

fn time_of(seconds: i64) -> String {
    OffsetDateTime::from_unix_timestamp(seconds)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .format(&Rfc3339)
        .unwrap_or_default()
}

/// An entry as E2B's `VolumeEntryStat`.
fn stat(entry: &VolumeEntry) -> Value {
    let name = entry.path.rsplit('/').next().unwrap_or_default();
    let kind = match entry.kind {
        VolumeEntryKind::File => "file",
        VolumeEntryKind::Directory => "directory",
        VolumeEntryKind::Symlink => "symlink",
        VolumeEntryKind::Other => "unknown",
    };
    let mut stat = json!({
        "name": name,
        "type": kind,
        "path": entry.path,
        "size": entry.size,
        "mode": entry.mode,
        "uid": entry.uid,
        "gid": entry.gid,
        "atime": time_of(entry.accessed),
        "mtime": time_of(entry.modified),
        "ctime": time_of(entry.changed),
    });
    if let Some(target) = &entry.target {
        stat["target"] = target.clone().into();
    }
    stat
}

/// One core operation at the query's path, as the volume's owner.
async fn at_path(
    face: &Face,
    caller: &Caller,
    name: &str,
    query: &ContentQuery,
    op: VolumePathOp,
) -> Result<Vec<VolumeEntry>, E2bError> {
    Ok(face
        .core
        .volume_path(caller, name, query.path.clone(), op)
        .await?)
}

fn the_one(mut entries: Vec<VolumeEntry>) -> Result<Value, E2bError> {
    entries.pop().map(|entry| stat(&entry)).ok_or_else(|| {
        E2bError::new(
            Code::Internal,
            StatusCode::INTERNAL_SERVER_ERROR,
            "no entry",
        )
    })
}

/// `GET /volumecontent/{id}/path`.
pub async fn get_path(
    State(face): State<Face>,
    address: ClientAddress,
    headers: HeaderMap,
    Path(name): Path<String>,
    Query(query): Query<ContentQuery>,
) -> Response {
    let result = async {
        let caller = volume_caller(&face, &headers, &address, &name)?;
        the_one(at_path(&face, &caller, &name, &query, VolumePathOp::Stat).await?)
    }
    .await;
    answer(StatusCode::OK, result)
}

/// `DELETE /volumecontent/{id}/path`: a file, or a directory with everything in it.
pub async fn delete_path(
    State(face): State<Face>,
    address: ClientAddress,
    headers: HeaderMap,
    Path(name): Path<String>,
    Query(query): Query<ContentQuery>,
) -> Response {
    let result = async {
        let caller = volume_caller(&face, &headers, &address, &name)?;
        at_path(&face, &caller, &name, &query, VolumePathOp::Remove).await?;
        Ok(())
    }
    .await;
    done(result)
}

/// `PATCH /volumecontent/{id}/path`: changing an owner or mode is not offered.
pub async fn patch_path(
    State(face): State<Face>,
    address: ClientAddress,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    match volume_caller(&face, &headers, &address, &name) {
        Ok(_) => E2bError::unsupported(
            "changing the owner or mode of a volume's file (update_metadata): its files belong to the sandboxes' user",
        )
        .into_http(),
        Err(e) => e.into_http(),
    }
}

/// `GET /volumecontent/{id}/dir`: the entries `depth` levels down (1 by default).
pub async fn list_dir(
    State(face): State<Face>,
    address: ClientAddress,
    headers: HeaderMap,
    Path(name): Path<String>,
    Query(query): Query<ContentQuery>,
) -> Response {
    let result = async {
        let caller = volume_caller(&face, &headers, &address, &name)?;
        let op = VolumePathOp::List {
            depth: query.depth.unwrap_or(1),
            max: sandboxd_core::volume_entries::MAX_LISTED,
        };
        let entries = at_path(&face, &caller, &name, &query, op).await?;
        Ok(entries.iter().map(stat).collect::<Vec<_>>().into())
    }
    .await;
    answer(StatusCode::OK, result)
}

/// `POST /volumecontent/{id}/dir`: `force` makes the missing parents too.
pub async fn make_dir(
    State(face): State<Face>,
    address: ClientAddress,
    headers: HeaderMap,
    Path(name): Path<String>,
    Query(query): Query<ContentQuery>,
) -> Response {
    let result = async {
        let caller = volume_caller(&face, &headers, &address, &name)?;
        query.refuse_ownership()?;
        let op = VolumePathOp::MakeDir {
            parents: query.force == Some(true),
        };
        the_one(at_path(&face, &caller, &name, &query, op).await?)
    }
    .await;
    answer(StatusCode::CREATED, result)
}

/// `GET /volumecontent/{id}/file`: the file's bytes, streamed.
pub async fn read_file(
    State(face): State<Face>,
    address: ClientAddress,
    headers: HeaderMap,
    Path(name): Path<String>,
    Query(query): Query<ContentQuery>,
) -> Response {
    let result = async {
        let caller = volume_caller(&face, &headers, &address, &name)?;
        Ok::<_, E2bError>(
            face.core
                .read_volume_file(&caller, &name, query.path)
                .await?,
        )
    }
    .await;
    let download = match result {
        Ok(download) => download,
        Err(e) => return e.into_http(),
    };
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, download.size().into());
    (headers, Body::from_stream(download.into_stream())).into_response()
}

/// `PUT /volumecontent/{id}/file`: the body written whole (replacing the file), missing
/// directories made; the answer is the file's entry.
pub async fn write_file(
    State(face): State<Face>,
    address: ClientAddress,
    Path(name): Path<String>,
    Query(query): Query<ContentQuery>,
    request: Request,
) -> Response {
    let result = async {
        let caller = volume_caller(&face, request.headers(), &address, &name)?;
        query.refuse_ownership()?;
        let length = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let body = request
            .into_body()
            .into_data_stream()
            .map_err(std::io::Error::other);
        face.core
            .write_volume_file(
                &caller,
                &name,
                query.path.clone(),
                length,
                StreamReader::new(body),
            )
            .await?;
        the_one(at_path(&face, &caller, &name, &query, VolumePathOp::Stat).await?)
    }
    .await;
    answer(StatusCode::CREATED, result)
}
