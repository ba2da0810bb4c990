//! `GET /v1/engine`: what the container engine said about itself when the service connected
//! (versions, runc against known container escapes, user namespaces, seccomp, AppArmor,
//! cgroups), as the backend reported it. The service keeps it as plain JSON: the report's
//! shape belongs to the backend (`sandboxd_docker::engine::EngineReport` for Docker).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::Service;
use axum::extract::State;
use axum::Json;

#[utoipa::path(
    get,
    path = "/v1/engine",
    tag = "service",
    summary = "The container engine's versions and security settings, checked at start",
    description = "For Docker: `engine_version`, `api_version`, `negotiated_api_version`, `operating_system`, `kernel_version`, `runc_version`, `runc_commit`, `default_runtime`, `runtimes`, `cgroup_version`, `cgroup_driver`, `user_namespaces`, `seccomp_profile` (null when off), `apparmor`, `selinux`, `rootless`, `runc_checks` (`cve`, `summary`, `fixed_in`, `status`: `at_or_after_fix`, `older_than_fix` or `unknown`; distributions backport fixes without changing the version) and `findings` (`level`: `warning` or `info`, `message`). Administrator only.",
    responses(
        (status = 200, description = "The engine report", body = Object),
        (status = 403, description = "`admin_only`: a tenant token cannot read it", body = sandboxd_api::ErrorBody),
        (status = 404, description = "`not_found`: the backend reported nothing about its engine", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn engine_report(
    State(service): State<Service>,
    principal: Principal,
) -> Result<Json<serde_json::Value>, ApiError> {
    principal.require_admin("the engine report")?;
    service
        .inner
        .engine
        .get()
        .cloned()
        .map(Json)
        .ok_or_else(|| ApiError::NotFound("the backend reported nothing about its engine".into()))
}
