//! E2B's network options (`network` of a create, `PUT /sandboxes/{id}/network`) as the
//! session's egress allow-list. An `egress` runtime is deny-by-default already, so
//! `allowOut` names the list (a narrowing of the runtime's, never a widening), `denyOut`
//! all traffic (`0.0.0.0/0`) or names of the list takes them out, and what a name list
//! cannot express (addresses, ranges, a name below an allowed wildcard) is refused, as are
//! the options sandboxd has no counterpart for.

use crate::caller::{done, existing, ApiCaller};
use crate::errors::E2bError;
use crate::state::Face;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::Json;
use sandboxd_api::{
    first_widening, EgressRule, NetworkMode, RuntimeInfo, SessionNetwork, MAX_EGRESS_RULES,
};
use sandboxd_core::Caller;
use serde::Deserialize;
use serde_json::{json, Value};

/// E2B's "all traffic" (the SDKs' `ALL_TRAFFIC`).
const ALL_TRAFFIC: &str = "0.0.0.0/0";

/// The `network` object of a create (and the body of an update), by E2B's wire names.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct NetworkOptions {
    allow_out: Option<Vec<String>>,
    deny_out: Option<Vec<String>>,
    /// Ignored: a sandbox's ports need its access token whatever this says (SDK releases
    /// before 2.60 send `true` with any network option), and its info says `false`.
    #[serde(rename = "allowPublicTraffic")]
    _allow_public_traffic: Option<bool>,
    dns_servers: Option<Vec<String>>,
    egress_proxy: Option<Value>,
    rules: Option<Value>,
    mask_request_host: Option<String>,
    https_ports: Option<Vec<u16>>,
    /// Only in an update; a create has it beside `network`.
    #[serde(rename = "allow_internet_access", alias = "allowInternetAccess")]
    allow_internet_access: Option<bool>,
}

