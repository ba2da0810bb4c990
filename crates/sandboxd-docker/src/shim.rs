//! Which engine shim a new sandbox joins.
//!
//! containerd starts a shim process on the host for each container unless the container's
//! annotations name a group: containers of one group share one shim. An idle sandbox with a
//! shim of its own costs about 4 MB of host memory (the shim and its kernel objects), sharing
//! under 1 MB. Sandboxes made one after another fill a group, `per_shim` at a time; a group is
//! never refilled, so a shim's sandboxes are only ever those few, and it exits with its last.
//! Annotations came with the engine's API 1.43: an older engine gives each sandbox its own.

use crate::engine::{Finding, Level};
use bollard::ClientVersion;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The annotation containerd's runc shim reads to share one shim among containers.
const GROUP_ANNOTATION: &str = "io.containerd.runc.v2.group";
/// The first engine API that passes a container's annotations on to containerd.
const FIRST_API_WITH_ANNOTATIONS: ClientVersion = ClientVersion {
    major_version: 1,
    minor_version: 43,
};

pub(crate) struct ShimGroups {
    /// Unique to this instance and this start, so a group is never one a past run filled.
    prefix: String,
    /// How many sandboxes share a shim; none when each gets its own.
    per_shim: Option<u64>,
    created: AtomicU64,
}

/// Whether an engine speaking `api` can put `per_shim` sandboxes behind one shim.
fn groups(per_shim: u32, api: &ClientVersion) -> bool {
    per_shim > 1 && *api >= FIRST_API_WITH_ANNOTATIONS
}

impl ShimGroups {
    pub(crate) fn new(instance_id: &str, per_shim: u32, api: &ClientVersion) -> ShimGroups {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        ShimGroups {
            prefix: format!("sandboxd-{instance_id}-{started}"),
            per_shim: groups(per_shim, api).then_some(u64::from(per_shim)),
            created: AtomicU64::new(0),
        }
    }

    /// The annotations of the next sandbox: none when it gets a shim of its own.
    pub(crate) fn next_annotations(&self) -> Option<HashMap<String, String>> {
        let per_shim = self.per_shim?;
        let group = self.created.fetch_add(1, Ordering::Relaxed) / per_shim;
        Some(HashMap::from([(
            GROUP_ANNOTATION.to_string(),
            format!("{}-{group}", self.prefix),
        )]))
    }
}

/// What the operator should know about how sandboxes share shims with `per_shim` asked of an
/// engine speaking `api`.
pub(crate) fn finding(per_shim: u32, api: &ClientVersion) -> Option<Finding> {
    if per_shim <= 1 {
        return None;
    }
    Some(if groups(per_shim, api) {
        Finding {
            level: Level::Info,
            message: format!(
                "sandboxes share the engine's shims, {per_shim} to a shim (backend.sandboxes_per_shim)"
            ),
        }
    } else {
        Finding {
            level: Level::Warning,
            message: format!(
                "the engine speaks API {api} (annotations need 1.43, Docker 23 or later): each sandbox gets an engine shim of its own, about 4 MB of host memory more than sharing one among {per_shim}"
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(minor_version: usize) -> ClientVersion {
        ClientVersion {
            major_version: 1,
            minor_version,
        }
    }

    fn group_of(groups: &ShimGroups) -> Option<String> {
        groups
            .next_annotations()
            .map(|a| a[GROUP_ANNOTATION].clone())
    }

    #[test]
    fn sandboxes_fill_a_group_then_start_the_next() {
        let groups = ShimGroups::new("inst", 3, &api(51));
        let names: Vec<String> = (0..7).map(|_| group_of(&groups).unwrap()).collect();
        assert_eq!(names[0], names[1]);
        assert_eq!(names[1], names[2]);
        assert_ne!(names[2], names[3]);
        assert_eq!(names[3], names[5]);
        assert_ne!(names[5], names[6]);
        assert!(names[0].starts_with("sandboxd-inst-"), "{}", names[0]);
        assert_eq!(finding(3, &api(51)).unwrap().level, Level::Info);
    }

    #[test]
    fn an_engine_without_annotations_or_a_share_of_one_gives_each_its_own() {
        let old = ShimGroups::new("inst", 16, &api(41));
        assert_eq!(group_of(&old), None);
        let warning = finding(16, &api(41)).unwrap();
        assert_eq!(warning.level, Level::Warning);
        assert!(warning.message.contains("API 1.41"), "{}", warning.message);
        let alone = ShimGroups::new("inst", 1, &api(51));
        assert_eq!(group_of(&alone), None);
        assert!(finding(1, &api(51)).is_none());
    }
}
