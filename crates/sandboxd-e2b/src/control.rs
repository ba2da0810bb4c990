//! E2B's control plane (`spec/openapi.yml` of the E2B SDKs): sandboxes are sessions. A
//! template ID names a runtime alias of the allowlist (`base`: the default one) or a
//! snapshot, metadata become the session's labels, envVars the environment of its every
//! command, and the timeout its own idle expiry (which pauses it with `autoPause`). Authenticated by `X-API-Key`: the service token or a tenant's.

use crate::caller::{answer, done, existing, ApiCaller};
use crate::errors::{Code, E2bError};
use crate::network::{self, NetworkOptions};
use crate::state::Face;
use crate::state::ENVD_VERSION;
use crate::volumes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use sandboxd_api::{CreateSession, SessionInfo, SessionState, SnapshotInfo};
use sandboxd_core::Caller;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The template that means "the default runtime".
const BASE_TEMPLATE: &str = "base";
/// What E2B calls the owner of a sandbox; sandboxd has one.
const CLIENT_ID: &str = "sandboxd";
const MIB: u64 = 1 << 20;

/// `POST /sandboxes` and `POST /v2/sandboxes`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSandbox {
    #[serde(rename = "templateID")]
    template_id: String,
    timeout: Option<u64>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    #[serde(default)]
    env_vars: BTreeMap<String, String>,
    auto_pause: Option<bool>,
    /// False: the timeout's pause keeps only the files.
    auto_pause_memory: Option<bool>,
    auto_resume: Option<Value>,
    #[serde(rename = "allow_internet_access")]
    allow_internet_access: Option<bool>,
    #[serde(default)]
    network: NetworkOptions,
    mcp: Option<Value>,
    iam: Option<Value>,
    #[serde(default)]
    volume_mounts: Vec<volumes::VolumeMount>,
}

#[derive(Deserialize)]
pub struct TimeoutRequest {
    timeout: u64,
}

impl NewSandbox {
    /// The E2B options that have no sandboxd counterpart, refused rather than ignored.
    fn refuse_unsupported(&self, face: &Face, runtime: &str) -> Result<(), E2bError> {
        let given = |value: &Option<Value>| {
            value.as_ref().is_some_and(|v| match v {
                Value::Null | Value::Bool(false) => false,
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
                _ => true,
            })
        };
        for (what, value) in [
            ("MCP servers (mcp)", &self.mcp),
            ("workload identity (iam)", &self.iam),
        ] {
            if given(value) {
                return Err(E2bError::unsupported(what));
            }
        }
        // A paused sandbox here resumes on any use; opting out of that is not offered for
        // the timeout's pause (without one, `false` is what SDK releases up to 2.40 send).
        if self.auto_pause == Some(true)
            && self
                .auto_resume
                .as_ref()
                .is_some_and(|v| v.get("enabled") == Some(&Value::Bool(false)))
        {
            return Err(E2bError::unsupported(
                "a paused sandbox that stays paused when used (lifecycle auto_resume false)",
            ));
        }
        if self.auto_pause == Some(true) && self.auto_pause_memory == Some(false) {
            return Err(E2bError::unsupported(
                "a timeout's pause that keeps only the files (lifecycle mode \"filesystem\", autoPauseMemory false); a pause here keeps the memory",
            ));
        }
        // `true` is what the runtime allows: SDK releases up to 2.50 send it on every create.
        // `false` is honoured by a runtime without network, or narrowed to nothing by an egress
        // one (`network::egress_list`), and refused by any other.
        if let (Some(false), Some(runtime_info)) = (
            self.allow_internet_access,
            face.core.config().runtime(runtime),
        ) {
            if runtime_info.limits.network_mode == sandboxd_api::NetworkMode::Bridge {
                return Err(E2bError::invalid(format!(
                    "template \"{runtime}\" runs with network access, and a sandbox cannot turn it off (allow_internet_access false); pick a template (runtime) without network"
                )));
            }
        }
        Ok(())
    }
}

