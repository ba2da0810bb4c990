//! E2B's snapshots over the core's: `POST /sandboxes/{id}/snapshots` takes one, `GET
//! /snapshots` lists them, `DELETE /templates/{id}` deletes one, and a snapshot's ID given as
//! the template of a new sandbox opens it from the snapshot. A snapshot here keeps the files
//! of the sandbox's writable places and its environment, not its memory: a sandbox opened
//! from it starts no process of the one snapshotted (a paused sandbox keeps them). A fork
//! (`POST /sandboxes/{id}/fork`) is the core's: sandboxes opened from a snapshot taken for it,
//! all or none, each with the files and environment of the one forked and none of its
//! processes.

use crate::caller::{answer, existing, ApiCaller};
use crate::control::sandbox;
use crate::errors::E2bError;
use crate::paging::{paged, Order, Position};
use crate::state::Face;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_api::{ForkRequest, SnapshotInfo, SnapshotRequest};
use serde::Deserialize;
use serde_json::{json, Value};

/// `POST /sandboxes/{id}/snapshots`.
#[derive(Deserialize, Default)]
pub struct NewSnapshot {
    name: Option<String>,
    /// A snapshot of the sandbox's memory; only a filesystem snapshot is offered.
    memory: Option<bool>,
}

/// `POST /sandboxes/{id}/fork`.
#[derive(Deserialize, Default)]
pub struct NewForks {
    timeout: Option<u64>,
    count: Option<u32>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotQuery {
    #[serde(rename = "sandboxID")]
    sandbox_id: Option<String>,
    name: Option<String>,
    limit: Option<usize>,
    next_token: Option<String>,
}

pub async fn create(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
    body: Option<Json<NewSnapshot>>,
) -> Response {
    let request = body.map(|Json(r)| r).unwrap_or_default();
    let result = async {
        if request.memory == Some(true) {
            return Err(E2bError::unsupported(
                "a snapshot of a sandbox's memory (a snapshot keeps its files and environment; pause keeps its processes)",
            ));
        }
        existing(&face, &caller, &id).await?;
        let name = request
            .name
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("snapshot of {id}"));
        let snapshot = face
            .core
            .create_snapshot(&caller, &id, SnapshotRequest { name })
            .await?;
        Ok(described(&snapshot))
    }
    .await;
    answer(StatusCode::CREATED, result)
}

pub async fn list(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Query(query): Query<SnapshotQuery>,
) -> Response {
    let mut snapshots = match face.core.list_snapshots(&caller) {
        Ok(list) => list.snapshots,
        Err(e) => return E2bError::from(e).into_http(),
    };
    snapshots.retain(|s| {
        query
            .sandbox_id
            .as_ref()
            .is_none_or(|id| *id == s.session_id)
            && query
                .name
                .as_ref()
                .is_none_or(|name| *name == s.name || *name == s.id)
    });
    // Oldest first, as the store keeps them.
    paged(
        snapshots,
        Order::OldestFirst,
        query.next_token.as_deref(),
        query.limit,
        |s| Position::of(&s.created_at, &s.id),
        described,
    )
}

pub async fn fork(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
    body: Option<Json<NewForks>>,
) -> Response {
    let request = body.map(|Json(r)| r).unwrap_or_default();
    let result = async {
        existing(&face, &caller, &id).await?;
        let count = request.count.unwrap_or(1);
        let forked = face
            .core
            .fork_session(
                &caller,
                &id,
                ForkRequest {
                    count,
                    memory: None,
                },
            )
            .await?;
        let described = async {
            let mut answers = Vec::new();
            for info in &forked.sessions {
                let info = match request.timeout {
                    Some(secs) => face.core.set_idle_timeout(&caller, &info.id, secs).await?,
                    None => info.clone(),
                };
                answers.push(json!({"sandbox": sandbox(&face, &caller, &info)?}));
            }
            Ok::<_, E2bError>(Value::Array(answers))
        }
        .await;
        // All or none, as the fork itself: a timeout refused closes the forks again.
        if described.is_err() {
            for info in &forked.sessions {
                let _ = face.core.close_session(&caller, &info.id).await;
            }
        }
        described
    }
    .await;
    answer(StatusCode::CREATED, result)
}

/// `DELETE /templates/{id}`: templates are runtimes of the allowlist, which no client deletes;
/// what the SDKs delete there is a snapshot.
pub async fn delete(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
) -> Response {
    if face.core.config().runtime(&id).is_some() {
        return E2bError::unsupported(
            "deleting templates (a template ID names a runtime of the service's allowlist)",
        )
        .into_http();
    }
    match face.core.delete_snapshot(&caller, &id).await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => E2bError::from(e).into_http(),
    }
}

/// A snapshot as E2B describes one: its ID (what a new sandbox names as its template) and
/// its names.
fn described(snapshot: &SnapshotInfo) -> Value {
    json!({"snapshotID": snapshot.id, "names": [snapshot.name]})
}