impl NetworkOptions {
    /// The allow-list these options give a sandbox of `template` (runtime `runtime`):
    /// `None` keeps the runtime's. `internet` is the create's `allow_internet_access`.
    pub fn egress_list(
        &self,
        runtime: &RuntimeInfo,
        template: &str,
        internet: Option<bool>,
    ) -> Result<Option<Vec<EgressRule>>, E2bError> {
        self.refuse_unsupported()?;
        let internet = internet.or(self.allow_internet_access);
        let allow_out = self.allow_out.as_deref().unwrap_or_default();
        let deny_out = self.deny_out.as_deref().unwrap_or_default();
        if allow_out.is_empty() && deny_out.is_empty() && internet != Some(false) {
            return Ok(None);
        }
        // A runtime without network denies everything already.
        if runtime.limits.network_mode == NetworkMode::None && allow_out.is_empty() {
            return Ok(None);
        }
        if runtime.limits.network_mode != NetworkMode::Egress {
            return Err(E2bError::invalid(format!(
                "template \"{template}\" has network mode \"{}\", not \"egress\": it has no allow-list that network allowOut/denyOut could narrow; use a template whose runtime has network_mode \"egress\"",
                runtime.limits.network_mode.as_str()
            )));
        }
        // Each entry is checked against every rule of the runtime's list: bounded first.
        if allow_out.len() > MAX_EGRESS_RULES || deny_out.len() > MAX_EGRESS_RULES {
            return Err(E2bError::invalid(format!(
                "network allowOut and denyOut hold at most {MAX_EGRESS_RULES} entries each"
            )));
        }
        let deny_all = internet == Some(false) || deny_out.iter().any(|d| d == ALL_TRAFFIC);
        let allowed: Vec<EgressRule> = allow_out
            .iter()
            .filter(|entry| *entry != ALL_TRAFFIC)
            .map(|entry| {
                entry.parse::<EgressRule>().map_err(|why| {
                    E2bError::invalid(format!(
                        "network allowOut: {why}; sandboxd's egress allows names, never addresses or ranges"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        if let Some(rule) = first_widening(&runtime.egress, &allowed) {
            return Err(E2bError::invalid(format!(
                "network allowOut \"{rule}\" is not on the egress list of template \"{template}\" ({}): a sandbox may only narrow it",
                listed(&runtime.egress)
            )));
        }
        // As in E2B, what allowOut names stays allowed whatever denyOut says.
        let mut list = if allow_out.iter().any(|a| a == ALL_TRAFFIC) {
            runtime.egress.clone()
        } else if !allow_out.is_empty() {
            allowed.clone()
        } else if deny_all {
            Vec::new()
        } else {
            runtime.egress.clone()
        };
        for entry in deny_out.iter().filter(|d| *d != ALL_TRAFFIC) {
            let denied: EgressRule = entry.parse().map_err(|_| {
                E2bError::invalid(format!(
                    "network denyOut \"{entry}\" cannot be expressed: sandboxd's egress allows names, never addresses, so a range cannot be taken out of it; deny all traffic (\"{ALL_TRAFFIC}\") and list the names wanted in allowOut"
                ))
            })?;
            if allowed.contains(&denied) {
                continue;
            }
            list.retain(|rule| *rule != denied);
            if let Some(wider) = list.iter().find(|rule| {
                first_widening(std::slice::from_ref(rule), std::slice::from_ref(&denied)).is_none()
            }) {
                return Err(E2bError::invalid(format!(
                    "network denyOut \"{denied}\" falls under \"{wider}\", and sandboxd cannot allow a wildcard but some names below it; list the names wanted in allowOut instead"
                )));
            }
        }
        Ok(Some(list))
    }

    /// The options that have no sandboxd counterpart, refused rather than ignored.
    fn refuse_unsupported(&self) -> Result<(), E2bError> {
        let given = [
            (
                "DNS servers of a sandbox's own (network dnsServers; the service answers its DNS)",
                self.dns_servers.as_ref().is_some_and(|d| !d.is_empty()),
            ),
            (
                "an egress proxy of your own (network egressProxy)",
                self.egress_proxy.as_ref().is_some_and(|p| !p.is_null()),
            ),
            (
                "request transforms (network rules)",
                self.rules
                    .as_ref()
                    .is_some_and(|r| r.as_object().is_none_or(|o| !o.is_empty())),
            ),
            (
                "a request host mask (network maskRequestHost)",
                self.mask_request_host.is_some(),
            ),
            (
                "HTTPS sandbox ports (network httpsPorts)",
                self.https_ports.as_ref().is_some_and(|p| !p.is_empty()),
            ),
        ];
        match given.iter().find(|(_, given)| *given) {
            Some((what, _)) => Err(E2bError::unsupported(what)),
            None => Ok(()),
        }
    }
}

/// `PUT /sandboxes/{id}/network`: E2B replaces the whole configuration, so what the body
/// leaves out is the runtime's list again (never more).
pub async fn update(
    State(face): State<Face>,
    ApiCaller(caller): ApiCaller,
    Path(id): Path<String>,
    Json(options): Json<NetworkOptions>,
) -> Response {
    let result = async {
        let info = existing(&face, &caller, &id).await?;
        let runtime = face
            .core
            .config()
            .runtime(&info.runtime)
            .ok_or_else(|| E2bError::sandbox_not_found(&id))?;
        let list = options.egress_list(runtime, &info.runtime, None)?;
        if runtime.limits.network_mode != NetworkMode::Egress {
            // Nothing asked that the template's network does not already do.
            return Ok(());
        }
        face.core.set_session_network(
            &caller,
            &id,
            SessionNetwork {
                egress: list.unwrap_or_else(|| runtime.egress.clone()),
            },
        )?;
        Ok::<_, E2bError>(())
    }
    .await;
    done(result)
}

/// The `network` of a sandbox's info, and whether it reaches the internet, as its runtime
/// really runs it: an egress runtime's list in force as `allowOut` with everything else
/// denied; a runtime without network denying all; and ports that need the sandbox's token.
pub fn info(face: &Face, caller: &Caller, id: &str, runtime: &str) -> (Value, bool) {
    let mode = face
        .core
        .config()
        .runtime(runtime)
        .map_or(NetworkMode::None, |r| r.limits.network_mode);
    let (allow_out, deny_out): (Vec<String>, &[&str]) = match mode {
        NetworkMode::Bridge => (Vec::new(), &[]),
        NetworkMode::None => (Vec::new(), &[ALL_TRAFFIC]),
        NetworkMode::Egress => (
            face.core
                .session_network(caller, id)
                .map(|network| network.egress.iter().map(ToString::to_string).collect())
                .unwrap_or_default(),
            &[ALL_TRAFFIC],
        ),
    };
    let internet = mode == NetworkMode::Bridge || !allow_out.is_empty();
    let network = json!({"allowOut": allow_out, "denyOut": deny_out, "allowPublicTraffic": false});
    (network, internet)
}

fn listed(rules: &[EgressRule]) -> String {
    rules
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
