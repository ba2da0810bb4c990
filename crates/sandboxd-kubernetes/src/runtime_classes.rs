//! The RuntimeClasses `[backend.runtime_class]` names, checked at start: a pod naming a class
//! the cluster lacks would be refused at each open, long after the config was written.

use k8s_openapi::api::node::v1::RuntimeClass;
use kube::{Api, Client};
use sandboxd_backend::BackendError;
use std::collections::{BTreeMap, BTreeSet};

/// Refuses the start when a runtime names a class the cluster does not have. Credentials that
/// may not read RuntimeClasses (cluster-scoped) cannot tell: the start goes on, and says so.
pub(crate) async fn check(
    client: &Client,
    runtime_classes: &BTreeMap<String, String>,
) -> Result<(), BackendError> {
    let api: Api<RuntimeClass> = Api::all(client.clone());
    let mut present = BTreeSet::new();
    for class in runtime_classes.values().collect::<BTreeSet<_>>() {
        match api.get_opt(class).await {
            Ok(Some(_)) => {
                present.insert(class.as_str());
            }
            Ok(None) => {}
            Err(kube::Error::Api(status)) if status.code == 403 => {
                tracing::warn!(
                    class,
                    "cannot read the cluster's RuntimeClasses to check [backend.runtime_class]: a pod naming a missing class is refused when it is opened"
                );
                present.insert(class.as_str());
            }
            Err(e) => {
                return Err(BackendError::Setup(format!(
                    "cannot check the RuntimeClass {class} named in [backend.runtime_class]: {e}"
                )))
            }
        }
    }
    match missing(runtime_classes, &present) {
        Some(why) => Err(BackendError::Setup(why)),
        None => Ok(()),
    }
}

/// Why the start stops, naming each runtime whose class is not among `present`.
fn missing(runtime_classes: &BTreeMap<String, String>, present: &BTreeSet<&str>) -> Option<String> {
    let absent: Vec<String> = runtime_classes
        .iter()
        .filter(|(_, class)| !present.contains(class.as_str()))
        .map(|(runtime, class)| format!("{runtime} = \"{class}\""))
        .collect();
    (!absent.is_empty()).then(|| {
        format!(
            "[backend.runtime_class] names RuntimeClasses the cluster does not have: {}; install the runtime on the nodes and create its RuntimeClass (for gVisor: handler runsc, see the book's Kubernetes page), or remove those lines",
            absent.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_class_is_named_with_its_runtime() {
        let classes = BTreeMap::from([
            ("python-gvisor".to_string(), "gvisor".to_string()),
            ("sh-kata".to_string(), "kata".to_string()),
        ]);
        assert_eq!(missing(&classes, &BTreeSet::from(["gvisor", "kata"])), None);
        let why = missing(&classes, &BTreeSet::from(["kata"])).unwrap();
        assert!(why.contains("python-gvisor = \"gvisor\""), "{why}");
        assert!(!why.contains("sh-kata"), "{why}");
    }
}
