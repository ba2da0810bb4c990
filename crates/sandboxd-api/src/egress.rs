//! Egress rules: which names (and ports) an `egress` sandbox may reach through the service.
//!
//! A rule is written `pypi.org`, `*.github.com` or `api.example.com:8443`. Without a port it
//! allows 80 and 443. `*.NAME` allows every name below NAME, at any depth, but not NAME itself
//! (write both to allow both). Names are compared in lowercase without a trailing dot.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The ports a rule without one allows: HTTP and HTTPS.
pub const DEFAULT_EGRESS_PORTS: [u16; 2] = [80, 443];
/// Rules one list may hold: every connection is checked against each of them.
pub const MAX_EGRESS_RULES: usize = 256;

/// One rule of an egress allow-list.
/// It goes over the wire as the string it is written as; the API documents fields holding
/// rules as strings (`value_type`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(try_from = "String", into = "String")]
#[cfg_attr(feature = "schemars", schemars(with = "String"))]
pub struct EgressRule {
    /// `true` for `*.NAME`: the names below [`EgressRule::name`], not the name itself.
    wildcard: bool,
    name: String,
    /// The one port the rule names, or `None` for [`DEFAULT_EGRESS_PORTS`].
    port: Option<u16>,
}

impl EgressRule {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn is_wildcard(&self) -> bool {
        self.wildcard
    }

    pub fn ports(&self) -> &[u16] {
        match &self.port {
            Some(port) => std::slice::from_ref(port),
            None => &DEFAULT_EGRESS_PORTS,
        }
    }

    /// Whether this rule's names include `host` (already normalised by [`normalize_host`]).
    fn covers_name(&self, host: &str) -> bool {
        if !self.wildcard {
            return host == self.name;
        }
        host.len() > self.name.len() + 1
            && host.ends_with(&self.name)
            && host.as_bytes()[host.len() - self.name.len() - 1] == b'.'
    }

    /// Whether a connection to `host:port` is allowed by this rule.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.ports().contains(&port) && normalize_host(host).is_some_and(|h| self.covers_name(&h))
    }

    /// Whether everything `other` allows, this rule allows too.
    fn covers(&self, other: &EgressRule) -> bool {
        let names = match (self.wildcard, other.wildcard) {
            (false, false) => self.name == other.name,
            (false, true) => false,
            (true, false) => self.covers_name(&other.name),
            (true, true) => other.name == self.name || self.covers_name(&other.name),
        };
        names && other.ports().iter().all(|p| self.ports().contains(p))
    }
}

/// Whether a connection to `host:port` is allowed by any of `rules`.
pub fn egress_allows(rules: &[EgressRule], host: &str, port: u16) -> bool {
    rules.iter().any(|rule| rule.allows(host, port))
}

/// The first rule of `narrower` that allows something `wider` does not, if any: a list may
/// replace another only if it allows nothing more. A rule with the default ports counts as
/// covered when its name is covered for both of them, possibly by two rules.
pub fn first_widening<'a>(
    wider: &[EgressRule],
    narrower: &'a [EgressRule],
) -> Option<&'a EgressRule> {
    narrower.iter().find(|rule| {
        !rule.ports().iter().all(|port| {
            let one = EgressRule {
                port: Some(*port),
                ..(*rule).clone()
            };
            wider.iter().any(|w| w.covers(&one))
        })
    })
}

/// A host name as rules compare it: lowercase, no trailing dot, only letters, digits, `-`,
/// `_` and dots between non-empty labels of at most 63 bytes, at most 253 bytes in all, and
/// not an IP address (rules name hosts, and a raw address is never allowed). `None` otherwise.
pub fn normalize_host(host: &str) -> Option<String> {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let valid = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        // A name whose last label is all digits is an address (`10.0.0.1`, `127.1`).
        && !host
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit()));
    valid.then_some(host)
}

impl FromStr for EgressRule {
    type Err = String;

