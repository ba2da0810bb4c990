//! The `[policy]` table: the limits nothing can raise, with their defaults and checks.

use crate::error::invalid;
use crate::error::ConfigError;
use crate::size::SizeValue;
use sandboxd_api::{IdleAction, Policy};
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyFile {
    default_timeout_secs: Option<u64>,
    max_timeout_secs: Option<u64>,
    max_output_bytes: Option<SizeValue>,
    max_upload_bytes: Option<SizeValue>,
    max_body_bytes_in_flight: Option<SizeValue>,
    idle_timeout_secs: Option<u64>,
    max_lifetime_secs: Option<u64>,
    auth_failures_per_minute: Option<u32>,
    idle_action: Option<IdleAction>,
    paused_timeout_secs: Option<u64>,
    snapshot_quota_bytes: Option<SizeValue>,
    snapshot_quota_count: Option<u32>,
    pause_quota_bytes: Option<SizeValue>,
    volume_quota_bytes: Option<SizeValue>,
    volume_quota_count: Option<u32>,
    volume_concurrent_writers: Option<bool>,
    mcp_output_bytes: Option<SizeValue>,
    max_port_connections: Option<u32>,
    max_port_connections_per_tenant: Option<u32>,
    max_contexts_per_session: Option<u32>,
    max_contexts_per_tenant: Option<u32>,
    port_bytes_per_sec: Option<SizeValue>,
    max_connections: Option<u32>,
    reserved_connections: Option<u32>,
    max_requests_per_caller: Option<u32>,
    max_watches_per_session: Option<u32>,
    max_watches_per_tenant: Option<u32>,
    max_shares_per_tenant: Option<u32>,
    max_watches: Option<u32>,
    max_shares_per_session: Option<u32>,
    max_shares: Option<u32>,
    max_dns_lookups: Option<u32>,
    max_dns_lookups_per_sandbox: Option<u32>,
}

/// The most `policy.max_port_connections` may be.
const MAX_PORT_CONNECTIONS: u32 = 48;
/// The most `policy.max_contexts_per_session` may be: the kernels the sandbox agent runs.
const MAX_CONTEXTS_PER_SESSION: u32 = 16;

