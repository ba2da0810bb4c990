//! The guard in front of the whole service: which `Host` and `Origin` a request may carry, the
//! bearer token of a browser's WebSocket, and the security headers of every response.
//!
//! The service token is a root credential and the dashboard holds it in a browser, so two
//! browser attacks matter even on loopback:
//!
//! - DNS rebinding: a page on `evil.example` re-points its name at 127.0.0.1 and talks to the
//!   service as if same-origin. Its requests carry `Host: evil.example`, so only hosts the
//!   service can be reached by legitimately are accepted: `localhost`, a loopback address, the
//!   address it listens on (any address when it listens on all of them: a rebinding attack
//!   always carries the attacker's name, never an address), and the names the operator lists
//!   in `SANDBOXD_ALLOWED_HOSTS` (comma-separated; e.g. `sandboxd.lan`). The port is not
//!   compared: it says nothing about who made the page, and a tunnel (`ssh -L 8080:...:7717`)
//!   or a proxy legitimately changes it. Origin checks below do compare it.
//! - Cross-origin requests: a page on another origin (another port of localhost included)
//!   must not drive the API, nor open a WebSocket (browsers do not apply CORS to those). When a
//!   request carries `Origin`, it must be this service's own origin: the scheme and the very
//!   `Host` the request was sent to.
//!
//! The operator may allow more origins for `/mcp` alone (`extra_allowed_origins`, e.g. the MCP
//! Inspector's page at `http://localhost:6274`): a browser tool there may call the MCP endpoint
//! with a token it was given, never the REST API or the dashboard. None are allowed by default.
//!
//! A request failing either check gets 403 with the usual JSON error. A request with neither
//! header (HTTP/1.0, some tools) did not come from a browser and is let through; the token
//! check still applies.
//!
//! Browsers cannot set `Authorization` on a WebSocket. The dashboard offers a short-lived,
//! single-use ticket as a subprotocol instead, `ticket.<ticket>`, beside the protocol it speaks
//! (`sandboxd`); the guard hands it to the token check (see `auth`). Other clients may offer
//! the long-lived token itself, `bearer.<token in unpadded base64url>`: on an upgrade request
//! without `Authorization`, the guard turns that entry into the `Authorization` header the
//! token check reads. Either entry is removed from the offered protocols, so no handler ever
//! echoes a credential back. When the upgrade is accepted and its handler chose no protocol,
//! the guard answers with the first one left (a browser fails a handshake that offered
//! protocols and got none back).

use crate::auth::PresentedTicket;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use sandboxd_api::{ErrorBody, ErrorDetail};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The subprotocol prefix that carries the long-lived token on a WebSocket.
pub const BEARER_PROTOCOL_PREFIX: &str = "bearer.";
/// The subprotocol prefix that carries a connection ticket on a browser's WebSocket.
pub const TICKET_PROTOCOL_PREFIX: &str = "ticket.";

/// Which hosts the guard accepts.
#[derive(Debug, Clone)]
pub struct Guard {
    /// Where the service listens.
    listen: IpAddr,
    /// Lower-case host names, without port.
    allowed_names: Vec<String>,
    /// Lower-case origins allowed to call `/mcp` beside the service's own.
    mcp_origins: Vec<String>,
    /// Domains whose every subdomain is allowed (`e2b.domain`: `api.D`, `PORT-ID.D`;
    /// `ports.share_domain`: `CAPABILITY.D`), each with its leading dot.
    allowed_subdomains_of: Vec<String>,
}

impl Guard {
    /// A guard for a service listening on `listen`, also accepting the host `names` the
    /// operator allows (`--allowed-hosts`).
    pub fn new<'a>(listen: SocketAddr, names: impl IntoIterator<Item = &'a str>) -> Guard {
        let allowed_names = names
            .into_iter()
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .filter_map(|name| parse_host(name).map(|(host, _)| host))
            .collect();
        Guard {
            listen: listen.ip(),
            allowed_names,
            mcp_origins: Vec::new(),
            allowed_subdomains_of: Vec::new(),
        }
    }

    /// The same guard, also letting pages on `origins` call `/mcp`.
    pub fn with_mcp_origins(mut self, origins: &[String]) -> Guard {
        self.mcp_origins = origins.iter().map(|o| o.to_ascii_lowercase()).collect();
        self
    }

    fn extra_origin_allowed(&self, path: &str, origin: &str) -> bool {
        path == crate::mcp::MCP_PATH && self.mcp_origins.contains(&origin.to_ascii_lowercase())
    }

    /// Also accepts every name under `domain` (the E2B face's host names).
    pub fn allowing_subdomains_of(mut self, domain: Option<&str>) -> Guard {
        self.allowed_subdomains_of
            .extend(domain.map(|d| format!(".{}", d.to_ascii_lowercase())));
        self
    }

    fn host_allowed(&self, host: &str) -> bool {
        let Some((name, _port)) = parse_host(host) else {
            return false;
        };
        match name.parse::<IpAddr>() {
            Ok(ip) => ip.is_loopback() || ip == self.listen || self.listen.is_unspecified(),
            Err(_) => {
                name == "localhost"
                    || self.allowed_names.contains(&name)
                    || self
                        .allowed_subdomains_of
                        .iter()
                        .any(|suffix| name.len() > suffix.len() && name.ends_with(suffix.as_str()))
            }
        }
    }
}

