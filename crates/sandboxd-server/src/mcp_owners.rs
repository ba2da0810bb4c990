//! Each MCP session of `/mcp` belongs to the principal whose token opened it. Every tool call
//! acts with its own request's token anyway; the binding keeps what travels on the session
//! itself (its stream of progress notifications, `notifications/cancelled`, ending it) to its
//! owner: a request naming a session another principal opened is answered as if there were
//! no such session.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sandboxd_core::Principal;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

const SESSION_HEADER: &str = "mcp-session-id";
/// Owners remembered at most. rmcp keeps at most `sandboxd_mcp::MAX_SESSIONS` sessions open, so
/// the oldest owners forgotten past this belong to sessions long ended; a session whose owner
/// was forgotten is refused like an unknown one, and its client initializes again.
const OWNERS_KEPT: usize = 4 * sandboxd_mcp::MAX_SESSIONS;

/// Session id -> its owner's name, oldest first in `order`.
#[derive(Default)]
struct Book {
    owners: HashMap<String, String>,
    order: VecDeque<String>,
}

#[derive(Clone, Default)]
pub struct Owners(Arc<Mutex<Book>>);

impl Owners {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn owner(&self, session: &str) -> Option<String> {
        self.book().owners.get(session).cloned()
    }

    fn record(&self, session: String, owner: String) {
        let mut book = self.book();
        if book.order.len() >= OWNERS_KEPT {
            if let Some(oldest) = book.order.pop_front() {
                book.owners.remove(&oldest);
            }
        }
        book.order.push_back(session.clone());
        book.owners.insert(session, owner);
    }

    fn forget(&self, session: &str) {
        let mut book = self.book();
        book.owners.remove(session);
        book.order.retain(|kept| kept != session);
    }
}

/// The middleware, inside the token check: refuses a session of another principal, records
/// the owner of a session the handshake opened, forgets one its owner ended.
pub async fn bind(State(owners): State<Owners>, request: Request, next: Next) -> Response {
    let caller = request.extensions().get::<Principal>().map(Principal::name);
    let session = session_of(request.headers());
    if let Some(session) = &session {
        if owners.owner(session) != caller {
            return no_such_session();
        }
    }
    let ending = request.method() == Method::DELETE;
    let response = next.run(request).await;
    match (session, caller) {
        (None, Some(caller)) => {
            if let Some(opened) = session_of(response.headers()) {
                owners.record(opened, caller);
            }
        }
        (Some(session), _) if ending && response.status().is_success() => owners.forget(&session),
        _ => {}
    }
    response
}

fn session_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

fn no_such_session() -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32600,
            "message": "no such MCP session (it ended, idled out, or was opened with another token): send initialize again",
        },
    });
    (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}