pub async fn create(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Json(request): Json<NewSandbox>,
) -> Response {
    let result = async {
        let (runtime, snapshot) = match template(&face, &caller, &request.template_id)? {
            Template::Runtime(runtime) => (runtime, None),
            Template::Snapshot(snapshot) => (Some(snapshot.runtime.clone()), Some(snapshot)),
        };
        let runtime_name = runtime
            .clone()
            .unwrap_or_else(|| face.core.config().default_runtime.clone());
        request.refuse_unsupported(&face, &runtime_name)?;
        let egress = match face.core.config().runtime(&runtime_name) {
            Some(runtime_info) => request.network.egress_list(
                runtime_info,
                &request.template_id,
                request.allow_internet_access,
            )?,
            None => None,
        };
        let info = face
            .core
            .open_session(
                &caller,
                CreateSession {
                    runtime,
                    tenant: None,
                    labels: request.metadata,
                    snapshot: snapshot.map(|s| s.id),
                    egress,
                    volumes: volumes::mounts(request.volume_mounts),
                },
            )
            .await?;
        let configured = async {
            if !request.env_vars.is_empty() {
                face.core
                    .set_session_env(&caller, &info.id, request.env_vars)?;
            }
            if request.auto_pause == Some(true) {
                face.core
                    .set_pause_at_own_timeout(&caller, &info.id, true)?;
            }
            match request.timeout {
                Some(secs) => face.core.set_idle_timeout(&caller, &info.id, secs).await,
                None => Ok(info.clone()),
            }
        }
        .await;
        match configured {
            Ok(info) => Ok(sandbox(&face, &caller, &info)?),
            Err(e) => {
                let _ = face.core.close_session(&caller, &info.id).await;
                Err(E2bError::from(e))
            }
        }
    }
    .await;
    answer(StatusCode::CREATED, result)
}

pub async fn get_one(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        let info = existing(&face, &caller, &id).await?;
        let mut detail = listed(&face, &info);
        detail["envdAccessToken"] = face.core.session_access_token(&caller, &id)?.into();
        let (network, internet) = network::info(&face, &caller, &id, &info.runtime);
        detail["network"] = network;
        detail["allowInternetAccess"] = internet.into();
        Ok(detail)
    }
    .await;
    answer(StatusCode::OK, result)
}

pub async fn kill(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        existing(&face, &caller, &id).await?;
        face.core.close_session(&caller, &id).await?;
        Ok::<_, E2bError>(())
    }
    .await;
    done(result)
}

pub async fn set_timeout(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
    Json(request): Json<TimeoutRequest>,
) -> Response {
    let result = async {
        existing(&face, &caller, &id).await?;
        face.core
            .set_idle_timeout(&caller, &id, request.timeout)
            .await?;
        Ok::<_, E2bError>(())
    }
    .await;
    done(result)
}

/// Anything of E2B's API that sandboxd does not offer, named by its path.
pub async fn unsupported(uri: axum::http::Uri) -> Response {
    let path = uri.path();
    let what = if path.contains("snapshot") {
        "snapshots"
    } else if path.contains("template") {
        "templates (building, listing, deleting); a template ID names a runtime of the service's allowlist"
    } else if path.contains("volume") {
        "this volume route"
    } else if path.contains("/network") {
        "network rules"
    } else if path.contains("/metrics") {
        "sandbox metrics (the dashboard and GET /v1/sessions/{id} show memory and processes)"
    } else if path.contains("/logs") {
        "sandbox logs (the activity log is GET /v1/sessions/{id}/activity)"
    } else if path.contains("secret") {
        "secrets"
    } else {
        "this E2B API route"
    };
    E2bError::unsupported(what).into_http()
}

/// What create and connect answer: how to reach the sandbox's envd.
pub(crate) fn sandbox(face: &Face, caller: &Caller, info: &SessionInfo) -> Result<Value, E2bError> {
    let token = face.core.session_access_token(caller, &info.id)?;
    Ok(json!({
        "templateID": info.runtime,
        "alias": info.runtime,
        "sandboxID": info.id,
        "clientID": CLIENT_ID,
        "envdVersion": ENVD_VERSION,
        // A sandbox's ports refuse traffic without its token, as E2B's restricted ones do:
        // the SDKs send this with every request for a port (the code interpreter's too).
        "trafficAccessToken": token,
        "envdAccessToken": token,
        "domain": face.core.config().e2b.domain,
    }))
}

