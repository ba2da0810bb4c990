//! Secrets in requests: a session's placeholder becomes the real value only in the one header
//! its secret is configured for (exactly `Header: format` with the placeholder in the slot),
//! only in a request the proxy sends itself over TLS to one of the secret's hosts. A
//! placeholder anywhere else (another header, another form, the URL, another host, plain
//! HTTP) refuses the whole request, so a program cannot carry it to a host that would echo
//! or keep it.

use http::header::{HeaderMap, HeaderValue};
use http::Uri;
use sandboxd_config::Secret;
use std::sync::Arc;

/// A secret a session has, with the placeholder its sandbox holds for it.
#[derive(Debug, Clone)]
pub struct SessionSecret {
    pub secret: Arc<Secret>,
    pub placeholder: String,
}

/// Why a request carrying a placeholder was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Misplaced {
    pub secret: String,
    pub why: &'static str,
}

/// Where a request goes and how.
pub(crate) struct Destination<'a> {
    pub host: &'a str,
    pub port: u16,
    /// The proxy itself sends the request over TLS it verified (an intercepted host).
    pub intercepted: bool,
}

/// Puts the real values in for the placeholders `headers` carries, where they belong, and
/// returns the names of the secrets put in; any placeholder found elsewhere refuses the
/// request (and nothing is changed).
pub(crate) fn substitute(
    secrets: &[SessionSecret],
    to: &Destination<'_>,
    uri: &Uri,
    headers: &mut HeaderMap,
) -> Result<Vec<String>, Misplaced> {
    let uri = uri.to_string();
    let mut replacements = Vec::new();
    for session_secret in secrets {
        let (secret, placeholder) = (&session_secret.secret, &session_secret.placeholder);
        let carrying: Vec<(&http::HeaderName, &HeaderValue)> = headers
            .iter()
            .filter(|(_, value)| contains(value.as_bytes(), placeholder.as_bytes()))
            .collect();
        let in_uri = uri.contains(placeholder.as_str());
        if carrying.is_empty() && !in_uri {
            continue;
        }
        let misplaced = |why| Misplaced {
            secret: secret.name.clone(),
            why,
        };
        if !to.intercepted || !sandboxd_api::egress_allows(&secret.hosts, to.host, to.port) {
            return Err(misplaced("may not go to this host"));
        }
        let expected = secret.header_value(placeholder);
        let in_place = !in_uri
            && carrying.len() == 1
            && carrying[0].0.as_str() == secret.header
            && carrying[0].1.as_bytes() == expected.as_bytes()
            && headers.get_all(carrying[0].0).iter().count() == 1;
        if !in_place {
            return Err(misplaced(
                "is only put in as its configured header, and only there",
            ));
        }
        let mut value = HeaderValue::from_str(&secret.header_value(secret.value.expose()))
            .map_err(|_| misplaced("does not make a valid header"))?;
        value.set_sensitive(true);
        replacements.push((carrying[0].0.clone(), value, secret.name.clone()));
    }
    Ok(replacements
        .into_iter()
        .map(|(name, value, secret)| {
            headers.insert(name, value);
            secret
        })
        .collect())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Vec<SessionSecret> {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "REAL-VALUE").unwrap();
        let config = sandboxd_config::Config::parse(&format!(
            "[runtimes.py]\nimage = \"python:3\"\nnetwork_mode = \"egress\"\negress = [\"api.test\", \"other.test\"]\nsecrets = [\"api\", \"other\"]\n\
             [secrets.api]\nvalue_file = {0:?}\nhosts = [\"api.test\"]\nenv = \"API_KEY\"\n\
             [secrets.other]\nvalue_file = {0:?}\nhosts = [\"other.test\"]\nheader = \"X-Key\"\nformat = \"{{}}\"\nenv = \"OTHER_KEY\"\n",
            file.path()
        ))
        .unwrap();
        config
            .secrets
            .for_runtime("py")
            .iter()
            .map(|secret| SessionSecret {
                secret: secret.clone(),
                placeholder: format!("ph-{}", secret.name),
            })
            .collect()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn to(host: &str, intercepted: bool) -> Destination<'_> {
        Destination {
            host,
            port: 443,
            intercepted,
        }
    }

    const ROOT: &str = "/v1/chat";

    #[test]
    fn the_placeholder_becomes_the_value_in_its_header_towards_its_host() {
        let mut map = headers(&[("authorization", "Bearer ph-api"), ("accept", "*/*")]);
        let put = substitute(
            &secrets(),
            &to("api.test", true),
            &ROOT.parse().unwrap(),
            &mut map,
        );
        assert_eq!(put.unwrap(), ["api"]);
        assert_eq!(map["authorization"], "Bearer REAL-VALUE");
        assert!(map["authorization"].is_sensitive());
        // Without a placeholder, nothing changes.
        let mut map = headers(&[("authorization", "Bearer mine")]);
        let put = substitute(
            &secrets(),
            &to("api.test", true),
            &ROOT.parse().unwrap(),
            &mut map,
        );
        assert!(put.unwrap().is_empty());
        assert_eq!(map["authorization"], "Bearer mine");
    }

    #[test]
    fn a_placeholder_anywhere_else_refuses_the_request() {
        let refused = |host: &str, intercepted: bool, uri: &str, pairs: &[(&str, &str)]| {
            let mut map = headers(pairs);
            let before = map.clone();
            let result = substitute(
                &secrets(),
                &to(host, intercepted),
                &uri.parse().unwrap(),
                &mut map,
            );
            assert_eq!(map, before, "changed although refused");
            result.unwrap_err()
        };
        let bearer = [("authorization", "Bearer ph-api")];
        // Another host, an intercepted one of another secret, plain HTTP to its own host.
        assert_eq!(refused("other.test", true, ROOT, &bearer).secret, "api");
        assert_eq!(
            refused("evil.test", false, ROOT, &bearer).why,
            "may not go to this host"
        );
        assert_eq!(refused("api.test", false, ROOT, &bearer).secret, "api");
        // Its own host, but not in its configured form.
        for pairs in [
            &[("x-echo", "ph-api")][..],
            &[("authorization", "Basic ph-api")],
            &[("authorization", "Bearer ph-api"), ("cookie", "k=ph-api")],
            &[
                ("authorization", "Bearer ph-api"),
                ("authorization", "Bearer ph-api"),
            ],
        ] {
            let misplaced = refused("api.test", true, ROOT, pairs);
            assert!(misplaced.why.contains("configured header"), "{pairs:?}");
        }
        assert_eq!(
            refused("api.test", true, "/v1?key=ph-api", &bearer).secret,
            "api"
        );
        // The other secret's placeholder in this secret's request: refused too.
        assert_eq!(
            refused(
                "api.test",
                true,
                ROOT,
                &[("authorization", "Bearer ph-api"), ("x-key", "ph-other")]
            )
            .secret,
            "other"
        );
    }
}
