//! Share links by host name (`CAPABILITY.SHARE_DOMAIN`, when `[ports] share_domain` is set):
//! every request to such a host, whatever its path, goes to the port the link reaches, so
//! pages that load absolute paths (`/static/app.js`) work. The link's host is an origin of
//! its own, so the page keeps its cookies and storage there; its server's cookies are kept to
//! that host and only they reach it ([`crate::routes::share_cookies`]), so one link cannot set
//! cookies for another.

use crate::routes::share_cookies::{keep_own_cookies, vouch_for_set_cookies};
use crate::routes::share_path::forward_shared;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// A request to a link's host is the link's; any other goes on to the service's routes.
pub async fn route(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let domain = state.core.config().ports.share_domain.as_deref();
    let Some(capability) = domain.and_then(|domain| capability(&request, domain)) else {
        return next.run(request).await;
    };
    let path = request.uri().path().trim_start_matches('/').to_string();
    keep_own_cookies(&capability, request.headers_mut());
    let asked = request.headers().clone();
    match forward_shared(&state, &capability, &path, request).await {
        Ok(mut response) => {
            vouch_for_set_cookies(&capability, response.headers_mut());
            // The page's own policy, or one that lets it be the app it is on its own origin
            // (the service's default policy, for its own answers, would stop every script).
            let headers = response.headers_mut();
            headers
                .entry(header::CONTENT_SECURITY_POLICY)
                .or_insert(HeaderValue::from_static("frame-ancestors 'self'"));
            headers
                .entry(header::X_FRAME_OPTIONS)
                .or_insert(HeaderValue::from_static("SAMEORIGIN"));
            response
        }
        Err(error) => error.answer_for(&asked),
    }
}

/// The capability a `Host` of `CAPABILITY.DOMAIN` names (any port ignored).
fn capability(request: &Request, domain: &str) -> Option<String> {
    let host = request.headers().get(header::HOST)?.to_str().ok()?;
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let label = name.strip_suffix(domain)?.strip_suffix('.')?;
    (!label.is_empty() && label.bytes().all(|b| b.is_ascii_hexdigit())).then(|| label.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    #[test]
    fn only_a_hex_label_under_the_domain_is_a_link() {
        let at = |host: &str| {
            let request = Request::builder()
                .header(header::HOST, host)
                .body(Body::empty())
                .unwrap();
            capability(&request, "preview.example.com")
        };
        assert_eq!(at("ab12.preview.example.com:443").as_deref(), Some("ab12"));
        assert_eq!(at("AB12.Preview.example.com").as_deref(), Some("ab12"));
        assert_eq!(at("preview.example.com"), None);
        assert_eq!(at("a.b12.preview.example.com"), None);
        assert_eq!(at("ab12.preview.example.com.evil"), None);
        assert_eq!(at("xyz.preview.example.com"), None);
    }
}