/// A sandbox as `GET /v2/sandboxes` lists it (and, with its token, `GET /sandboxes/{id}`).
pub(crate) fn listed(face: &Face, info: &SessionInfo) -> Value {
    let config = face.core.config();
    let limits = config.runtime(&info.runtime).map(|r| r.limits.clone());
    json!({
        "templateID": info.runtime,
        "alias": info.runtime,
        "sandboxID": info.id,
        "clientID": CLIENT_ID,
        "startedAt": info.created_at,
        "endAt": end_at(face, info).format(&Rfc3339).unwrap_or_default(),
        "envdVersion": ENVD_VERSION,
        "cpuCount": limits.as_ref().map_or(1, |l| cpu_count(l.cpus)),
        "memoryMB": limits.as_ref().map_or(0, |l| l.mem_limit_bytes / MIB),
        "diskSizeMB": limits.as_ref().map_or(0, |l| l.tmpfs_size_bytes / MIB),
        "metadata": info.labels,
        "state": state_name(&info.state),
        "domain": config.e2b.domain,
    })
}

/// When the sandbox ends unless used: its idle timeout after its last activity, within the
/// service's longest lifetime.
pub(crate) fn end_at(face: &Face, info: &SessionInfo) -> OffsetDateTime {
    let policy = &face.core.config().policy;
    let parse =
        |at: &str| OffsetDateTime::parse(at, &Rfc3339).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    (parse(&info.last_activity_at) + time::Duration::seconds(idle_timeout(face, info) as i64))
        .min(parse(&info.created_at) + time::Duration::seconds(policy.max_lifetime_secs as i64))
}

/// The sandbox's idle timeout: its own, else the service's.
pub(crate) fn idle_timeout(face: &Face, info: &SessionInfo) -> u64 {
    info.idle_timeout_secs
        .unwrap_or(face.core.config().policy.idle_timeout_secs)
}

/// E2B's name of an open sandbox's state.
fn state_name(state: &SessionState) -> &'static str {
    match state {
        SessionState::Paused => "paused",
        _ => "running",
    }
}

/// What a template ID names.
pub(crate) enum Template {
    /// A runtime; `None`: the caller's default (`base`, unless the config maps it).
    Runtime(Option<String>),
    /// One of the caller's snapshots.
    Snapshot(SnapshotInfo),
}

/// The runtime or snapshot a template ID names: the config's `e2b.templates` first, then a
/// runtime alias, `base`, and the caller's snapshots; anything else is 404 listing the
/// templates the caller may use.
pub(crate) fn template(face: &Face, caller: &Caller, id: &str) -> Result<Template, E2bError> {
    let config = face.core.config();
    if let Some(runtime) = config.e2b.templates.get(id) {
        return Ok(Template::Runtime(Some(runtime.clone())));
    }
    if config.runtime(id).is_some() {
        return Ok(Template::Runtime(Some(id.to_string())));
    }
    if id == BASE_TEMPLATE {
        return Ok(Template::Runtime(None));
    }
    if let Ok(snapshot) = face.core.get_snapshot(caller, id) {
        return Ok(Template::Snapshot(snapshot));
    }
    let usable = face.core.usable_runtimes(&caller.principal);
    let mut names: Vec<&str> = config
        .e2b
        .templates
        .iter()
        .filter(|(_, runtime)| usable.contains(&runtime.as_str()))
        .map(|(name, _)| name.as_str())
        .chain([BASE_TEMPLATE])
        .chain(usable.iter().copied())
        .collect();
    names.sort_unstable();
    names.dedup();
    Err(E2bError::new(
        Code::NotFound,
        StatusCode::NOT_FOUND,
        format!(
            "template \"{id}\" is neither one of this service's templates nor a snapshot of yours; templates: {}",
            names.join(", ")
        ),
    ))
}

/// The whole CPUs E2B reports, at least one. The config checks `cpus` is a number above 0;
/// the cast of a whole float (ceil) saturates.
#[allow(clippy::cast_possible_truncation)]
fn cpu_count(cpus: f64) -> u64 {
    cpus.ceil().max(1.0) as u64
}
