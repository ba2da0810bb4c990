//! E2B's pause and resume over the core's: `POST /sandboxes/{id}/pause` freezes the sandbox
//! (its memory, processes and files stay), `POST /sandboxes/{id}/resume` and `connect` thaw
//! it. Any envd call on a paused sandbox resumes it too (the core resumes a paused session
//! before an operation reaches it), which is E2B's auto-resume. A pause always keeps memory: one
//! that asks to keep only the files (`memory: false`) is refused, as is a resume that asks to
//! cold-boot from disk, as E2B refuses them where they are not offered.

use crate::caller::{answer, done, existing, ApiCaller};
use crate::control::{end_at, idle_timeout, sandbox};
use crate::errors::{Code, E2bError};
use crate::state::Face;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use sandboxd_api::{SessionInfo, SessionState};
use sandboxd_core::Caller;
use serde::Deserialize;
use serde_json::Value;
use time::OffsetDateTime;

/// `POST /sandboxes/{id}/connect` and `/v2/...`; `POST /sandboxes/{id}/resume`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ResumeRequest {
    timeout: Option<u64>,
    /// False: cold-boot from the files only.
    memory: Option<bool>,
    /// The resume's own `autoPause` (`/resume` only).
    auto_pause: Option<bool>,
}

/// `POST /sandboxes/{id}/pause`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PauseRequest {
    /// False: keep only the files (`keep_memory=False`, `mode="filesystem"`).
    memory: Option<bool>,
    /// True: refuse while the guest agent does not answer (`strict=True`).
    require_healthy_guest: Option<bool>,
}

pub async fn pause(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
    body: Option<Json<PauseRequest>>,
) -> Response {
    let request = body.map(|Json(r)| r).unwrap_or_default();
    let result = async {
        if request.memory == Some(false) {
            return Err(E2bError::unsupported(
                "a pause that keeps only the files (memory false: keep_memory=False, mode=\"filesystem\"); a pause here keeps the memory, processes and files",
            ));
        }
        if request.require_healthy_guest == Some(true) {
            return Err(E2bError::unsupported(
                "a pause that first checks the guest agent answers (requireHealthyGuest: strict=True); a pause here freezes the sandbox with its agent as they are",
            ));
        }
        if existing(&face, &caller, &id).await?.state == SessionState::Paused {
            return Err(conflict(format!("sandbox {id} is already paused")));
        }
        face.core.pause_session(&caller, &id).await?;
        Ok(())
    }
    .await;
    done(result)
}

/// `POST /sandboxes/{id}/resume` (E2B's older call): a paused sandbox only.
pub async fn resume(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
    body: Option<Json<ResumeRequest>>,
) -> Response {
    let request = body.map(|Json(r)| r).unwrap_or_default();
    let result = async {
        if existing(&face, &caller, &id).await?.state != SessionState::Paused {
            return Err(conflict(format!("sandbox {id} is already running")));
        }
        resumed(&face, &caller, &id, &request).await
    }
    .await;
    answer(StatusCode::CREATED, result)
}

/// `POST /sandboxes/{id}/connect` (and `/v2/...`): a sandbox's connection details, resumed
/// first when paused (answered 201 then, 200 when it was running). A paused sandbox takes the
/// timeout given; a running one only when it extends its life.
pub async fn connect(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
    body: Option<Json<ResumeRequest>>,
) -> Response {
    let request = body.map(|Json(r)| r).unwrap_or_default();
    let result = async {
        let before = existing(&face, &caller, &id).await?;
        let was_paused = before.state == SessionState::Paused;
        let timeout = match request.timeout {
            Some(secs) if !was_paused => extending(&face, &before, secs),
            other => other,
        };
        let request = ResumeRequest { timeout, ..request };
        let details = resumed(&face, &caller, &id, &request).await?;
        Ok::<_, E2bError>((was_paused, details))
    }
    .await;
    match result {
        Ok((true, details)) => answer(StatusCode::CREATED, Ok(details)),
        Ok((false, details)) => answer(StatusCode::OK, Ok(details)),
        Err(e) => e.into_http(),
    }
}

/// The timeout a connect to a running sandbox sets, as E2B's does: only one that moves its
/// end later (never earlier), and then not below its idle timeout, which is what keeps it alive
/// between uses here.
fn extending(face: &Face, info: &SessionInfo, secs: u64) -> Option<u64> {
    let wanted_end = OffsetDateTime::now_utc() + time::Duration::seconds(secs as i64);
    (wanted_end > end_at(face, info)).then(|| secs.max(idle_timeout(face, info)))
}

/// Resumes the sandbox (a running one stays as it is) with the request's settings, and
/// answers how to reach it.
async fn resumed(
    face: &Face,
    caller: &Caller,
    id: &str,
    request: &ResumeRequest,
) -> Result<Value, E2bError> {
    if request.memory == Some(false) {
        return Err(E2bError::unsupported(
            "resuming a sandbox from its files only (memory false); a paused sandbox resumes with its memory",
        ));
    }
    let mut info: SessionInfo = face.core.resume_session(caller, id).await?;
    if let Some(auto_pause) = request.auto_pause {
        face.core.set_pause_at_own_timeout(caller, id, auto_pause)?;
    }
    if let Some(secs) = request.timeout {
        info = face.core.set_idle_timeout(caller, id, secs).await?;
    }
    sandbox(face, caller, &info)
}

fn conflict(message: String) -> E2bError {
    E2bError::new(Code::FailedPrecondition, StatusCode::CONFLICT, message)
}
