//! Volumes: made, listed, shown and deleted, and their files read and written without a
//! session (streamed both ways, as a session's files are).

use crate::error::ApiError;
use crate::extract::{
    declared_length, ApiJson, ApiQuery, Authenticated, JsonRequest, QueryRequest,
};
use crate::routes::files::upload_source;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_api::{FileWritten, VolumeInfo, VolumeList, VolumeRequest};
use serde::Deserialize;

/// Small JSON bodies: a name and a size.
pub const BODY_LIMIT: usize = 4 << 10;

impl JsonRequest for VolumeRequest {
    const WHAT: &'static str = "volume request";
    const HINT: &'static str = "; send {\"name\": \"...\", \"size\": \"1g\"}";
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumePathQuery {
    path: Option<String>,
}

impl QueryRequest for VolumePathQuery {
    const TAKES: &'static str = "`path` (the file in the volume)";
}

#[utoipa::path(
    post,
    path = "/v1/volumes",
    tag = "volumes",
    summary = "Make a volume: storage of the caller's tenant that outlives sessions",
    description = "A filesystem of its own with a hard cap of `size` (a writer inside a sandbox gets \"no space\" there; the host's disk never gives it more). It belongs to the caller's tenant and counts against its quota (`policy.volume_quota_count`, `policy.volume_quota_bytes`) by its size. Mount it at open with `POST /v1/sessions` `{\"volumes\": [{\"name\", \"path\", \"read_only\"}]}`.",
    request_body(content = VolumeRequest, description = "Its name and size"),
    responses(
        (status = 201, description = "The volume", body = VolumeInfo),
        (status = 400, description = "`invalid_volume_name`, `invalid_volume_size`, or `volumes_unavailable` on a backend without volumes", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`volume_exists`: the tenant has a volume of that name", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`volume_quota`: the tenant has as many volumes as it may, or this one would pass its bytes", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<VolumeRequest>,
) -> Result<(StatusCode, Json<VolumeInfo>), ApiError> {
    let volume = state.core.create_volume(&caller, request).await?;
    Ok((StatusCode::CREATED, Json(volume)))
}

#[utoipa::path(
    get,
    path = "/v1/volumes",
    tag = "volumes",
    summary = "The volumes the caller may see: a tenant's own, or all for the administrator",
    responses((status = 200, description = "By name, with their use and the open sessions that mount them", body = VolumeList))
)]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<VolumeList>, ApiError> {
    Ok(Json(state.core.list_volumes(&caller).await?))
}

#[utoipa::path(
    get,
    path = "/v1/volumes/{name}",
    tag = "volumes",
    summary = "One volume",
    params(("name" = String, Path, description = "The volume's name")),
    responses(
        (status = 200, description = "The volume", body = VolumeInfo),
        (status = 400, description = "`invalid_volume_name`: a name that no volume can have", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such volume (or not the caller's)", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<VolumeInfo>, ApiError> {
    Ok(Json(state.core.get_volume(&caller, &name).await?))
}

#[utoipa::path(
    delete,
    path = "/v1/volumes/{name}",
    tag = "volumes",
    summary = "Delete a volume and its files",
    params(("name" = String, Path, description = "The volume's name")),
    responses(
        (status = 200, description = "The volume that was deleted", body = VolumeInfo),
        (status = 400, description = "`invalid_volume_name`: a name that no volume can have", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such volume (or not the caller's)", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`volume_in_use`: open sessions mount it (the message names them)", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<VolumeInfo>, ApiError> {
    Ok(Json(state.core.delete_volume(&caller, &name).await?))
}

#[utoipa::path(
    get,
    path = "/v1/volumes/{name}/files/content",
    tag = "volumes",
    summary = "Read a file of a volume, streamed, without a session",
    description = "Read on the host, confined to the volume: no symlink is followed, and only regular files are read.",
    params(
        ("name" = String, Path, description = "The volume's name"),
        ("path" = String, Query, description = "The file, relative to the volume's root")
    ),
    responses(
        (status = 200, description = "The file's bytes", content_type = "application/octet-stream", body = String),
        (status = 400, description = "`invalid_volume_name`, or `invalid_request`: `path` missing, too long or holding a NUL byte", body = sandboxd_api::ErrorBody),
        (status = 403, description = "`path_refused`: a symlink on the way, or not a regular file", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such volume or file", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`is_a_directory` or `not_a_directory`", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn read_file(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    ApiQuery(query): ApiQuery<VolumePathQuery>,
) -> Result<Response, ApiError> {
    let download = state
        .core
        .read_volume_file(&caller, &name, query.path)
        .await?;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, download.size().into());
    Ok((headers, Body::from_stream(download.into_stream())).into_response())
}

#[utoipa::path(
    put,
    path = "/v1/volumes/{name}/files/content",
    tag = "volumes",
    summary = "Write a file of a volume whole (replacing it), streamed, without a session",
    description = "Written on the host, confined to the volume (no symlink followed), missing directories made, owned by the sandboxes' uid.",
    params(
        ("name" = String, Path, description = "The volume's name"),
        ("path" = String, Query, description = "The file, relative to the volume's root")
    ),
    request_body(content = String, content_type = "application/octet-stream", description = "The file's bytes, up to `policy.max_upload_bytes`"),
    responses(
        (status = 200, description = "The bytes written", body = FileWritten),
        (status = 400, description = "`invalid_volume_name`, or `invalid_request`: `path` missing, too long or holding a NUL byte", body = sandboxd_api::ErrorBody),
        (status = 403, description = "`path_refused`: a symlink on the way, or not a regular file", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: no such volume", body = sandboxd_api::ErrorBody),
        (status = 413, description = "`payload_too_large`: over `policy.max_upload_bytes`", body = sandboxd_api::ErrorBody),
        (status = 507, description = "`no_space`: the volume is full", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn write_file(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    ApiQuery(query): ApiQuery<VolumePathQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<FileWritten>, ApiError> {
    let declared_length = declared_length(&headers);
    let written = state
        .core
        .write_volume_file(
            &caller,
            &name,
            query.path,
            declared_length,
            upload_source(body),
        )
        .await?;
    Ok(Json(written))
}

/// The volumes' routes, for the route table to merge (each documented where it is routed).
pub(crate) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    use axum::extract::DefaultBodyLimit;
    use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
    use utoipa_axum::routes;
    OpenApiRouter::new()
        .routes(routes!(list, create).layer(DefaultBodyLimit::max(BODY_LIMIT)))
        .routes(routes!(get_one, delete))
        // The upload body is streamed, not collected: the core counts it.
        .routes(routes!(read_file, write_file))
}
