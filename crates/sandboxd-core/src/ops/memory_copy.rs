//! Copies of a running sandbox's memory and processes, which forks and snapshots keep where
//! the runtime can: gVisor runtimes without a network (a copy keeps its source's addresses,
//! which must not name two sandboxes to the egress proxy) whose sessions mount no volumes (a
//! copy would need the same mounts), on a platform that copies memory (the Docker backend).

use crate::core::Core;
use crate::error::Error;
use crate::state::sessions::Session;
use sandboxd_api::{Isolation, NetworkMode};
use sandboxd_backend::BackendError;

impl Core {
    /// Writes the copy `copy_id` of the session's memory and processes for `what` (a fork, a
    /// snapshot) as `asked`: `Some(true)` requires it, `Some(false)` none; left out, where
    /// the runtime and the platform can. Returns its bytes, or `None` when the files are to be
    /// kept instead.
    pub(crate) async fn copy_memory(
        &self,
        session: &Session,
        copy_id: &str,
        asked: Option<bool>,
        what: &str,
    ) -> Result<Option<u64>, Error> {
        let why_not = self.why_memory_cannot_be_copied(session)?;
        match (asked, why_not) {
            (Some(false), _) | (None, Some(_)) => Ok(None),
            (Some(true), Some(why)) => Err(Error::bad_request(
                "memory_not_copied",
                format!(
                    "{what} of session {} cannot keep its processes: {why}; leave out `memory` to keep its files",
                    session.id
                ),
            )),
            (_, None) => match self.backend().copy_memory(&session.sandbox, copy_id).await {
                Ok(bytes) => Ok(Some(bytes)),
                // Left to the service, a platform that cannot copy keeps the files.
                Err(BackendError::Unsupported(_)) if asked.is_none() => Ok(None),
                Err(e) => Err(e.into()),
            },
        }
    }

    /// Why the runtime of `session` cannot have its memory copied, if it cannot.
    fn why_memory_cannot_be_copied(&self, session: &Session) -> Result<Option<String>, Error> {
        let config = self.config();
        let runtime = &session.runtime;
        Ok(match config.runtime(runtime).map(|r| &r.limits) {
            None => Some(format!("runtime \"{runtime}\" is no longer on the allowlist")),
            Some(limits) if limits.isolation != Isolation::Gvisor => Some(format!(
                "runtime \"{runtime}\" runs on runc, whose sandboxes' memory cannot be copied (gVisor runtimes' can)"
            )),
            Some(limits) if limits.network_mode != NetworkMode::None => Some(format!(
                "runtime \"{runtime}\" has a network, and a copy would keep its source's addresses"
            )),
            Some(_) => {
                let mounts = self.sessions().store().mounts_of_session(&session.id)?;
                (!mounts.is_empty()).then(|| "the session mounts volumes".to_string())
            }
        })
    }
}
