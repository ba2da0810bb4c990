//! E2B's volumes on the control plane (`/volumes` of `spec/openapi.yml`): the core's volumes,
//! a volume's ID being its name (unique among its tenant's, which is what the SDKs mount it
//! by). A volume made here asks for no size: it gets `e2b.volume_size`. Each answer that
//! names one volume carries its token, which reaches that volume's files alone
//! ([`crate::volume_content`]).

use crate::caller::{answer, done, ApiCaller};
use crate::errors::E2bError;
use crate::state::Face;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use sandboxd_api::{VolumeMountRequest, VolumeRequest, VolumeSize};
use sandboxd_core::Caller;
use serde::Deserialize;
use serde_json::{json, Value};

/// `POST /volumes`.
#[derive(Deserialize)]
pub struct NewVolume {
    name: String,
}

/// A mount of `volumeMounts` at create: E2B's are read-write.
#[derive(Deserialize)]
pub struct VolumeMount {
    name: String,
    path: String,
}

/// The mounts a create asks for, as the core takes them (it checks names and paths).
pub(crate) fn mounts(given: Vec<VolumeMount>) -> Vec<VolumeMountRequest> {
    given
        .into_iter()
        .map(|mount| VolumeMountRequest {
            name: mount.name,
            path: mount.path,
            read_only: false,
        })
        .collect()
}

/// A volume with its token, as create and get answer it.
fn with_token(face: &Face, caller: &Caller, name: &str) -> Result<Value, E2bError> {
    let mut volume = json!({
        "volumeID": name,
        "name": name,
        "token": face.core.volume_access_token(caller, name)?,
    });
    // Only with a domain of its own: the SDKs then send the volume's files to `api.DOMAIN`.
    if let Some(domain) = &face.core.config().e2b.domain {
        volume["domain"] = domain.clone().into();
    }
    Ok(volume)
}

pub async fn create(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Json(request): Json<NewVolume>,
) -> Response {
    let result = async {
        let size = face.core.config().e2b.volume_size;
        let info = face
            .core
            .create_volume(
                &caller,
                VolumeRequest {
                    name: request.name,
                    size: VolumeSize::Bytes(size),
                },
            )
            .await?;
        with_token(&face, &caller, &info.name)
    }
    .await;
    answer(StatusCode::CREATED, result)
}

/// The caller's own volumes (the service token's are the untenanted ones: only those can
/// be addressed by name here).
pub async fn list(State(face): State<Face>, ApiCaller(caller): ApiCaller) -> Response {
    let result = face
        .core
        .list_volumes(&caller)
        .await
        .map_err(E2bError::from)
        .map(|list| {
            list.volumes
                .iter()
                .filter(|v| v.tenant.as_deref() == caller.principal.tenant())
                .map(|v| json!({"volumeID": v.name, "name": v.name}))
                .collect::<Vec<_>>()
                .into()
        });
    answer(StatusCode::OK, result)
}

pub async fn get_one(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        face.core.get_volume(&caller, &id).await?;
        with_token(&face, &caller, &id)
    }
    .await;
    answer(StatusCode::OK, result)
}

pub async fn delete(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        face.core.delete_volume(&caller, &id).await?;
        Ok(())
    }
    .await;
    done(result)
}
