//! The operator's configuration: runtime allowlist, service-wide defaults and the service policy.
//!
//! The file is TOML. [`Config::parse`] checks everything an operator can get wrong and says
//! precisely what and where, so that a bad config stops the service at start, not a request later.

mod backend;
mod config;
mod description;
mod e2b;
mod egress;
mod error;
mod kernels;
mod limits;
mod origin;
mod policy;
mod ports;
mod recipes;
mod runtimes;
mod secrets;
mod size;
mod suggest;
mod tenants;
#[cfg(test)]
mod tests;
mod webhooks;

pub use backend::{AgentPath, BackendSettings, KubernetesSettings};
pub use config::{check_token, Config, TokenSource, EMBEDDED_DEFAULT};
pub use e2b::{E2bSettings, WatcherBytes};
pub use egress::EgressSettings;
pub use error::ConfigError;
pub use ports::PortsSettings;
pub use recipes::{suggested_runtimes, BuildSettings, ContextFile, Recipe, CATALOGUE};
pub use secrets::{PlaceholderKey, Secret, SecretValue, Secrets};
pub use size::{format_bytes, parse_bytes};
pub use tenants::{to_hex, token_sha256, Tenant};
pub use webhooks::Webhook;
