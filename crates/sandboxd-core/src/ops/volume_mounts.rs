//! Volumes mounted in a session at open: each request checked (the tenant's own volume, a
//! path below the sandbox's writable places, the operator's word on concurrent writers) and
//! recorded before the sandbox is made, so a delete of the volume meanwhile is refused and
//! a restart knows who mounts what. Each mount is an entry of the session's activity log.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::{self, Caller, Outcome};
use crate::state::volume_table::Opening;
use sandboxd_api::VolumeMountRequest;
use sandboxd_backend::{VolumeMount, VOLUME_PLACES};
use sandboxd_store::MountRecord;

/// Volumes one session may mount.
const MAX_MOUNTS: usize = 8;
const MAX_PATH_LEN: usize = 256;

fn bad_path(path: &str, why: &str) -> Error {
    Error::bad_request(
        "invalid_mount_path",
        format!(
            "a volume cannot be mounted at {path:?}: {why}; mount it at an absolute path below {}",
            VOLUME_PLACES.join(", ")
        ),
    )
}

/// The path, if a volume may be mounted there: absolute, plain (no `.`, `..`, `//` or
/// trailing `/`) and strictly below one of the sandbox's writable places, so never over the
/// agent, `/proc` or any system path.
pub(crate) fn check_mount_path(path: &str) -> Result<(), Error> {
    if path.len() > MAX_PATH_LEN || path.chars().any(char::is_control) {
        return Err(bad_path(path, "it is too long or holds control characters"));
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(bad_path(path, "it is not absolute"));
    };
    if rest
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(bad_path(
            path,
            "it is not a plain path (no '.', '..', '//' or trailing '/')",
        ));
    }
    let below = VOLUME_PLACES.iter().any(|place| {
        path.strip_prefix(place)
            .is_some_and(|rest| rest.starts_with('/'))
    });
    if below {
        Ok(())
    } else {
        Err(bad_path(
            path,
            "it is not below the sandbox's writable places",
        ))
    }
}

/// Checks what can be checked before anything is looked up: the count and the paths.
pub(crate) fn check_requests(requests: &[VolumeMountRequest]) -> Result<(), Error> {
    if requests.len() > MAX_MOUNTS {
        return Err(Error::bad_request(
            "too_many_volumes",
            format!(
                "{} volumes asked; a session mounts at most {MAX_MOUNTS}",
                requests.len()
            ),
        ));
    }
    for (index, request) in requests.iter().enumerate() {
        crate::ops::volumes::check_name(&request.name)?;
        check_mount_path(&request.path)?;
        for earlier in &requests[..index] {
            let nested = |a: &str, b: &str| {
                a == b || a.strip_prefix(b).is_some_and(|rest| rest.starts_with('/'))
            };
            if nested(&request.path, &earlier.path) || nested(&earlier.path, &request.path) {
                return Err(bad_path(
                    &request.path,
                    &format!("it overlaps the mount at {}", earlier.path),
                ));
            }
        }
    }
    Ok(())
}

/// The volumes a session being opened mounts, held as in use until it is in the session
/// table (or failed).
pub(crate) struct PlannedMounts<'a> {
    pub mounts: Vec<VolumeMount>,
    /// (name, path, read-only), for the activity log.
    named: Vec<(String, String, bool)>,
    _opening: Opening<'a>,
}

impl Core {
    /// Resolves and records the mounts of `session_id`, whose volumes are `tenant`'s.
    pub(crate) async fn plan_mounts(
        &self,
        caller: &Caller,
        tenant: Option<&str>,
        session_id: &str,
        requests: &[VolumeMountRequest],
    ) -> Result<PlannedMounts<'_>, Error> {
        self.volumes_offered()?;
        let _turn = self.volumes().turn().await;
        let store = self.sessions().store();
        let mut mounts = Vec::new();
        let mut named = Vec::new();
        let mut records = Vec::new();
        for request in requests {
            let volume = self.volume_for(caller, tenant, &request.name, "mount_volume")?;
            if !request.read_only && !self.config().policy.volume_concurrent_writers {
                let writers: Vec<String> = store
                    .mounts_of_volume(&volume.id)?
                    .into_iter()
                    .filter(|m| !m.read_only)
                    .map(|m| m.session_id)
                    .filter(|id| self.sessions().is_open(id) || self.volumes().is_opening(id))
                    .collect();
                if let Some(writer) = writers.first() {
                    return Err(Error::Conflict {
                        code: "volume_busy",
                        message: format!(
                            "volume \"{}\" is mounted writable by open session {writer}, and the policy allows one writer at a time (policy.volume_concurrent_writers = false); mount it read-only, or close that session first",
                            request.name
                        ),
                    });
                }
            }
            records.push(MountRecord {
                session_id: session_id.to_string(),
                volume_id: volume.id.clone(),
                path: request.path.clone(),
                read_only: request.read_only,
            });
            mounts.push(VolumeMount {
                volume_id: volume.id,
                path: request.path.clone(),
                read_only: request.read_only,
            });
            named.push((
                request.name.clone(),
                request.path.clone(),
                request.read_only,
            ));
        }
        let opening = self.volumes().opening(session_id);
        store.insert_mounts(&records)?;
        Ok(PlannedMounts {
            mounts,
            named,
            _opening: opening,
        })
    }

    /// The activity entries of a session's mounts, once it is open.
    pub(crate) fn log_mounts(&self, caller: &Caller, session_id: &str, planned: &PlannedMounts) {
        for (name, path, read_only) in &planned.named {
            let target = format!(
                "{name} at {path}{}",
                if *read_only { " (read-only)" } else { "" }
            );
            activity::append(
                self.sessions(),
                session_id,
                &caller.actor(),
                "mount_volume",
                &target,
                Outcome::ok(0),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_go_only_below_the_writable_places() {
        for fine in ["/workspace/data", "/tmp/cache", "/home/user/x/y"] {
            assert!(check_mount_path(fine).is_ok(), "{fine}");
        }
        for bad in [
            "/workspace",
            "/tmp",
            "/proc/x",
            "/proc",
            "/.sandboxd-agent",
            "/.sandboxd/x",
            "/etc",
            "/dev/shm/x",
            "workspace/x",
            "/workspace/../etc",
            "/workspace/./x",
            "/workspace//x",
            "/workspace/x/",
            "/workspacex",
            "/tmp/a\nb",
        ] {
            let e = check_mount_path(bad).unwrap_err();
            assert_eq!(e.code(), "invalid_mount_path", "{bad}");
        }
    }

    #[test]
    fn overlapping_mounts_are_refused() {
        let mount = |path: &str| VolumeMountRequest {
            name: "v".into(),
            path: path.into(),
            read_only: false,
        };
        assert!(check_requests(&[mount("/tmp/a"), mount("/tmp/ab")]).is_ok());
        assert!(check_requests(&[mount("/tmp/a"), mount("/tmp/a/b")]).is_err());
        assert!(check_requests(&[mount("/tmp/a"), mount("/tmp/a")]).is_err());
        assert!(check_requests(&vec![mount("/tmp/a"); 9]).is_err());
    }
}
