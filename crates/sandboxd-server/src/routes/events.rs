//! The service's changes as Server-Sent Events, so a page learns at once that a session opened
//! or ended (closed, expired, or its sandbox removed outside), without polling for it.

use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::{Stream, StreamExt};
use std::convert::Infallible;
use std::time::Duration;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);

/// Follows the sessions the caller may see as they open and end.
#[utoipa::path(
    get,
    path = "/v1/events",
    tag = "sessions",
    summary = "Follow sessions opening and ending, as Server-Sent Events",
    description = "From now on, one `session` event (data: a SessionChange) each time a session the caller may see opens or ends, whoever ended it and why (closed, expired, its sandbox removed outside sandboxd, its agent silent). A follower that fell more than 256 changes behind gets `resync`: list the sessions again. Keepalive comments every 15 s.",
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 401, description = "`unauthorized`", body = sandboxd_api::ErrorBody)
    )
)]
pub async fn events(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let changes = state.core.session_changes(&caller).map(|change| {
        Ok(match change {
            Some(change) => SseEvent::default()
                .event("session")
                .data(serde_json::to_string(&change).unwrap_or_default()),
            None => SseEvent::default().event("resync").data("{}"),
        })
    });
    Ok(Sse::new(changes).keep_alive(
        KeepAlive::new()
            .interval(KEEPALIVE_INTERVAL)
            .text("keepalive"),
    ))
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(events))
}
