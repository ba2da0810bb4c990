//! Volumes as PersistentVolumeClaims: one per volume in the service's namespace, of the
//! StorageClass and access mode the config names, asking for the volume's size, labelled with
//! the service instance and the volume's id so the service finds its claims again (and tests
//! remove theirs). The claim is made when the volume is, and waited for until it is bound
//! (unless its class binds at a pod's first use): a class that cannot provision fails the
//! volume's create, where the caller sees it, rather than a session's open later.
//!
//! How much a volume holds is the StorageClass's business: a claim asks for the volume's size,
//! and block-backed drivers give a filesystem of that size, but some (host-path, many NFS
//! ones) enforce nothing.

use crate::api_errors::{api_error, is_status};
use crate::labels::{LABEL_INSTANCE, LABEL_MANAGED, LABEL_VOLUME};
use crate::options::KubernetesOptions;
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimSpec, VolumeResourceRequirements,
};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};
use sandboxd_backend::BackendError;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long a new claim may take to be bound (a provisioner making its volume).
const BIND_TIMEOUT: Duration = Duration::from_secs(60);
const BIND_POLL: Duration = Duration::from_millis(100);

/// The claim of a volume, by the service's id of it (never its name, which is its tenant's).
pub fn claim_name(volume_id: &str) -> String {
    format!("sandboxd-volume-{volume_id}")
}

fn claim(options: &KubernetesOptions, volume_id: &str, size_bytes: u64) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(claim_name(volume_id)),
            namespace: Some(options.namespace.clone()),
            labels: Some(BTreeMap::from([
                (LABEL_MANAGED.to_string(), "true".to_string()),
                (LABEL_INSTANCE.to_string(), options.instance_id.clone()),
                (LABEL_VOLUME.to_string(), volume_id.to_string()),
            ])),
            ..Default::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec![options.volume_access_mode.clone()]),
            storage_class_name: options.volume_storage_class.clone(),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_string(),
                    Quantity(size_bytes.to_string()),
                )])),
                limits: None,
            }),
            ..Default::default()
        }),
        status: None,
    }
}

/// The claims of one service instance.
pub(crate) struct Claims {
    claims: Api<PersistentVolumeClaim>,
    classes: Api<StorageClass>,
}

impl Claims {
    pub(crate) fn new(client: &Client, namespace: &str) -> Claims {
        Claims {
            claims: Api::namespaced(client.clone(), namespace),
            classes: Api::all(client.clone()),
        }
    }

