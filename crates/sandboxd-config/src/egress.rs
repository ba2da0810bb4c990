//! A runtime's `egress = [...]`: the names its sandboxes may reach with `network_mode = "egress"`.

use crate::backend::BackendSettings;
use crate::error::invalid;
use crate::error::ConfigError;
use sandboxd_api::RuntimeInfo;
use sandboxd_api::{EgressRule, NetworkMode, MAX_EGRESS_RULES};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// `[egress]`: how the egress proxy resolves names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EgressSettings {
    /// The name servers (`address:port`) the proxy asks; empty for the host's own
    /// (`/etc/resolv.conf`).
    pub upstream_dns: Vec<SocketAddr>,
    /// PEM certificates the proxy trusts, beside the host's roots, when it sends a secret on
    /// to its host (`upstream_ca_certificates`): for a private API, or a test's own CA.
    pub upstream_ca_pem: Vec<u8>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct EgressFile {
    #[serde(default)]
    upstream_dns: Vec<String>,
    #[serde(default)]
    upstream_ca_certificates: Vec<std::path::PathBuf>,
}

impl EgressSettings {
    pub(crate) fn resolve(file: &EgressFile) -> Result<EgressSettings, ConfigError> {
        let upstream_dns = file
            .upstream_dns
            .iter()
            .map(|text| {
                text.parse::<SocketAddr>()
                    .or_else(|_| text.parse().map(|ip| SocketAddr::new(ip, 53)))
                    .map_err(|_| {
                        invalid(
                            "egress.upstream_dns",
                            format!("{text:?} is not an address, e.g. \"192.0.2.53\" or \"127.0.0.1:5353\""),
                        )
                    })
            })
            .collect::<Result<_, _>>()?;
        let upstream_ca_pem = crate::recipes::read_ca_files(
            &file.upstream_ca_certificates,
            "egress.upstream_ca_certificates",
        )?;
        Ok(EgressSettings {
            upstream_dns,
            upstream_ca_pem,
        })
    }

    /// The name servers to use: the configured ones, or the host's from `/etc/resolv.conf`.
    pub fn name_servers(&self) -> Vec<SocketAddr> {
        if !self.upstream_dns.is_empty() {
            return self.upstream_dns.clone();
        }
        let text = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
        text.lines()
            .filter_map(|line| line.trim().strip_prefix("nameserver"))
            .filter_map(|rest| rest.trim().parse().ok())
            .map(|ip| SocketAddr::new(ip, 53))
            .collect()
    }
}

/// The runtime's rules, checked against its network mode: an `egress` runtime needs at least
/// one (a sandbox that may reach nothing wants `network_mode = "none"`), any other has none.
pub(crate) fn resolve(
    field: &str,
    texts: &[String],
    mode: NetworkMode,
) -> Result<Vec<EgressRule>, ConfigError> {
    let field = format!("{field}.egress");
    match mode {
        NetworkMode::Egress if texts.is_empty() => {
            return Err(invalid(
                field,
                "network_mode = \"egress\" needs the names its sandboxes may reach, e.g. egress = [\"pypi.org\", \"*.github.com\", \"api.example.com:8443\"]",
            ))
        }
        NetworkMode::Egress => {}
        other if !texts.is_empty() => {
            return Err(invalid(
                field,
                format!(
                    "is only read with network_mode = \"egress\" (this runtime's is \"{}\")",
                    other.as_str()
                ),
            ))
        }
        _ => return Ok(Vec::new()),
    }
    if texts.len() > MAX_EGRESS_RULES {
        return Err(invalid(
            field,
            format!("at most {MAX_EGRESS_RULES} rules, got {}", texts.len()),
        ));
    }
    let mut rules: Vec<EgressRule> = Vec::with_capacity(texts.len());
    for text in texts {
        let rule = text.parse().map_err(|message| invalid(&field, message))?;
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    Ok(rules)
}

/// The proxy that enforces the rules runs beside the Docker engine only.
pub(crate) fn check_backend(
    backend: &BackendSettings,
    runtimes: &BTreeMap<String, RuntimeInfo>,
) -> Result<(), ConfigError> {
    let egress = runtimes
        .values()
        .find(|r| r.limits.network_mode == NetworkMode::Egress);
    match (backend, egress) {
        (BackendSettings::Kubernetes(_), Some(runtime)) => Err(invalid(
            format!("runtimes.{}.network_mode", runtime.name),
            "\"egress\" is not available with [backend] kind = \"kubernetes\"; use \"none\" or \"bridge\" (a NetworkPolicy of the cluster's own can restrict the pods)",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn config(runtime: &str) -> Result<Config, String> {
        Config::parse(&format!("[runtimes.py]\nimage = \"python:3\"\n{runtime}\n"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_egress_runtime_keeps_its_rules() {
        let config = config(
            "network_mode = \"egress\"\negress = [\"pypi.org\", \"*.GitHub.com\", \"api.example.com:8443\", \"pypi.org\"]",
        )
        .unwrap();
        let runtime = config.runtime("py").unwrap();
        let rules: Vec<String> = runtime.egress.iter().map(|r| r.to_string()).collect();
        assert_eq!(rules, ["pypi.org", "*.github.com", "api.example.com:8443"]);
        assert!(sandboxd_api::egress_allows(
            &runtime.egress,
            "api.github.com",
            443
        ));
    }

    #[test]
    fn mistakes_are_named_where_they_are() {
        for (runtime, says) in [
            (
                "network_mode = \"egress\"",
                "runtimes.py.egress: network_mode = \"egress\" needs",
            ),
            (
                "egress = [\"pypi.org\"]",
                "only read with network_mode = \"egress\"",
            ),
            (
                "network_mode = \"egress\"\negress = [\"10.0.0.1\"]",
                "runtimes.py.egress: \"10.0.0.1\"",
            ),
            (
                "network_mode = \"egress\"\negress = [\"*.com\"]",
                "top-level",
            ),
            (
                "network_mode = \"egres\"",
                "use \"none\", \"bridge\" or \"egress\"",
            ),
        ] {
            let error = config(runtime).unwrap_err();
            assert!(error.contains(says), "{runtime}: {error}");
        }
    }

    #[test]
    fn upstream_name_servers_are_addresses() {
        let config = Config::parse(
            "[egress]\nupstream_dns = [\"127.0.0.1:5353\", \"192.0.2.53\"]\n[runtimes.py]\nimage = \"python:3\"\n",
        )
        .unwrap();
        let servers: Vec<String> = config
            .egress
            .name_servers()
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(servers, ["127.0.0.1:5353", "192.0.2.53:53"]);
        let error = Config::parse(
            "[egress]\nupstream_dns = [\"dns.example\"]\n[runtimes.py]\nimage = \"python:3\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("egress.upstream_dns"), "{error}");
    }

    #[test]
    fn kubernetes_refuses_egress() {
        let error = Config::parse(
            "[backend]\nkind = \"kubernetes\"\n[runtimes.py]\nimage = \"python:3\"\nnetwork_mode = \"egress\"\negress = [\"pypi.org\"]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("not available with [backend]"), "{error}");
    }
}
