//! Which part of the face a request is for: a port of one sandbox (envd's or another the face
//! serves itself, else the sandbox's own server through the service's port proxy), or the
//! control plane.

use axum::extract::Request;
use axum::http::header;
use axum::Router;
use tower::ServiceExt;

use crate::naming::{ENVD_PORT, SANDBOX_ID_HEADER, SANDBOX_PORT_HEADER};
use crate::signed;
use crate::state::ClientAddress;
use crate::state::Face;

/// The sandbox a request to envd is for.
#[derive(Clone)]
pub struct SandboxId(pub String);

/// The sandbox port a request is for (beside its [`SandboxId`]).
#[derive(Clone, Copy)]
pub struct SandboxPort(pub u16);

/// What a request's sandbox address says.
enum Target {
    /// A port of a sandbox, and the sandbox.
    Sandbox(u16, String),
    /// A sandbox port header that is not a port.
    BadPort,
    Control,
}

/// A router that sends a request naming a sandbox and a port to the router `served` lists for
/// that port (envd's first), to `ports` for any other (the sandbox's own servers), each with
/// its [`SandboxId`] and [`SandboxPort`]; and any other request to `control`.
pub fn dispatch(face: Face, control: Router, served: Vec<(u16, Router)>, ports: Router) -> Router {
    let domain = face.core.config().e2b.domain.clone();
    Router::new().fallback(move |address: ClientAddress, mut request: Request| {
        let mut target = target(&request, domain.as_deref());
        // A signed file URL is envd's, named by its host or header or else by its signature.
        let signed = match &target {
            Target::Sandbox(ENVD_PORT, _) | Target::Control if signed::is_signed(&request) => {
                let id = match &target {
                    Target::Sandbox(_, id) => Some(id.as_str()),
                    _ => None,
                };
                let authorized = signed::authorize(&face, id, &address, &mut request);
                if authorized.is_ok() {
                    target = self::target(&request, domain.as_deref());
                }
                Some(authorized)
            }
            _ => None,
        };
        let router = match &target {
            Target::Sandbox(port, _) => served
                .iter()
                .find(|(served, _)| served == port)
                .map_or(&ports, |(_, router)| router),
            Target::BadPort => &ports,
            Target::Control => &control,
        }
        .clone();
        async move {
            if let Some(Err(refused)) = signed {
                return Ok(refused.into_http());
            }
            match target {
                Target::Sandbox(port, id) => {
                    request.extensions_mut().insert(SandboxId(id));
                    request.extensions_mut().insert(SandboxPort(port));
                    router.oneshot(request).await
                }
                Target::BadPort => Ok(crate::errors::E2bError::invalid(format!(
                    "{SANDBOX_PORT_HEADER} is a port number from 1 to 65535"
                ))
                .into_http()),
                Target::Control => router.oneshot(request).await,
            }
        }
    })
}

/// Whether the request names a sandbox (by header or `e2b.domain` host name): then it is the
/// sandbox's, whatever its path, and must reach the E2B face before the service's own routes.
pub fn names_a_sandbox(request: &Request, domain: Option<&str>) -> bool {
    !matches!(target(request, domain), Target::Control)
}

fn target(request: &Request, domain: Option<&str>) -> Target {
    let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
    if let Some(id) = header(SANDBOX_ID_HEADER) {
        return match header(SANDBOX_PORT_HEADER).map(|p| p.trim().parse::<u16>()) {
            None => Target::Sandbox(ENVD_PORT, id.to_string()),
            Some(Ok(port)) if port != 0 => Target::Sandbox(port, id.to_string()),
            Some(_) => Target::BadPort,
        };
    }
    let host = header(header::HOST.as_str())
        .or_else(|| request.uri().host())
        .unwrap_or("");
    match domain.and_then(|domain| sandbox_host(host, domain)) {
        Some((port, id)) if port != 0 => Target::Sandbox(port, id),
        Some(_) => Target::BadPort,
        None => Target::Control,
    }
}

/// `PORT-ID.DOMAIN` (any port of the host header ignored) as its port and sandbox id.
pub fn sandbox_host(host: &str, domain: &str) -> Option<(u16, String)> {
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let label = name.strip_suffix(domain)?.strip_suffix('.')?;
    let (port, id) = label.split_once('-')?;
    (!id.is_empty() && !id.contains('.')).then_some(())?;
    Some((port.parse().ok()?, id.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_hosts_are_port_dash_id_under_the_domain() {
        let domain = "e2b.example.com";
        assert_eq!(
            sandbox_host("49983-abc123.e2b.example.com", domain),
            Some((49983, "abc123".into()))
        );
        assert_eq!(
            sandbox_host("49983-abc123.E2B.example.com:443", domain),
            Some((49983, "abc123".into()))
        );
        assert_eq!(sandbox_host("api.e2b.example.com", domain), None);
        assert_eq!(sandbox_host("49983-abc.evil.com", domain), None);
        assert_eq!(sandbox_host("49983-a.b.e2b.example.com", domain), None);
        assert_eq!(sandbox_host("x-abc.e2b.example.com", domain), None);
    }
}