/// The middleware: `axum::middleware::from_fn_with_state(Arc::new(guard), origin::guard)`.
pub async fn guard(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let host = request_host(&request);
    if let Some(host) = &host {
        if !guard.host_allowed(host) {
            return forbidden(
                "forbidden_host",
                format!(
                    "this service does not answer to the host name {:?} (a defence against DNS rebinding); use http://localhost:PORT or the address it listens on, or have the operator add the name to SANDBOXD_ALLOWED_HOSTS (--allowed-hosts)",
                    printable(host)
                ),
            );
        }
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let same_origin = match (&host, origin.to_str()) {
            (Some(host), Ok(origin)) => {
                is_same_origin(origin, host)
                    || guard.extra_origin_allowed(request.uri().path(), origin)
            }
            _ => false,
        };
        if !same_origin {
            return forbidden(
                "forbidden_origin",
                format!(
                    "requests from a page on another origin ({:?}) are refused: only this service's own dashboard may call it from a browser",
                    printable(origin.to_str().unwrap_or("?"))
                ),
            );
        }
    }
    let remaining_protocols = take_bearer_protocol(&mut request);
    let mut response = next.run(request).await;
    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        if let Some(first) = remaining_protocols.and_then(|p| p.into_iter().next()) {
            if !response
                .headers()
                .contains_key(header::SEC_WEBSOCKET_PROTOCOL)
            {
                if let Ok(value) = HeaderValue::from_str(&first) {
                    response
                        .headers_mut()
                        .insert(header::SEC_WEBSOCKET_PROTOCOL, value);
                }
            }
        }
    }
    security_headers(response.headers_mut());
    response
}

/// Headers every response carries; the dashboard's page sets its own policy first.
fn security_headers(headers: &mut HeaderMap) {
    let defaults: [(HeaderName, &str); 6] = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; sandbox",
        ),
        (
            HeaderName::from_static("cross-origin-resource-policy"),
            "same-origin",
        ),
        // Answers hold session data and file contents: no cache keeps them.
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (name, value) in defaults {
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
}

fn forbidden(code: &str, message: String) -> Response {
    let mut response = (
        StatusCode::FORBIDDEN,
        Json(ErrorBody {
            error: ErrorDetail {
                code: code.to_string(),
                message,
                remedy: None,
            },
        }),
    )
        .into_response();
    security_headers(response.headers_mut());
    response
}

/// The host the request was sent to: `Host`, or the authority of an absolute URI (HTTP/2).
fn request_host(request: &Request) -> Option<String> {
    if let Some(value) = request.headers().get(header::HOST) {
        // A Host that is not even text is not one of ours.
        return Some(value.to_str().unwrap_or("\u{fffd}").to_string());
    }
    request.uri().authority().map(|a| a.as_str().to_string())
}

/// Splits `name[:port]` or `[v6][:port]` into a lower-case name (an IPv6 address without its
/// brackets) and the port; `None` when malformed.
fn parse_host(host: &str) -> Option<(String, Option<u16>)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        inside.parse::<std::net::Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (inside, port)
    } else {
        let (name, port) = match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        };
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
        if !valid {
            return None;
        }
        (name, port)
    };
    let port = match port {
        None => None,
        Some(digits) => {
            if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            Some(digits.parse::<u16>().ok()?)
        }
    };
    Some((name.to_ascii_lowercase(), port))
}

/// Whether `origin` (`scheme://host[:port]`) is the origin of a page served from `host`.
fn is_same_origin(origin: &str, host: &str) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false; // "null", an opaque origin, is never ours
    };
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return false,
    };
    match (parse_host(authority), parse_host(host)) {
        (Some((origin_name, origin_port)), Some((host_name, host_port))) => {
            origin_name == host_name
                && origin_port.unwrap_or(default_port) == host_port.unwrap_or(default_port)
        }
        _ => false,
    }
}

