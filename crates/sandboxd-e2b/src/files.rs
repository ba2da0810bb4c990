//! envd's `/files`: a file's bytes down (`GET`), files up (`POST`, one as
//! `application/octet-stream` or many as `multipart/form-data`, each part named by its
//! path), through the core's file operations: done by the agent inside the sandbox, atomic,
//! each capped by `policy.max_upload_bytes`, streamed (never held here whole).

use crate::envd::{authenticate, user_path};
use crate::errors::E2bError;
use crate::routing::SandboxId;
use crate::state::ClientAddress;
use crate::state::Face;
use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::TryStreamExt;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::io::StreamReader;

/// Files one multipart upload may carry.
const MAX_FILES_PER_UPLOAD: usize = 1000;

#[derive(Deserialize)]
pub struct FileQuery {
    path: Option<String>,
}

pub async fn download(
    State(face): State<Face>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    headers: HeaderMap,
    Query(query): Query<FileQuery>,
) -> Response {
    let result = async {
        let call = authenticate(&face, &sandbox, &headers, &address)?;
        let path = query.path.as_deref().map(user_path).transpose()?;
        let download = face.core.read_file(&call.caller, &call.id, path).await?;
        Ok::<_, E2bError>(download)
    }
    .await;
    let download = match result {
        Ok(download) => download,
        Err(e) => return e.into_http(),
    };
    let size = download.size();
    let chunks = futures_util::stream::unfold(Some(download), |download| async move {
        let mut download = download?;
        match download.next_chunk().await {
            Ok(Some(chunk)) => Some((Ok(chunk), Some(download))),
            Ok(None) => None,
            // Cut short: the client sees the transfer fail rather than a short file.
            Err(e) => Some((Err(std::io::Error::other(e.to_string())), None)),
        }
    });
    let mut response = Body::from_stream(chunks).into_response();
    let response_headers = response.headers_mut();
    response_headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Some(size) = size {
        response_headers.insert(header::CONTENT_LENGTH, size.into());
    }
    response
}

pub async fn upload(
    State(face): State<Face>,
    Extension(sandbox): Extension<SandboxId>,
    address: ClientAddress,
    Query(query): Query<FileQuery>,
    request: Request,
) -> Response {
    let result = async {
        let headers = request.headers();
        let call = authenticate(&face, &sandbox, headers, &address)?;
        if headers.contains_key(header::CONTENT_ENCODING) {
            return Err(E2bError::invalid(
                "compressed uploads (gzip) are not accepted; upload without gzip",
            ));
        }
        let multipart = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("multipart/form-data"));
        let mut written = Vec::new();
        if !multipart {
            let length = headers
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok());
            let body = request
                .into_body()
                .into_data_stream()
                .map_err(std::io::Error::other);
            let file = face
                .core
                .write_file(
                    &call.caller,
                    &call.id,
                    query.path.as_deref().map(user_path).transpose()?,
                    None,
                    length,
                    StreamReader::new(body),
                )
                .await?;
            written.push(entry(&file.path));
            return Ok(written);
        }
        let mut parts = Multipart::from_request(request, &())
            .await
            .map_err(|e| E2bError::invalid(format!("invalid multipart upload: {e}")))?;
        while let Some(part) = parts
            .next_field()
            .await
            .map_err(|e| E2bError::invalid(format!("invalid multipart upload: {e}")))?
        {
            if written.len() == MAX_FILES_PER_UPLOAD {
                return Err(E2bError::invalid(format!(
                    "an upload carries at most {MAX_FILES_PER_UPLOAD} files"
                )));
            }
            let path = part
                .file_name()
                .filter(|name| !name.is_empty())
                .map(str::to_string)
                .or_else(|| query.path.clone())
                .as_deref()
                .map(user_path)
                .transpose()?;
            let body = part.map_err(std::io::Error::other);
            let file = face
                .core
                .write_file(
                    &call.caller,
                    &call.id,
                    path,
                    None,
                    None,
                    StreamReader::new(body),
                )
                .await?;
            written.push(entry(&file.path));
        }
        Ok(written)
    }
    .await;
    match result {
        Ok(written) => Json(written).into_response(),
        Err(e) => e.into_http(),
    }
}

/// A written file as envd answers it, by its absolute path.
fn entry(path: &str) -> Value {
    let name = path.rsplit('/').next().unwrap_or(path);
    json!({"name": name, "type": "file", "path": path})
}
