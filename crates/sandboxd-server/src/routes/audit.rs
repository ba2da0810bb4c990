//! The audit log: refused cross-tenant attempts, for the administrator.

use crate::error::ApiError;
use crate::extract::{ApiQuery, Authenticated, QueryRequest};
use crate::state::AppState;
use axum::extract::State;
use axum::Json;
use sandboxd_api::AuditList;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// The most entries to return: 1 to 500 (the default).
    limit: Option<u32>,
}

impl QueryRequest for AuditQuery {
    const TAKES: &'static str = "`limit=1..500`";
}

#[utoipa::path(
    get,
    path = "/v1/audit",
    tag = "service",
    summary = "The audit log: refused cross-tenant attempts, newest first",
    description = "Administrator only. Each entry says when, which credential (`principal`), through which interface, which operation (`action`) on which session, and the outcome (`denied`: the tenant was answered as for an unknown id). The service keeps the most recent 10,000.",
    params(AuditQuery),
    responses(
        (status = 200, description = "The most recent entries", body = AuditList),
        (status = 400, description = "`invalid_request`: `limit` is not 1 to 500", body = sandboxd_api::ErrorBody),
        (status = 403, description = "`admin_only`: a tenant token cannot read it", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn audit_log(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(query): ApiQuery<AuditQuery>,
) -> Result<Json<AuditList>, ApiError> {
    Ok(Json(state.core.audit(&caller, query.limit)?))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(audit_log))
}
