//! What a webhook receives: E2B's payload (version `v2`) and its signature, so a receiver
//! written for E2B's lifecycle webhooks reads sandboxd's unchanged.

use base64::Engine;
use sandboxd_api::{LifecycleKind, Limits};
use sandboxd_core::LifecycleEvent;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use time::format_description::well_known::Rfc3339;

/// The signature scheme's version, sent as `e2b-signature-version`.
pub(crate) const SIGNATURE_VERSION: &str = "v1";

/// The JSON body for `event`; `id` names the event (the same in every try), `limits` are its
/// runtime's, when the config still has it.
pub(crate) fn body(event: &LifecycleEvent, id: &str, limits: Option<&Limits>) -> Vec<u8> {
    let mut data = json!({ "sandbox_metadata": event.labels });
    if matches!(event.kind, LifecycleKind::Paused | LifecycleKind::Killed) {
        let ran_ms = (event.at - event.created_at).whole_milliseconds().max(0);
        let mut execution = json!({
            "started_at": rfc3339(event.created_at),
            "execution_time": u64::try_from(ran_ms).unwrap_or(u64::MAX),
        });
        if let Some(limits) = limits {
            execution["vcpu_count"] = Value::from(limits.cpus.ceil());
            execution["memory_mb"] = Value::from(limits.mem_limit_bytes >> 20);
        }
        data["execution"] = execution;
    }
    if let Some(reason) = &event.reason {
        data["reason"] = Value::from(reason.as_str());
    }
    let payload = json!({
        "version": "v2",
        "id": id,
        "type": event.kind.event_type(),
        "eventData": data,
        "sandboxId": event.session_id,
        "sandboxExecutionId": event.session_id,
        "sandboxTemplateId": event.runtime,
        "sandboxTeamId": event.tenant.as_deref().unwrap_or_default(),
        "timestamp": rfc3339(event.at),
    });
    serde_json::to_vec(&payload).expect("JSON of JSON values")
}

/// E2B's `e2b-signature`: the SHA-256 of the secret followed by the body, in base64 without
/// padding.
pub(crate) fn signature(secret: &str, body: &[u8]) -> String {
    let mut hash = Sha256::new();
    hash.update(secret.as_bytes());
    hash.update(body);
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(hash.finalize())
}

/// A random UUID (version 4), for an event's and a delivery's id.
pub(crate) fn new_id() -> String {
    let mut bytes: [u8; 16] = rand::random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn rfc3339(at: time::OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use time::{Duration, OffsetDateTime};

    fn killed() -> LifecycleEvent {
        let created_at = OffsetDateTime::now_utc();
        LifecycleEvent {
            kind: LifecycleKind::Killed,
            session_id: "abc".into(),
            runtime: "python".into(),
            tenant: None,
            labels: BTreeMap::from([("job".into(), "7".into())]),
            created_at,
            at: created_at + Duration::milliseconds(1500),
            reason: Some("closed by the client".into()),
        }
    }

    #[test]
    fn the_payload_is_e2bs_with_the_reason_and_how_long_it_ran() {
        let limits = Limits {
            mem_limit_bytes: 512 << 20,
            cpus: 1.5,
            pids_limit: 64,
            network_mode: sandboxd_api::NetworkMode::None,
            tmpfs_size_bytes: 0,
            isolation: sandboxd_api::Isolation::Runc,
        };
        let body: Value = serde_json::from_slice(&body(&killed(), "ev1", Some(&limits))).unwrap();
        assert_eq!(body["type"], "sandbox.lifecycle.killed");
        assert_eq!(
            (body["version"].as_str(), body["id"].as_str()),
            (Some("v2"), Some("ev1"))
        );
        assert_eq!(body["sandboxId"], "abc");
        assert_eq!(body["sandboxTemplateId"], "python");
        assert_eq!(body["eventData"]["sandbox_metadata"]["job"], "7");
        assert_eq!(body["eventData"]["reason"], "closed by the client");
        let execution = &body["eventData"]["execution"];
        assert_eq!(execution["execution_time"], 1500);
        assert_eq!(
            (
                execution["vcpu_count"].as_f64(),
                execution["memory_mb"].as_u64()
            ),
            (Some(2.0), Some(512))
        );
    }

    #[test]
    fn the_signature_is_e2bs_unpadded_base64_of_secret_then_body() {
        // sha256("s" + "{}") computed independently (Python's hashlib, base64, '=' stripped).
        assert_eq!(
            signature("s", b"{}"),
            "20K7jJGyoJBULG3JejR3sgao028nqWw/BmRa+n3Gac8"
        );
        assert!(!signature("s", b"{}").ends_with('='));
    }

    #[test]
    fn ids_are_version_4_uuids() {
        let id = new_id();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert_ne!(id, new_id());
    }
}
