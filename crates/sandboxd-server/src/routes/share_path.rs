//! Share links by path (`/p/{capability}/...`): every request under `/p` is a link's. What the
//! port behind the link answers is passed on, confined (see [`ports::share`]); every refusal
//! (a malformed or unknown capability, a link expired or revoked, a port that does not answer)
//! is answered the one way [`ApiError::answer_for`] does: a page a person can read to a
//! browser, the API's JSON to any other client.

use crate::error::ApiError;
use crate::routes::ports;
use crate::state::AppState;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{Redirect, Response};
use axum::routing::{get, on};
use axum::Router;
use sandboxd_core::Error;
use std::collections::HashMap;

/// The routes under `/p` (`app.rs` merges them; `/p` and `/p/` alone are [`no_route`]'s).
pub(crate) fn routes() -> Router<AppState> {
    let link = || {
        on(ports::proxied_methods(), shared)
            .fallback(|headers: HeaderMap| wrong_method(headers, LINK_METHODS))
    };
    Router::new()
        .route(
            "/p/{capability}",
            get(to_root).fallback(|headers: HeaderMap| wrong_method(headers, "GET,HEAD")),
        )
        .route("/p/{capability}/", link())
        .route("/p/{capability}/{*path}", link())
}

/// What the service answers where no route is (`app.rs`' fallback, after the E2B face's):
/// `not_found`, in words a browser shows as a page; `/p` and `/p/` are a link cut short.
pub(crate) async fn no_route(uri: axum::http::Uri, headers: HeaderMap) -> Response {
    let error = match uri.path() {
        "/p" | "/p/" => no_link(),
        _ => Error::NotFound("no such route; the API is under /v1".into()),
    };
    ApiError(error).answer_for(&headers)
}

/// What a link's address answers: the methods passed on to the port.
const LINK_METHODS: &str = "GET,HEAD,PUT,POST,DELETE,PATCH,OPTIONS";

/// A method the address does not take: 405 with the methods it takes, in words too.
async fn wrong_method(headers: HeaderMap, allow: &'static str) -> Response {
    let mut response = ApiError::bad_request(
        "method_not_allowed",
        format!("this address takes {}", allow.replace(',', ", ")),
    )
    .answer_for(&headers);
    *response.status_mut() = axum::http::StatusCode::METHOD_NOT_ALLOWED;
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

fn no_link() -> Error {
    Error::NotFound("no such link: check that it was copied whole".into())
}

/// `/p/{capability}/{*path}` (and `/p/{capability}/`): the request, forwarded to the port the
/// link reaches, with no token; the answer is confined (see [`ports::share`]).
async fn shared(
    State(state): State<AppState>,
    params: Result<Path<HashMap<String, String>>, PathRejection>,
    mut request: Request,
) -> Response {
    let Ok(Path(params)) = params else {
        return ApiError(no_link()).answer_for(request.headers());
    };
    let capability = params.get("capability").map_or("", String::as_str);
    let path = params.get("path").map_or("", String::as_str);
    crate::routes::share_cookies::drop_cookies(request.headers_mut());
    let asked = request.headers().clone();
    let mut response = match forward_shared(&state, capability, path, request).await {
        Ok(response) => response,
        Err(error) => return error.answer_for(&asked),
    };
    let headers = response.headers_mut();
    // A path link shares the service's origin: its page gets an opaque one instead, and
    // no cookie.
    headers.remove(header::SET_COOKIE);
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads",
        ),
    );
    response
}

/// The request, forwarded to the port the link `capability` reaches, with no token; the
/// answer sends no referrer (the capability would leak to other sites).
pub async fn forward_shared(
    state: &AppState,
    capability: &str,
    path: &str,
    request: Request,
) -> Result<Response, ApiError> {
    let (port, stream) = state.core.connect_shared(capability).await?;
    let mut response = crate::proxy::forward(stream, port, path, request).await?;
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    Ok(response)
}

/// `/p/{capability}`: to the link's root, with the slash relative links need.
async fn to_root(capability: Result<Path<String>, PathRejection>, headers: HeaderMap) -> Response {
    // As in `ports::to_root`: only what a capability looks like goes into the Location header.
    match capability {
        Ok(Path(capability)) if is_capability(&capability) => {
            axum::response::IntoResponse::into_response(Redirect::permanent(&format!(
                "/p/{capability}/"
            )))
        }
        _ => ApiError(no_link()).answer_for(&headers),
    }
}

/// Whether `text` has the form of a capability (made by the service: URL-safe, bounded).
fn is_capability(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 128
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