pub(crate) fn resolve_policy(file: &PolicyFile, max_sessions: u32) -> Result<Policy, ConfigError> {
    let size = |value: &Option<SizeValue>, name: &str, default: u64| match value {
        Some(v) => v.resolve(&format!("policy.{name}")),
        None => Ok(default),
    };
    let policy = Policy {
        default_timeout_secs: file.default_timeout_secs.unwrap_or(60),
        max_timeout_secs: file.max_timeout_secs.unwrap_or(600),
        max_output_bytes: size(&file.max_output_bytes, "max_output_bytes", 1 << 20)?,
        max_upload_bytes: size(&file.max_upload_bytes, "max_upload_bytes", 100 << 20)?,
        max_body_bytes_in_flight: size(
            &file.max_body_bytes_in_flight,
            "max_body_bytes_in_flight",
            256 << 20,
        )?,
        idle_timeout_secs: file.idle_timeout_secs.unwrap_or(1800),
        max_lifetime_secs: file.max_lifetime_secs.unwrap_or(86_400),
        max_sessions,
        auth_failures_per_minute: file.auth_failures_per_minute.unwrap_or(20),
        idle_action: file.idle_action.unwrap_or_default(),
        paused_timeout_secs: file.paused_timeout_secs.unwrap_or(86_400),
        snapshot_quota_bytes: size(&file.snapshot_quota_bytes, "snapshot_quota_bytes", 1 << 30)?,
        snapshot_quota_count: file.snapshot_quota_count.unwrap_or(20),
        pause_quota_bytes: file
            .pause_quota_bytes
            .as_ref()
            .map(|v| v.resolve("policy.pause_quota_bytes"))
            .transpose()?,
        volume_quota_bytes: size(
            &file.volume_quota_bytes,
            "volume_quota_bytes",
            sandboxd_api::DEFAULT_VOLUME_QUOTA_BYTES,
        )?,
        volume_quota_count: file
            .volume_quota_count
            .unwrap_or(sandboxd_api::DEFAULT_VOLUME_QUOTA_COUNT),
        volume_concurrent_writers: file.volume_concurrent_writers.unwrap_or(false),
        mcp_output_bytes: size(
            &file.mcp_output_bytes,
            "mcp_output_bytes",
            sandboxd_api::DEFAULT_MCP_OUTPUT_BYTES,
        )?,
        max_port_connections: file.max_port_connections.unwrap_or(32),
        max_port_connections_per_tenant: file
            .max_port_connections_per_tenant
            .unwrap_or(sandboxd_api::DEFAULT_MAX_PORT_CONNECTIONS_PER_TENANT),
        max_contexts_per_session: file
            .max_contexts_per_session
            .unwrap_or(sandboxd_api::DEFAULT_MAX_CONTEXTS_PER_SESSION),
        max_contexts_per_tenant: file
            .max_contexts_per_tenant
            .unwrap_or(sandboxd_api::DEFAULT_MAX_CONTEXTS_PER_TENANT),
        port_bytes_per_sec: size(&file.port_bytes_per_sec, "port_bytes_per_sec", 256 << 20)?,
        max_connections: file
            .max_connections
            .unwrap_or(sandboxd_api::DEFAULT_MAX_CONNECTIONS),
        reserved_connections: file
            .reserved_connections
            .unwrap_or(sandboxd_api::DEFAULT_RESERVED_CONNECTIONS),
        max_requests_per_caller: file
            .max_requests_per_caller
            .unwrap_or(sandboxd_api::DEFAULT_MAX_REQUESTS_PER_CALLER),
        max_watches_per_session: file
            .max_watches_per_session
            .unwrap_or(sandboxd_api::DEFAULT_MAX_WATCHES_PER_SESSION),
        max_watches_per_tenant: file
            .max_watches_per_tenant
            .unwrap_or(sandboxd_api::DEFAULT_MAX_WATCHES_PER_TENANT),
        max_shares_per_tenant: file
            .max_shares_per_tenant
            .unwrap_or(sandboxd_api::DEFAULT_MAX_SHARES_PER_TENANT),
        max_watches: file
            .max_watches
            .unwrap_or(sandboxd_api::DEFAULT_MAX_WATCHES),
        max_shares_per_session: file
            .max_shares_per_session
            .unwrap_or(sandboxd_api::DEFAULT_MAX_SHARES_PER_SESSION),
        max_shares: file.max_shares.unwrap_or(sandboxd_api::DEFAULT_MAX_SHARES),
        max_dns_lookups: file
            .max_dns_lookups
            .unwrap_or(sandboxd_api::DEFAULT_MAX_DNS_LOOKUPS),
        max_dns_lookups_per_sandbox: file
            .max_dns_lookups_per_sandbox
            .unwrap_or(sandboxd_api::DEFAULT_MAX_DNS_LOOKUPS_PER_SANDBOX),
    };
    let positive = [
        ("default_timeout_secs", policy.default_timeout_secs),
        ("max_timeout_secs", policy.max_timeout_secs),
        ("max_output_bytes", policy.max_output_bytes),
        ("max_upload_bytes", policy.max_upload_bytes),
        ("max_body_bytes_in_flight", policy.max_body_bytes_in_flight),
        ("idle_timeout_secs", policy.idle_timeout_secs),
        ("max_lifetime_secs", policy.max_lifetime_secs),
        ("paused_timeout_secs", policy.paused_timeout_secs),
        ("mcp_output_bytes", policy.mcp_output_bytes),
        (
            "auth_failures_per_minute",
            u64::from(policy.auth_failures_per_minute),
        ),
        (
            "max_port_connections",
            u64::from(policy.max_port_connections),
        ),
        (
            "max_port_connections_per_tenant",
            u64::from(policy.max_port_connections_per_tenant),
        ),
        (
            "max_contexts_per_session",
            u64::from(policy.max_contexts_per_session),
        ),
        (
            "max_contexts_per_tenant",
            u64::from(policy.max_contexts_per_tenant),
        ),
        ("port_bytes_per_sec", policy.port_bytes_per_sec),
        ("max_connections", u64::from(policy.max_connections)),
        (
            "reserved_connections",
            u64::from(policy.reserved_connections),
        ),
        (
            "max_requests_per_caller",
            u64::from(policy.max_requests_per_caller),
        ),
        (
            "max_watches_per_session",
            u64::from(policy.max_watches_per_session),
        ),
        (
            "max_watches_per_tenant",
            u64::from(policy.max_watches_per_tenant),
        ),
        (
            "max_shares_per_tenant",
            u64::from(policy.max_shares_per_tenant),
        ),
        (
            "max_dns_lookups_per_sandbox",
            u64::from(policy.max_dns_lookups_per_sandbox),
        ),
        ("max_watches", u64::from(policy.max_watches)),
        (
            "max_shares_per_session",
            u64::from(policy.max_shares_per_session),
        ),
        ("max_shares", u64::from(policy.max_shares)),
        ("max_dns_lookups", u64::from(policy.max_dns_lookups)),
    ];
    for (name, value) in positive {
        if value == 0 {
            return Err(invalid(format!("policy.{name}"), "must be above 0"));
        }
    }
    if policy.max_port_connections + policy.max_watches_per_session > MAX_PORT_CONNECTIONS + 8 {
        return Err(invalid(
            "policy.max_watches_per_session",
            format!(
                "{} with policy.max_port_connections {} is over {}: each port connection and each watch holds one of the sandbox agent's 64 connections, and 8 must stay free for other requests",
                policy.max_watches_per_session,
                policy.max_port_connections,
                MAX_PORT_CONNECTIONS + 8
            ),
        ));
    }
    if policy.max_port_connections > MAX_PORT_CONNECTIONS {
        return Err(invalid(
            "policy.max_port_connections",
            format!("must be at most {MAX_PORT_CONNECTIONS}: each holds one of the sandbox agent's 64 connections, and the rest must stay free for other requests"),
        ));
    }
    if policy.max_contexts_per_session > MAX_CONTEXTS_PER_SESSION {
        return Err(invalid(
            "policy.max_contexts_per_session",
            format!("must be at most {MAX_CONTEXTS_PER_SESSION}: each context is a kernel, and the sandbox agent runs at most {MAX_CONTEXTS_PER_SESSION}"),
        ));
    }
    let shared = policy
        .max_connections
        .saturating_sub(policy.reserved_connections);
    if shared == 0 {
        return Err(invalid(
            "policy.reserved_connections",
            format!(
                "{} leaves none of policy.max_connections ({}) to tenants; keep it below",
                policy.reserved_connections, policy.max_connections
            ),
        ));
    }
    if policy.max_requests_per_caller > shared {
        return Err(invalid(
            "policy.max_requests_per_caller",
            format!(
                "{} is above what tenants share (policy.max_connections {} less policy.reserved_connections {}); one caller could then take them all",
                policy.max_requests_per_caller, policy.max_connections, policy.reserved_connections
            ),
        ));
    }
    if policy.default_timeout_secs > policy.max_timeout_secs {
        return Err(invalid(
            "policy.default_timeout_secs",
            format!(
                "{} is above policy.max_timeout_secs ({}); the default must fit under the limit",
                policy.default_timeout_secs, policy.max_timeout_secs
            ),
        ));
    }
    Ok(policy)
}
