//! The operator's configuration: runtime allowlist, service-wide defaults and the service policy.
