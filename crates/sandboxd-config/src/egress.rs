//! A runtime's `egress = [...]`: the names its sandboxes may reach with `network_mode = "egress"`.

use crate::{invalid, BackendSettings, ConfigError, RuntimeInfo};
use sandboxd_api::{EgressRule, NetworkMode, MAX_EGRESS_RULES};
use std::collections::BTreeMap;

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
    use crate::Config;

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
    fn kubernetes_refuses_egress() {
        let error = Config::parse(
            "[backend]\nkind = \"kubernetes\"\n[runtimes.py]\nimage = \"python:3\"\nnetwork_mode = \"egress\"\negress = [\"pypi.org\"]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("not available with [backend]"), "{error}");
    }
}
