//! What the egress suites share: a service with an egress runtime `net`, one session of it,
//! the test's namespace, and the activity entries the proxy writes.

#![allow(dead_code)] // each egress suite uses a different part

use crate::common::{self, TestService};
use crate::testnet::TestNet;
use serde_json::Value;

/// Dropped after the service (whose sandboxes are gone by then): removes the service's egress
/// network and its firewall rules, as an operator would (`sandboxd serve --remove-network-state`).
pub struct EgressCleanup(pub String);

impl Drop for EgressCleanup {
    fn drop(&mut self) {
        let (removed, output) = common::remove_network_state(&self.0);
        if !removed {
            eprintln!(
                "could not remove the egress network of {}: {output}",
                self.0
            );
        }
    }
}

/// A Python program in the sandbox opening `request` (a URL or a `Request`, as Python) with
/// the urllib `handlers` given (Python, may be empty), through the proxy variables or not:
/// prints the status and body, or the error.
pub fn python_open(request: &str, handlers: &str, use_proxy: bool) -> String {
    let handlers = match (use_proxy, handlers) {
        (true, handlers) => handlers.to_string(),
        (false, "") => "urllib.request.ProxyHandler({})".to_string(),
        (false, handlers) => format!("urllib.request.ProxyHandler({{}}), {handlers}"),
    };
    format!(
        "python3 -c \"
import os, ssl, urllib.request, urllib.error
try:
    r = urllib.request.build_opener({handlers}).open({request}, timeout=15)
    print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
except Exception as e:
    print('failed', repr(e))
\""
    )
}

pub struct World {
    pub service: TestService,
    pub session: String,
    pub net: TestNet,
    _cleanup: EgressCleanup,
}

impl World {
    /// The world of `service` (whose config has the egress runtime `net`): one session of it.
    pub async fn start(service: TestService, net: TestNet) -> World {
        let cleanup = EgressCleanup(service.instance_id.clone());
        let session = service.open("net").await;
        World {
            service,
            session,
            net,
            _cleanup: cleanup,
        }
    }

    pub async fn run(&self, command: &str) -> String {
        let result = self.service.sh(&self.session, command).await;
        format!(
            "{}{}",
            result["stdout"].as_str().unwrap_or(""),
            result["stderr"].as_str().unwrap_or("")
        )
        .trim()
        .to_string()
    }

    pub async fn activity(&self) -> Vec<Value> {
        let log = self
            .service
            .get_json(&format!("/v1/sessions/{}/activity", self.session))
            .await;
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["action"].as_str().unwrap_or("").starts_with("egress."))
            .cloned()
            .collect()
    }

    /// The latest egress entry for `target` (`host:port`), waiting a little: tunnels are
    /// recorded when they close.
    pub async fn entry(&self, target: &str, action: &str) -> Value {
        for _ in 0..30 {
            let found = self
                .activity()
                .await
                .into_iter()
                .rev()
                .find(|e| e["target"] == target && e["action"] == action);
            if let Some(entry) = found {
                return entry;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        panic!(
            "no {action} entry for {target}: {:#?}",
            self.activity().await
        );
    }
}
