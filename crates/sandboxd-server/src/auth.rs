//! The token check in front of every API route: the core says who the bearer token belongs
//! to, and the handlers find the principal among the request's extensions.
//!
//! A connection ticket (see [`sandboxd_core::tickets`]) stands in for the token on three
//! routes only, the terminal WebSocket, a process's output stream and a desktop's live view,
//! and only for the session it was issued for. It comes as the WebSocket subprotocol `ticket.<ticket>` (the origin guard
//! moves it into a [`PresentedTicket`]) or as `?ticket=`, which is taken out of the query
//! before the handler sees it. The connection then acts as the principal and interface the
//! ticket was issued to. Anywhere else a ticket authenticates nothing.

use crate::error::ApiError;
use axum::extract::{MatchedPath, RawPathParams, Request, State};
use axum::http::{header, HeaderValue, Method, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sandboxd_api::CLIENT_HEADER;
use sandboxd_core::Core;

/// The routes a ticket opens: the terminal, a process's output stream and a desktop's live
/// view.
const TICKET_ROUTES: [&str; 3] = [
    "/v1/sessions/{id}/pty",
    "/v1/sessions/{id}/processes/{process_id}/stream",
    "/v1/sessions/{id}/computer/view",
];

/// The query parameter that carries a ticket.
const TICKET_PARAMETER: &str = "ticket";

/// A ticket offered as a WebSocket subprotocol.
#[derive(Clone)]
pub struct PresentedTicket(pub String);

pub async fn require_token(
    State(core): State<Core>,
    matched: Option<MatchedPath>,
    params: Result<RawPathParams, axum::extract::rejection::RawPathParamsRejection>,
    mut request: Request,
    next: Next,
) -> Response {
    let address = crate::extract::client_address(&request);
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.strip_prefix("Bearer ").unwrap_or("").to_string());
    let ticket_route = matched.is_some_and(|m| TICKET_ROUTES.contains(&m.as_str()))
        && request.method() == Method::GET;
    let ticket = if ticket_route {
        take_ticket(&mut request)
    } else {
        None
    };
    let session = params.ok().and_then(|params| {
        params
            .iter()
            .find(|(name, _)| *name == "id")
            .map(|(_, id)| id.to_string())
    });
    let authenticated = match (authorization, ticket, session) {
        (Some(token), _, _) => core.authenticate(&token, address),
        (None, Some(ticket), Some(session)) => {
            core.redeem_ticket(&ticket, &session, address)
                .map(|caller| {
                    // A browser cannot name its interface on these connections: the ticket does.
                    request.headers_mut().insert(
                        CLIENT_HEADER,
                        HeaderValue::from_static(caller.interface.name()),
                    );
                    caller.principal
                })
        }
        _ => core.authenticate("", address),
    };
    match authenticated {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(e) => ApiError(e).into_response(),
    }
}

/// The ticket a request to a ticket route presents: its subprotocol, or `?ticket=`, which is
/// removed from the query either way.
fn take_ticket(request: &mut Request) -> Option<String> {
    let offered = request
        .extensions_mut()
        .remove::<PresentedTicket>()
        .map(|PresentedTicket(ticket)| ticket);
    let in_query = match request.uri().query() {
        Some(query) => {
            let (tickets, rest): (Vec<&str>, Vec<&str>) = query
                .split('&')
                .partition(|pair| pair.split('=').next() == Some(TICKET_PARAMETER));
            let path = request.uri().path();
            let ticket = tickets.first().map(|pair| {
                pair[TICKET_PARAMETER.len()..]
                    .trim_start_matches('=')
                    .to_string()
            });
            if ticket.is_some() {
                let uri = if rest.is_empty() {
                    path.to_string()
                } else {
                    format!("{path}?{}", rest.join("&"))
                };
                if let Ok(uri) = uri.parse::<Uri>() {
                    *request.uri_mut() = uri;
                }
            }
            ticket
        }
        None => None,
    };
    offered.or(in_query)
}
