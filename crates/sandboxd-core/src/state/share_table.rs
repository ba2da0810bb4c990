//! The share links of every session, kept by their capability's hash: leaf state the core's
//! share operations use.

use crate::state::sessions::rfc3339;
use sandboxd_api::ShareInfo;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use time::OffsetDateTime;

pub(crate) struct Share {
    pub(crate) id: String,
    pub(crate) session_id: String,
    /// Its session's tenant (`None`: the administrator's).
    pub(crate) tenant: Option<String>,
    pub(crate) port: u16,
    pub(crate) created_at: OffsetDateTime,
    pub(crate) expires_at: OffsetDateTime,
    pub(crate) created_by: String,
}

impl Share {
    pub(crate) fn info(&self, path: Option<String>) -> ShareInfo {
        ShareInfo {
            id: self.id.clone(),
            port: self.port,
            path,
            url: None,
            created_at: rfc3339(self.created_at),
            expires_at: rfc3339(self.expires_at),
            created_by: self.created_by.clone(),
        }
    }
}

/// The links, by their capability's SHA-256.
#[derive(Default)]
pub struct Shares {
    pub(crate) links: Mutex<HashMap<[u8; 32], Share>>,
}

impl Shares {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Share>> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drops the links of a session that ended: they stop, and take no place any more.
    pub(crate) fn forget_session(&self, session: &str) {
        self.lock().retain(|_, share| share.session_id != session);
    }
}
