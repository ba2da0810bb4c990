//! `extra_allowed_origins`: each an origin exactly as a browser sends it.

use crate::error::invalid;
use crate::error::ConfigError;

/// An origin as browsers send it: `http` or `https`, a host, an optional port, nothing more
/// (no path, no trailing slash, no wildcard), lowercased.
pub(crate) fn check_origin(origin: &str) -> Result<String, ConfigError> {
    let refuse = |why: &str| {
        invalid(
            "extra_allowed_origins",
            format!("{origin:?} {why}; write an origin as a browser sends it, e.g. \"http://localhost:6274\""),
        )
    };
    let lower = origin.to_ascii_lowercase();
    let uri: http::Uri = lower
        .parse()
        .map_err(|_| refuse("is not scheme://host[:port]"))?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    let authority_ok = uri
        .authority()
        .is_some_and(|a| !a.host().is_empty() && !a.as_str().contains('@'));
    // `Uri` reads "http://host" with the path "/": the origin is exactly scheme and authority.
    let exact = uri
        .authority()
        .zip(uri.scheme_str())
        .is_some_and(|(a, scheme)| lower == format!("{scheme}://{a}"));
    if !scheme_ok || !authority_ok || !exact {
        return Err(refuse(
            "is not an http:// or https:// origin (scheme://host[:port])",
        ));
    }
    Ok(lower)
}