/// On a WebSocket upgrade, moves a `bearer.<base64url>` subprotocol into `Authorization`
/// (unless the request has one) and a `ticket.<ticket>` one into a [`PresentedTicket`], and
/// removes both from the offered protocols. Returns the protocols left when the request
/// offered any.
fn take_bearer_protocol(request: &mut Request) -> Option<Vec<String>> {
    let headers = request.headers();
    let is_upgrade = headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if !is_upgrade || !headers.contains_key(header::SEC_WEBSOCKET_PROTOCOL) {
        return None;
    }
    let offered: Vec<String> = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    let (bearer, rest): (Vec<String>, Vec<String>) = offered
        .into_iter()
        .partition(|p| p.starts_with(BEARER_PROTOCOL_PREFIX));
    let (tickets, rest): (Vec<String>, Vec<String>) = rest
        .into_iter()
        .partition(|p| p.starts_with(TICKET_PROTOCOL_PREFIX));
    if let Some(ticket) = tickets.first() {
        let ticket = ticket[TICKET_PROTOCOL_PREFIX.len()..].to_string();
        request.extensions_mut().insert(PresentedTicket(ticket));
    }
    let headers = request.headers_mut();
    headers.remove(header::SEC_WEBSOCKET_PROTOCOL);
    if !rest.is_empty() {
        if let Ok(value) = HeaderValue::from_str(&rest.join(", ")) {
            headers.insert(header::SEC_WEBSOCKET_PROTOCOL, value);
        }
    }
    if !headers.contains_key(header::AUTHORIZATION) {
        let token = bearer
            .first()
            .and_then(|p| decode_base64url(&p[BEARER_PROTOCOL_PREFIX.len()..]))
            .and_then(|bytes| String::from_utf8(bytes).ok());
        if let Some(value) = token.and_then(|t| HeaderValue::from_str(&format!("Bearer {t}")).ok())
        {
            headers.insert(header::AUTHORIZATION, value);
        }
    }
    Some(rest)
}

/// Unpadded base64url (RFC 4648 §5); `None` on any other character or a bad length.
fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        } as u32)
    }
    let text = text.trim_end_matches('=').as_bytes();
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

/// A value from a request, safe to quote in a message: printable ASCII, cut short.
fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(100)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_loopback_names_addresses_and_allowed_names() {
        let listen: SocketAddr = "10.1.2.3:7717".parse().unwrap();
        let guard = Guard::new(listen, ["sandboxd.lan", "Box.Example:7717"]);
        for host in [
            "localhost:7717",
            "LOCALHOST",
            "localhost:8080",
            "127.0.0.1:7717",
            "127.0.0.2",
            "[::1]:7717",
            "[::1]",
            "10.1.2.3:7717",
            "sandboxd.lan:7717",
            "box.example",
        ] {
            assert!(guard.host_allowed(host), "{host} should be allowed");
        }
        for host in [
            "10.1.2.4:7717",
            "[fe80::1]:7717",
            "evil.example:7717",
            "localhost.evil.example",
            "127.0.0.1.nip.io:7717",
            "localhost:",
            "localhost:99999",
            "localhost:7717:1",
            "[::1",
            "[evil]:80",
            "",
            "local host",
            "localhost/x",
        ] {
            assert!(!guard.host_allowed(host), "{host:?} should be refused");
        }
        // Listening on every address, any address names it.
        let guard = Guard::new("0.0.0.0:7717".parse().unwrap(), []);
        assert!(guard.host_allowed("10.1.2.4:7717"));
        assert!(guard.host_allowed("[fe80::1]:7717"));
        assert!(!guard.host_allowed("evil.example:7717"));
    }

    #[test]
    fn same_origin_is_scheme_host_and_port() {
        assert!(is_same_origin("http://127.0.0.1:7717", "127.0.0.1:7717"));
        assert!(is_same_origin("http://LOCALHOST:7717", "localhost:7717"));
        assert!(is_same_origin("http://localhost", "localhost:80"));
        assert!(is_same_origin("https://[::1]:8443", "[::1]:8443"));
        assert!(!is_same_origin("http://localhost:3000", "localhost:7717"));
        assert!(!is_same_origin(
            "http://evil.example:7717",
            "localhost:7717"
        ));
        assert!(!is_same_origin("http://127.0.0.1:7717", "localhost:7717"));
        assert!(!is_same_origin("null", "localhost:7717"));
        assert!(!is_same_origin("file://", "localhost:7717"));
        assert!(!is_same_origin("chrome-extension://abc", "localhost:7717"));
    }

    #[test]
    fn decodes_unpadded_base64url() {
        assert_eq!(decode_base64url("").unwrap(), b"");
        assert_eq!(decode_base64url("Zg").unwrap(), b"f");
        assert_eq!(decode_base64url("Zm8").unwrap(), b"fo");
        assert_eq!(decode_base64url("Zm9v").unwrap(), b"foo");
        assert_eq!(decode_base64url("Zm9vYg==").unwrap(), b"foob");
        assert_eq!(decode_base64url("-_8").unwrap(), [0xfb, 0xff]);
        assert!(decode_base64url("Z").is_none());
        assert!(decode_base64url("Zm9v+").is_none());
    }
}