    /// Refuses the start when `backend.volume_storage_class` names a class the cluster does
    /// not have. Credentials that may not read StorageClasses (cluster-scoped) cannot tell: a
    /// volume's create says so then.
    pub(crate) async fn check_class(&self, class: Option<&str>) -> Result<(), BackendError> {
        let Some(class) = class else { return Ok(()) };
        match self.classes.get_opt(class).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(BackendError::Setup(format!(
                "backend.volume_storage_class names the StorageClass {class}, which the cluster does not have; create it, or name one `kubectl get storageclass` lists"
            ))),
            Err(e) if is_status(&e, 403) => {
                tracing::warn!(
                    class,
                    "cannot read the cluster's StorageClasses to check backend.volume_storage_class"
                );
                Ok(())
            }
            Err(e) => Err(api_error(e)),
        }
    }

    /// Makes the volume's claim and waits until it is bound (or its class binds it at a pod's
    /// first use). A claim left by a crashed try of the same volume is taken as it is.
    pub(crate) async fn create(
        &self,
        options: &KubernetesOptions,
        volume_id: &str,
        size_bytes: u64,
    ) -> Result<(), BackendError> {
        let new = claim(options, volume_id, size_bytes);
        match self.claims.create(&PostParams::default(), &new).await {
            Ok(_) => {}
            Err(e) if is_status(&e, 409) => {}
            Err(e) => return Err(api_error(e)),
        }
        self.wait_bound(&claim_name(volume_id)).await
    }

    async fn wait_bound(&self, name: &str) -> Result<(), BackendError> {
        let deadline = Instant::now() + BIND_TIMEOUT;
        let mut class_checked = false;
        loop {
            let Some(claim) = self.claims.get_opt(name).await.map_err(api_error)? else {
                return Err(BackendError::Engine(format!(
                    "the claim {name} was removed while it was being made"
                )));
            };
            let phase = claim.status.as_ref().and_then(|s| s.phase.as_deref());
            if phase == Some("Bound") {
                return Ok(());
            }
            let class = claim
                .spec
                .as_ref()
                .and_then(|s| s.storage_class_name.clone());
            if !class_checked {
                class_checked = true;
                if self.binds_at_first_use(name, class.as_deref()).await? {
                    return Ok(());
                }
            }
            if Instant::now() >= deadline {
                return Err(BackendError::Engine(format!(
                    "the claim {name} (StorageClass {}) was not bound within {}s: the class's provisioner made no volume for it; `kubectl describe pvc {name}` says why",
                    class.as_deref().unwrap_or("none"),
                    BIND_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(BIND_POLL).await;
        }
    }

    /// Whether the claim's class binds at a pod's first use (`WaitForFirstConsumer`), so
    /// nothing binds it before a session mounts it.
    async fn binds_at_first_use(
        &self,
        name: &str,
        class: Option<&str>,
    ) -> Result<bool, BackendError> {
        let Some(class) = class else {
            return Err(BackendError::Engine(format!(
                "the claim {name} has no StorageClass: the cluster has no default one; name one in backend.volume_storage_class"
            )));
        };
        match self.classes.get_opt(class).await {
            Ok(Some(found)) => {
                Ok(found.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer"))
            }
            Ok(None) => Err(BackendError::Engine(format!(
                "the claim {name} names the StorageClass {class}, which the cluster does not have"
            ))),
            // Cannot tell: wait for the binding as for an immediate class.
            Err(e) if is_status(&e, 403) => Ok(false),
            Err(e) => Err(api_error(e)),
        }
    }

    /// Whether the volume's claim exists (and is not being deleted).
    pub(crate) async fn exists(&self, volume_id: &str) -> Result<bool, BackendError> {
        let claim = self
            .claims
            .get_opt(&claim_name(volume_id))
            .await
            .map_err(api_error)?;
        Ok(claim.is_some_and(|c| c.metadata.deletion_timestamp.is_none()))
    }

    /// Deletes the volume's claim; the cluster removes it once no pod uses it, and its volume
    /// as the class's reclaim policy says.
    pub(crate) async fn remove(&self, volume_id: &str) -> Result<(), BackendError> {
        match self
            .claims
            .delete(&claim_name(volume_id), &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_status(&e, 404) => Ok(()),
            Err(e) => Err(api_error(e)),
        }
    }

    /// The ids of this instance's volumes whose claims exist and are not being deleted.
    pub(crate) async fn list(&self, instance_id: &str) -> Result<Vec<String>, BackendError> {
        let selector = format!("{LABEL_MANAGED}=true,{LABEL_INSTANCE}={instance_id}");
        let claims = self
            .claims
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(api_error)?;
        Ok(claims
            .items
            .into_iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .filter_map(|c| c.metadata.labels?.remove(LABEL_VOLUME))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_asks_for_the_volumes_size_of_the_configured_class_and_mode() {
        let options = KubernetesOptions {
            volume_storage_class: Some("fast".into()),
            volume_access_mode: "ReadWriteMany".into(),
            ..crate::options::tests::options()
        };
        let made = claim(&options, "abc", 64 << 20);
        assert_eq!(made.metadata.name.as_deref(), Some("sandboxd-volume-abc"));
        let labels = made.metadata.labels.unwrap();
        assert_eq!(labels[LABEL_VOLUME], "abc");
        assert_eq!(labels[LABEL_INSTANCE], "i1");
        let spec = made.spec.unwrap();
        assert_eq!(spec.storage_class_name.as_deref(), Some("fast"));
        assert_eq!(spec.access_modes, Some(vec!["ReadWriteMany".to_string()]));
        assert_eq!(
            spec.resources.unwrap().requests.unwrap()["storage"],
            Quantity((64u64 << 20).to_string())
        );
    }
}
