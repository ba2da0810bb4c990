//! Volumes: storage owned by a tenant that outlives sessions and is shared between them (see
//! `volume_mounts` for mounting at open, `volume_files` for their files without a session).
//! A tenant's volumes are named in its own namespace: another tenant's is "not found", like a
//! name that does not exist, and the attempt goes to the audit log. The service token's
//! namespace is the untenanted one; it lists every tenant's. Each counts against its tenant's
//! quota (`policy.volume_quota_count`, `policy.volume_quota_bytes`), by its size, from the
//! moment it is recorded.
//!
//! Record and data stay in step through a crash: the record is written (`creating`) before
//! the backend makes the data and marked `ready` after; a delete marks it `deleting`, removes
//! the data, then the record. At start ([`Core::repair_volumes`]) a `creating` or `deleting`
//! volume is removed, a `ready` one mounted again, and data without a record removed.

use crate::core::Core;
use crate::error::Error;
use crate::ops::snapshots::host_error;
use crate::state::activity::Caller;
use crate::state::sessions::{new_session_id, rfc3339, tenant_name};
use sandboxd_api::{VolumeInfo, VolumeList, VolumeRequest, VolumeSize};
use sandboxd_config::{format_bytes, parse_bytes};
use sandboxd_store::{VolumeRecord, VolumeState};
use std::collections::HashSet;
use time::OffsetDateTime;

const MAX_NAME_LEN: usize = 64;
/// The smallest volume: an ext4 filesystem's own bookkeeping takes a few MiB.
pub(crate) const MIN_VOLUME_BYTES: u64 = 16 << 20;

pub(crate) fn not_found(name: &str) -> Error {
    Error::NotFound(format!(
        "no volume named \"{name}\"; list the volumes to see yours"
    ))
}

pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if fine {
        Ok(())
    } else {
        Err(Error::bad_request(
            "invalid_volume_name",
            format!(
                "volume name {name:?} is not allowed: use 1 to {MAX_NAME_LEN} of a-z, A-Z, 0-9, '-', '_' and '.', not starting with '.'"
            ),
        ))
    }
}

fn size_bytes(size: &VolumeSize) -> Result<u64, Error> {
    let bytes = match size {
        VolumeSize::Bytes(bytes) => *bytes,
        VolumeSize::Text(text) => {
            parse_bytes(text).map_err(|e| Error::bad_request("invalid_volume_size", e))?
        }
    };
    if bytes < MIN_VOLUME_BYTES {
        return Err(Error::bad_request(
            "invalid_volume_size",
            format!(
                "a volume's size must be at least {}; {} was asked",
                format_bytes(MIN_VOLUME_BYTES),
                format_bytes(bytes)
            ),
        ));
    }
    Ok(bytes)
}

impl Core {
    pub(crate) fn volumes_offered(&self) -> Result<(), Error> {
        if self.backend().offers_volumes() {
            Ok(())
        } else {
            Err(Error::bad_request(
                "volumes_unavailable",
                "this service's backend keeps no volumes (they are offered on Docker and Kubernetes)",
            ))
        }
    }

    /// The volume as shown, with what its files take (on Kubernetes the kubelet's figure, which
    /// may mean reading a node's summary).
    pub(crate) async fn volume_info(&self, record: &VolumeRecord) -> VolumeInfo {
        VolumeInfo {
            used_bytes: self.backend().volume_used_bytes(&record.id).await,
            ..self.volume_record_info(record)
        }
    }

    /// The volume as its record and the open sessions say, without what its files take.
    fn volume_record_info(&self, record: &VolumeRecord) -> VolumeInfo {
        VolumeInfo {
            name: record.name.clone(),
            tenant: record.tenant.clone(),
            size_bytes: record.size_bytes,
            used_bytes: None,
            created_at: record.created_at.clone(),
            sessions: self.volume_users(&record.id).unwrap_or_default(),
        }
    }

    /// The open sessions (and those being opened) that mount the volume.
    pub(crate) fn volume_users(&self, volume_id: &str) -> Result<Vec<String>, Error> {
        let mut users: Vec<String> = self
            .sessions()
            .store()
            .mounts_of_volume(volume_id)?
            .into_iter()
            .map(|m| m.session_id)
            .filter(|id| self.sessions().is_open(id) || self.volumes().is_opening(id))
            .collect();
        users.dedup();
        Ok(users)
    }

    /// The caller's ready volume of that name. Another tenant's is "not found", and the
    /// attempt goes to the audit log.
    pub(crate) fn volume_for(
        &self,
        caller: &Caller,
        tenant: Option<&str>,
        name: &str,
        action: &'static str,
    ) -> Result<VolumeRecord, Error> {
        check_name(name)?;
        let store = self.sessions().store();
        match store.volume_named(tenant, name)? {
            Some(record) if record.state == VolumeState::Ready => Ok(record),
            Some(_) => Err(not_found(name)),
            None => {
                // A tenant asking for another's volume is a cross-tenant attempt; the
                // service token asking is not.
                let elsewhere = caller.principal.tenant().is_some()
                    && store
                        .volumes(None)?
                        .iter()
                        .any(|v| v.name == name && v.tenant.as_deref() != tenant);
                if elsewhere {
                    self.record_denied(caller, action, &format!("volume:{name}"));
                }
                Err(not_found(name))
            }
        }
    }

