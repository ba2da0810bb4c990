//! The web dashboard: a page at `/` and its files under `/assets/`, all compiled into the
//! binary (nothing is fetched at build or run time). The page needs no token to load; every
//! figure it shows comes from the API, which does.
//!
//! The page gets a strict Content-Security-Policy: scripts and styles only from this service,
//! no inline script at all, connections only back to this service (its WebSocket included),
//! never framed. The terminal library adds `<style>` elements of its own at run time, so style
//! elements are allowed when they carry the nonce made for each answer; the page's script gives
//! it to the elements it creates. Style attributes are never allowed. Trusted Types are
//! required, so no string can reach `innerHTML` or another HTML sink even by mistake; the one
//! policy allowed, `sandboxd-notebook-frame`, is the notebook's, which puts a result's HTML only
//! into the `srcdoc` of an iframe sandboxed with no permission (no scripts, an opaque origin).
//! Such a frame inherits this policy; a result's `<style>` elements get the nonce (pandas' tables
//! are styled), and the frame adds a policy of its own that allows no request at all.
//! Images may be `data:` URLs: the notebook shows a result's PNG that way.

use crate::state::AppState;
use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rand::Rng;
use std::hash::{DefaultHasher, Hash, Hasher};

/// One file of the dashboard, as compiled in.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $type:expr) => {
        Asset {
            path: $path,
            content_type: $type,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/", $path)),
        }
    };
}

const INDEX_HTML: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/index.html"));
const API_DOCS_HTML: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/api-docs.html"));

/// The API reference's policy: the dashboard's, but for Swagger UI's HTML, which the page's
/// `default` Trusted Types policy passes through DOMPurify (`dompurify` is its own policy, made
/// by it and by the copy inside Swagger UI's bundle); no inline style, no nonce needed.
const API_DOCS_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     style-src-attr 'none'; img-src 'self' data:; font-src 'self'; connect-src 'self'; \
     worker-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; \
     frame-src 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; \
     trusted-types default dompurify 'allow-duplicates'";

/// Where the page's template takes the nonce of its answer.
const NONCE_PLACEHOLDER: &str = "__SANDBOXD_STYLE_NONCE__";

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

static ASSETS: &[Asset] = &[
    asset!("app.css", CSS),
    asset!("js/main.js", JS),
    asset!("js/api.js", JS),
    asset!("js/dom.js", JS),
    asset!("js/format.js", JS),
    asset!("js/store.js", JS),
    asset!("js/runner.js", JS),
    asset!("js/sessions.js", JS),
    asset!("js/session.js", JS),
    asset!("js/terminal.js", JS),
    asset!("js/shell.js", JS),
    asset!("js/files.js", JS),
    asset!("js/activity.js", JS),
    asset!("js/settings.js", JS),
    asset!("js/output.js", JS),
    asset!("js/viewer.js", JS),
    asset!("js/snapshots.js", JS),
    asset!("js/volumes.js", JS),
    asset!("js/ports.js", JS),
    asset!("js/notebook.js", JS),
    asset!("js/highlight.js", JS),
    asset!("vendor/highlight/core.min.js", JS),
    asset!("vendor/highlight/languages/python.min.js", JS),
    asset!("vendor/highlight/languages/javascript.min.js", JS),
    asset!("vendor/highlight/languages/typescript.min.js", JS),
    asset!("vendor/highlight/languages/r.min.js", JS),
    asset!("vendor/highlight/languages/bash.min.js", JS),
    asset!("vendor/highlight/languages/java.min.js", JS),
    asset!("js/poll.js", JS),
    asset!("js/network.js", JS),
    asset!("js/desktop.js", JS),
    asset!("notebook.css", CSS),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("vendor/xterm/xterm.mjs", JS),
    asset!("vendor/xterm/xterm.css", CSS),
    asset!("vendor/xterm/addon-fit.mjs", JS),
    asset!("vendor/novnc/rfb.mjs", JS),
    asset!("api-docs.css", CSS),
    asset!("js/api-docs.js", JS),
    asset!("vendor/swagger-ui/swagger-ui-bundle.js", JS),
    asset!("vendor/swagger-ui/swagger-ui.css", CSS),
    asset!("vendor/swagger-ui/purify.min.js", JS),
];

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(index))
        .route("/docs/api", get(api_reference))
        .route("/assets/{*path}", get(asset))
}