    fn from_str(text: &str) -> Result<EgressRule, String> {
        let text = text.trim();
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port)) => {
                let port: u16 = port.parse().ok().filter(|p| *p != 0).ok_or_else(|| {
                    format!("{text:?}: the port must be a number from 1 to 65535")
                })?;
                (host, Some(port))
            }
            None => (text, None),
        };
        let (wildcard, name) = match host.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, host),
        };
        if name.contains('*') {
            return Err(format!(
                "{text:?}: a wildcard may only be a leading `*.` (e.g. \"*.github.com\")"
            ));
        }
        let name = normalize_host(name).ok_or_else(|| {
            format!("{text:?} is not a host name (write a name such as \"pypi.org\" or \"*.github.com\", optionally with \":PORT\"; IP addresses are never allowed)")
        })?;
        if wildcard && !name.contains('.') {
            return Err(format!(
                "{text:?} would allow a whole top-level domain; name one below it (e.g. \"*.example.com\")"
            ));
        }
        Ok(EgressRule {
            wildcard,
            name,
            port,
        })
    }
}

impl fmt::Display for EgressRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.wildcard {
            f.write_str("*.")?;
        }
        f.write_str(&self.name)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl TryFrom<String> for EgressRule {
    type Error = String;
    fn try_from(text: String) -> Result<EgressRule, String> {
        text.parse()
    }
}

impl From<EgressRule> for String {
    fn from(rule: EgressRule) -> String {
        rule.to_string()
    }
}

/// `GET/PUT /v1/sessions/{id}/network`: a session's egress allow-list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SessionNetwork {
    /// The names (and ports) the session may reach; at most its runtime's.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, example = json!(["pypi.org", "*.github.com", "api.example.com:8443"])))]
    pub egress: Vec<EgressRule>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(texts: &[&str]) -> Vec<EgressRule> {
        texts.iter().map(|t| t.parse().unwrap()).collect()
    }

    #[test]
    fn names_wildcards_and_ports_match() {
        let list = rules(&["pypi.org", "*.github.com", "api.example.com:8443"]);
        assert!(egress_allows(&list, "pypi.org", 443));
        assert!(egress_allows(&list, "PyPI.org.", 80));
        assert!(!egress_allows(&list, "pypi.org", 8080));
        assert!(!egress_allows(&list, "evil-pypi.org", 443));
        assert!(!egress_allows(&list, "pypi.org.evil.com", 443));
        assert!(egress_allows(&list, "api.github.com", 443));
        assert!(egress_allows(&list, "a.b.github.com", 443));
        assert!(!egress_allows(&list, "github.com", 443));
        assert!(!egress_allows(&list, "xgithub.com", 443));
        assert!(egress_allows(&list, "api.example.com", 8443));
        assert!(!egress_allows(&list, "api.example.com", 443));
        assert!(!egress_allows(&list, "127.0.0.1", 443));
    }

    #[test]
    fn bad_rules_say_why() {
        for (text, says) in [
            ("10.0.0.1", "IP addresses"),
            ("pypi.org:0", "port"),
            ("pypi.org:http", "port"),
            ("a.*.com", "leading"),
            ("*.com", "top-level"),
            ("", "not a host name"),
            ("exa mple.com", "not a host name"),
            ("[::1]:443", "not a host name"),
        ] {
            let error = text.parse::<EgressRule>().unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn a_list_may_narrow_but_never_widen() {
        let runtime = rules(&["pypi.org", "*.github.com", "api.example.com:8443"]);
        for narrower in [
            &["pypi.org"][..],
            &["pypi.org:443"],
            &["api.github.com"],
            &["*.api.github.com:80"],
            &["*.github.com"],
            &[],
        ] {
            assert_eq!(
                first_widening(&runtime, &rules(narrower)),
                None,
                "{narrower:?}"
            );
        }
        for (wider, culprit) in [
            (
                &["pypi.org", "files.pythonhosted.org"][..],
                "files.pythonhosted.org",
            ),
            (&["pypi.org:8443"], "pypi.org:8443"),
            (&["github.com"], "github.com"),
            (&["*.example.com"], "*.example.com"),
            (&["api.example.com"], "api.example.com"),
        ] {
            let wider = rules(wider);
            assert_eq!(
                first_widening(&runtime, &wider).map(|r| r.to_string()),
                Some(culprit.to_string())
            );
        }
        // Default ports covered by two rules, one per port.
        let split = rules(&["x.example.com:80", "x.example.com:443"]);
        assert_eq!(first_widening(&split, &rules(&["x.example.com"])), None);
    }

    #[test]
    fn rules_round_trip_as_strings() {
        let list = rules(&["*.github.com", "api.example.com:8443"]);
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(json, r#"["*.github.com","api.example.com:8443"]"#);
        let back: Vec<EgressRule> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, list);
        assert!(serde_json::from_str::<Vec<EgressRule>>(r#"["*"]"#).is_err());
    }
}
