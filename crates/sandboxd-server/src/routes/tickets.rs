//! Connection tickets: what the dashboard presents on a terminal WebSocket, a live view or an
//! output stream instead of the long-lived token (see `sandboxd_core::tickets`).

use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use sandboxd_api::Ticket;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[utoipa::path(
    post,
    path = "/v1/sessions/{id}/tickets",
    tag = "sessions",
    summary = "A single-use ticket for one terminal, output stream or live view of the session",
    description = "For clients that cannot send `Authorization` on a connection (a browser's WebSocket or EventSource). The ticket authenticates exactly one connection, as the caller that asked for it, to this session's terminal (`GET .../pty`) or live view of its screen (`GET .../computer/view`), each offered as the WebSocket subprotocol `ticket.<ticket>` beside `sandboxd`, or to one of its output streams (`GET .../processes/{process_id}/stream?ticket=<ticket>`), within `expires_in_secs` (30). It is spent when presented; a spent, expired or other session's ticket is answered 401 like a wrong token. It authenticates nothing else.",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The ticket", body = Ticket),
        (status = 429, description = "`too_many_tickets`: 10,000 are outstanding; try again in a few seconds", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn issue(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Ticket>, ApiError> {
    Ok(Json(state.core.issue_ticket(&caller, &id)?))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(issue))
}