async fn index(headers: HeaderMap) -> Response {
    let nonce_bytes: [u8; 18] = rand::rng().random();
    let nonce = base64(&nonce_bytes);
    let policy = page_policy(&nonce, headers.get(header::HOST));
    page(INDEX_HTML.replace(NONCE_PLACEHOLDER, &nonce), &policy)
}

/// The OpenAPI document rendered by Swagger UI; the page asks for a token to fetch it.
async fn api_reference() -> Response {
    page(API_DOCS_HTML.to_string(), API_DOCS_POLICY)
}

/// A page under `policy`, never cached, never framed, with no powerful feature.
fn page(body: String, policy: &str) -> Response {
    let mut response = (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "permissions-policy",
        HeaderValue::from_static(
            "camera=(), microphone=(), geolocation=(), usb=(), payment=(), clipboard-read=()",
        ),
    );
    response
}

/// The page's policy. `connect-src 'self'` covers `ws:` to the same host in current browsers;
/// the page's own host is named for `ws:`/`wss:` as well for older ones. The guard has already
/// checked the host, and only a plain `name[:port]` is ever written into the header.
fn page_policy(nonce: &str, host: Option<&HeaderValue>) -> String {
    let websocket = host
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes().all(|b| {
                    b.is_ascii_alphanumeric()
                        || matches!(b, b'.' | b'-' | b'_' | b':' | b'[' | b']')
                })
        })
        .map(|h| format!(" ws://{h} wss://{h}"))
        .unwrap_or_default();
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self' 'nonce-{nonce}'; \
         style-src-attr 'none'; img-src 'self' blob: data:; font-src 'self'; \
         connect-src 'self'{websocket}; worker-src 'none'; object-src 'none'; \
         base-uri 'none'; form-action 'none'; frame-src 'none'; frame-ancestors 'none'; \
         require-trusted-types-for 'script'; trusted-types sandboxd-notebook-frame"
    )
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    let Some(asset) = ASSETS.iter().find(|a| a.path == path) else {
        return crate::error::ApiError(sandboxd_core::Error::NotFound(format!(
            "no dashboard file {path:?}"
        )))
        .into_response();
    };
    let etag = etag(asset);
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let common = [
        (header::CACHE_CONTROL, "no-cache".to_string()),
        (header::ETAG, etag),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    (
        [(header::CONTENT_TYPE, asset.content_type.to_string())],
        common,
        asset.body,
    )
        .into_response()
}

/// A validator for the compiled-in content (it only changes with the binary).
fn etag(asset: &Asset) -> String {
    let mut hasher = DefaultHasher::new();
    asset.body.hash(&mut hasher);
    format!("\"{:016x}\"", hasher.finish())
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xfb, 0xff, 0xfe]), "+//+");
    }

    #[test]
    fn policy_names_the_websocket_host_only_when_plain() {
        let host = HeaderValue::from_static("127.0.0.1:7717");
        let policy = page_policy("n0nce", Some(&host));
        assert!(policy.contains("connect-src 'self' ws://127.0.0.1:7717 wss://127.0.0.1:7717;"));
        assert!(policy.contains("style-src 'self' 'nonce-n0nce';"));
        assert!(policy.contains("frame-ancestors 'none'"));
        assert!(policy.contains("img-src 'self' blob: data:;"));
        assert!(policy.contains("trusted-types sandboxd-notebook-frame"));
        assert!(policy.contains("frame-src 'none'"));
        assert!(!policy.contains("unsafe"));
        let odd = HeaderValue::from_static("a; script-src *");
        assert!(page_policy("n", Some(&odd)).contains("connect-src 'self';"));
    }

    #[test]
    fn every_page_asset_is_compiled_in() {
        for path in [INDEX_HTML, API_DOCS_HTML]
            .iter()
            .flat_map(|page| page.split("/assets/").skip(1))
            .filter_map(|s| s.split('"').next())
        {
            assert!(
                ASSETS.iter().any(|a| a.path == path),
                "a page names /assets/{path}, which is not compiled in"
            );
        }
        assert!(INDEX_HTML.contains(NONCE_PLACEHOLDER));
    }
}
