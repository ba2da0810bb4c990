//! Which part of the face a request is for: envd of one sandbox, or the control plane.

use axum::extract::Request;
use axum::http::header;
use axum::Router;
use tower::ServiceExt;

/// The header every SDK request to envd carries.
pub const SANDBOX_ID_HEADER: &str = "e2b-sandbox-id";
/// The port of envd in an E2B sandbox, the only one sandboxd serves.
pub const ENVD_PORT: u16 = 49983;

/// The sandbox a request to envd is for.
#[derive(Clone)]
pub struct SandboxId(pub String);

/// What a request's sandbox address says.
enum Target {
    Envd(String),
    /// A port of a sandbox other than envd's.
    OtherPort(u16),
    Control,
}

/// A router that sends a request naming a sandbox to `envd` (with its [`SandboxId`]) and any
/// other to `control`.
pub fn dispatch(domain: Option<String>, control: Router, envd: Router) -> Router {
    Router::new().fallback(move |mut request: Request| {
        let (control, envd) = (control.clone(), envd.clone());
        let target = target(&request, domain.as_deref());
        async move {
            match target {
                Target::Envd(id) => {
                    request.extensions_mut().insert(SandboxId(id));
                    envd.oneshot(request).await
                }
                Target::OtherPort(port) => Ok(crate::errors::E2bError::unsupported(&format!(
                    "reaching port {port} of a sandbox (only envd's, {ENVD_PORT}, is served)"
                ))
                .into_http()),
                Target::Control => control.oneshot(request).await,
            }
        }
    })
}

fn target(request: &Request, domain: Option<&str>) -> Target {
    if let Some(id) = request
        .headers()
        .get(SANDBOX_ID_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        return Target::Envd(id.to_string());
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| request.uri().host())
        .unwrap_or("");
    match domain.and_then(|domain| sandbox_host(host, domain)) {
        Some((port, id)) if port == ENVD_PORT => Target::Envd(id),
        Some((port, _)) => Target::OtherPort(port),
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
