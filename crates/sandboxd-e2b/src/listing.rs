//! `GET /v2/sandboxes` (and E2B's older `GET /sandboxes`): the caller's open sandboxes as E2B
//! lists them, newest first unless `order=asc`, filtered by `metadata`, `state`,
//! `startedAfter` and `template`, in pages of `limit` (`nextToken` a cursor: see
//! [`crate::paging`]). A parameter this service does not know,
//! or a value it cannot honour, is a 400 naming it, never ignored.

use crate::caller::ApiCaller;
use crate::control::{listed, template, Template};
use crate::errors::E2bError;
use crate::paging::{created_at_time, paged, Order, Position};
use crate::state::Face;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use sandboxd_api::{SessionInfo, SessionState};
use sandboxd_core::Caller;
use serde::Deserialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The query string, by E2B's names.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ListQuery {
    metadata: Option<String>,
    state: Option<String>,
    order: Option<String>,
    started_after: Option<String>,
    template: Option<String>,
    limit: Option<usize>,
    next_token: Option<String>,
}

/// What a listing keeps, read from a [`ListQuery`].
struct Filter {
    metadata: Vec<(String, String)>,
    /// `None`: every state.
    states: Option<Vec<SessionState>>,
    order: Order,
    started_after: Option<OffsetDateTime>,
    /// The runtime the `template` names; `Some(None)`: one that names nothing here.
    runtime: Option<Option<String>>,
}

pub async fn list(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    RawQuery(raw): RawQuery,
) -> Response {
    let result = async {
        let query: ListQuery = serde_urlencoded::from_str(raw.as_deref().unwrap_or(""))
            .map_err(|e| {
                E2bError::invalid(format!(
                    "the listing's query: {e}; known: metadata, state, order, startedAfter, template, limit, nextToken"
                ))
            })?;
        let filter = Filter::read(&face, &caller, &query)?;
        let mut sessions = face.core.list_sessions(&caller, false).await?.sessions;
        sessions.retain(|s| filter.keeps(s));
        Ok::<_, E2bError>((sessions, filter.order, query))
    }
    .await;
    match result {
        Ok((sessions, order, query)) => paged(
            sessions,
            order,
            query.next_token.as_deref(),
            query.limit,
            |s| Position::of(&s.created_at, &s.id),
            |s| listed(&face, s),
        ),
        Err(e) => e.into_http(),
    }
}

impl Filter {
    fn read(face: &Face, caller: &Caller, query: &ListQuery) -> Result<Filter, E2bError> {
        let metadata = match &query.metadata {
            Some(encoded) => serde_urlencoded::from_str(encoded).map_err(|e| {
                E2bError::invalid(format!(
                    "metadata is key=value pairs joined by & and URL-encoded once more: {e}"
                ))
            })?,
            None => Vec::new(),
        };
        let states = match &query.state {
            Some(names) => Some(
                names
                    .split(',')
                    .map(|name| match name.trim() {
                        "running" => Ok(SessionState::Running),
                        "paused" => Ok(SessionState::Paused),
                        other => Err(E2bError::invalid(format!(
                            "state \"{other}\" is neither running nor paused"
                        ))),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            None => None,
        };
        let order = match query.order.as_deref() {
            None | Some("desc") => Order::NewestFirst,
            Some("asc") => Order::OldestFirst,
            Some(other) => {
                return Err(E2bError::invalid(format!(
                    "order \"{other}\" is neither asc nor desc"
                )))
            }
        };
        let started_after = match &query.started_after {
            Some(at) => Some(OffsetDateTime::parse(at, &Rfc3339).map_err(|e| {
                E2bError::invalid(format!(
                    "startedAfter \"{at}\" is not an RFC 3339 time with its offset: {e}"
                ))
            })?),
            None => None,
        };
        let runtime = query
            .template
            .as_deref()
            .map(|id| match template(face, caller, id) {
                Ok(Template::Runtime(Some(runtime))) => Some(runtime),
                Ok(Template::Runtime(None)) => Some(face.core.config().default_runtime.clone()),
                Ok(Template::Snapshot(snapshot)) => Some(snapshot.runtime),
                Err(_) => None,
            });
        Ok(Filter {
            metadata,
            states,
            order,
            started_after,
            runtime,
        })
    }

    fn keeps(&self, session: &SessionInfo) -> bool {
        self.states
            .as_ref()
            .is_none_or(|states| states.contains(&session.state))
            && self
                .metadata
                .iter()
                .all(|(k, v)| session.labels.get(k).is_some_and(|have| have == v))
            && self
                .started_after
                .is_none_or(|after| created_at_time(&session.created_at) >= after)
            && self
                .runtime
                .as_ref()
                .is_none_or(|runtime| runtime.as_deref() == Some(session.runtime.as_str()))
    }
}