    /// Makes a volume of the caller's tenant, under its quota.
    pub async fn create_volume(
        &self,
        caller: &Caller,
        request: VolumeRequest,
    ) -> Result<VolumeInfo, Error> {
        check_name(&request.name)?;
        let size = size_bytes(&request.size)?;
        self.volumes_offered()?;
        let tenant = caller.principal.tenant();
        let policy = &self.config().policy;
        let store = self.sessions().store();
        let record = {
            let _turn = self.volumes().turn().await;
            let (count, used) = store.volume_usage(tenant)?;
            if count >= policy.volume_quota_count {
                return Err(Error::LimitReached {
                    code: "volume_quota",
                    message: format!(
                        "{} has {count} volumes, as many as its quota allows (policy.volume_quota_count = {}); delete one first",
                        tenant_name(tenant, "volumes"),
                        policy.volume_quota_count
                    ),
                });
            }
            let quota = policy.volume_quota_bytes;
            if used.saturating_add(size) > quota {
                return Err(Error::LimitReached {
                    code: "volume_quota",
                    message: format!(
                        "a volume of {} would pass the volume quota of {}: {} of {} in use (policy.volume_quota_bytes); ask for at most {}, or delete a volume first",
                        format_bytes(size),
                        tenant_name(tenant, "volumes"),
                        format_bytes(used),
                        format_bytes(quota),
                        format_bytes(quota.saturating_sub(used))
                    ),
                });
            }
            let record = VolumeRecord {
                id: new_session_id(),
                name: request.name.clone(),
                tenant: tenant.map(str::to_string),
                size_bytes: size,
                created_at: rfc3339(OffsetDateTime::now_utc()),
                state: VolumeState::Creating,
            };
            if !store.insert_volume(&record)? {
                return Err(Error::Conflict {
                    code: "volume_exists",
                    message: format!(
                        "{} has a volume named \"{}\" already; pick another name or delete it first",
                        tenant_name(tenant, "volumes"),
                        request.name
                    ),
                });
            }
            record
        };
        if let Err(e) = self.backend().create_volume(&record.id, size).await {
            // Nothing is left: the data, then the record (a crash between is repaired at start).
            let _ = self.backend().remove_volume(&record.id).await;
            store.delete_volume(&record.id)?;
            return Err(e.into());
        }
        store.set_volume_state(&record.id, VolumeState::Ready)?;
        tracing::info!(volume = %record.id, name = %record.name, size, "volume created");
        let record = VolumeRecord {
            state: VolumeState::Ready,
            ..record
        };
        Ok(self.volume_info(&record).await)
    }

    /// The volumes the caller may see: its tenant's, or all for the service token.
    pub async fn list_volumes(&self, caller: &Caller) -> Result<VolumeList, Error> {
        let tenant = caller.principal.tenant().map(Some);
        let records = self.sessions().store().volumes(tenant)?;
        let mut volumes = Vec::with_capacity(records.len());
        for record in records.iter().filter(|r| r.state == VolumeState::Ready) {
            volumes.push(self.volume_info(record).await);
        }
        Ok(VolumeList { volumes })
    }

    pub async fn get_volume(&self, caller: &Caller, name: &str) -> Result<VolumeInfo, Error> {
        let tenant = caller.principal.tenant();
        let record = self.volume_for(caller, tenant, name, "get_volume")?;
        Ok(self.volume_info(&record).await)
    }

    /// Deletes a volume and its files; refused while an open session mounts it.
    pub async fn delete_volume(&self, caller: &Caller, name: &str) -> Result<VolumeInfo, Error> {
        let tenant = caller.principal.tenant();
        let store = self.sessions().store();
        let record = {
            let _turn = self.volumes().turn().await;
            let record = self.volume_for(caller, tenant, name, "delete_volume")?;
            let users = self.volume_users(&record.id)?;
            if !users.is_empty() {
                return Err(Error::Conflict {
                    code: "volume_in_use",
                    message: format!(
                        "volume \"{name}\" is mounted by open sessions {}; close them first",
                        users.join(", ")
                    ),
                });
            }
            store.set_volume_state(&record.id, VolumeState::Deleting)?;
            record
        };
        let info = self.volume_record_info(&record);
        self.backend().remove_volume(&record.id).await?;
        store.delete_volume(&record.id)?;
        tracing::info!(volume = %record.id, name, "volume deleted");
        Ok(VolumeInfo {
            sessions: Vec::new(),
            ..info
        })
    }

    /// At start, before any session opens: finishes what a crash interrupted (a volume being
    /// made or deleted is removed), mounts the ready volumes again, and removes data that has
    /// no record. A volume that cannot be mounted is logged and stays recorded.
    pub(crate) async fn repair_volumes(&self) -> Result<(), Error> {
        if !self.backend().offers_volumes() {
            return Ok(());
        }
        let store = self.sessions().store();
        let records = store.volumes(None)?;
        let mut kept = HashSet::new();
        for record in &records {
            match record.state {
                VolumeState::Ready => {
                    kept.insert(record.id.clone());
                    if let Err(e) = self.backend().restore_volume(&record.id).await {
                        tracing::error!(volume = %record.id, name = %record.name, error = %e, "cannot mount a volume again");
                    }
                }
                VolumeState::Creating | VolumeState::Deleting => {
                    self.backend().remove_volume(&record.id).await?;
                    store.delete_volume(&record.id)?;
                    tracing::info!(volume = %record.id, name = %record.name, "removed a volume a crash left half made or half deleted");
                }
            }
        }
        for id in self.backend().list_volumes().await? {
            if !kept.contains(&id) {
                self.backend().remove_volume(&id).await?;
                tracing::info!(volume = %id, "removed volume data without a record");
            }
        }
        Ok(())
    }
}

/// The host could not be asked about a volume's files.
pub(crate) fn volume_host_error(e: std::io::Error) -> Error {
    host_error("cannot reach the volume's files", e)
}
