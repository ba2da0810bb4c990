//! A volume's entries without a session, besides a file's bytes (`volume_files`): the entry
//! at a path, a directory's listing, a directory made, a path removed; and the token that
//! reaches one volume's files alone (E2B's volume token).
//!
//! The backend does each on the host, confined to the volume like a file read or written
//! there (no symlink followed, no other filesystem reached).
//!
//! A volume token is the volume's id and an HMAC of it under the service token: nothing to
//! store, the same after a restart, void once the volume is deleted (a new volume of that
//! name has a new id) or the service token changes. Presenting it acts as the volume's owner
//! on that volume alone; a wrong one counts as a failed authentication like a wrong token.

use crate::core::Core;
use crate::error::{Error, CODE_EXISTS};
use crate::ops::volume_files::{checked_path, files_need_a_session, open_error};
use crate::ops::volumes::volume_host_error;
use crate::state::activity::Caller;
use crate::state::auth::Principal;
use sandboxd_backend::{VolumeEntry, VolumePathOp};
use sandboxd_store::VolumeState;
use std::net::IpAddr;
use subtle::ConstantTimeEq;

/// What the HMAC is taken for, so the same key never signs two kinds of thing alike.
const CONTEXT: &str = "sandboxd volume access token v1";
/// Entries one listing answers at most, whatever is asked.
pub const MAX_LISTED: usize = 10_000;
/// Levels one listing goes down at most.
pub const MAX_LIST_DEPTH: u32 = 16;

impl Core {
    /// Does `op` at `path` of the caller's volume `name`: the entries it concerns (none for
    /// a removal).
    pub async fn volume_path(
        &self,
        caller: &Caller,
        name: &str,
        path: Option<String>,
        op: VolumePathOp,
    ) -> Result<Vec<VolumeEntry>, Error> {
        let path = checked_path(path)?;
        let op = match op {
            VolumePathOp::List { depth, max } => VolumePathOp::List {
                depth,
                max: max.min(MAX_LISTED),
            },
            other => other,
        };
        if let VolumePathOp::List { depth, .. } = op {
            if depth == 0 || depth > MAX_LIST_DEPTH {
                return Err(Error::bad_request(
                    "invalid_request",
                    format!("a listing goes 1 to {MAX_LIST_DEPTH} levels down; {depth} was asked"),
                ));
            }
        }
        let tenant = caller.principal.tenant();
        let volume = self.volume_for(caller, tenant, name, "volume_path")?;
        let (core, id, at) = (self.clone(), volume.id.clone(), path.clone());
        // Directory walks are blocking system calls.
        let done = tokio::task::spawn_blocking(move || core.backend().volume_path(&id, &at, op))
            .await
            .map_err(|e| volume_host_error(std::io::Error::other(e)))?;
        let done = done.ok_or_else(files_need_a_session)?;
        done.map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Error::Conflict {
                code: CODE_EXISTS,
                message: format!("{path} of volume \"{name}\" exists already"),
            },
            std::io::ErrorKind::FileTooLarge => Error::bad_request(
                "listing_too_large",
                format!("{path} of volume \"{name}\": {e}"),
            ),
            std::io::ErrorKind::DirectoryNotEmpty => Error::Conflict {
                code: "not_empty",
                message: format!(
                    "{path} of volume \"{name}\" changed while it was removed; try again"
                ),
            },
            _ => open_error(name, &path, e),
        })
    }

    /// The token that reaches the files of the caller's volume `name`, and nothing else.
    pub fn volume_access_token(&self, caller: &Caller, name: &str) -> Result<String, Error> {
        let tenant = caller.principal.tenant();
        let volume = self.volume_for(caller, tenant, name, "volume_token")?;
        Ok(format!("{}.{}", volume.id, self.volume_mac(&volume.id)))
    }

    /// Who presenting `token` for the volume `name` acts as: the volume's owner (its tenant,
    /// or the administrator for an untenanted one). Refused and counted like a wrong bearer
    /// token when it is not that volume's.
    pub fn authenticate_volume_token(
        &self,
        name: &str,
        token: &str,
        address: Option<IpAddr>,
    ) -> Result<Principal, Error> {
        let refused = || self.tokens().refuse(self.config(), address);
        let (id, mac) = token.split_once('.').ok_or_else(refused)?;
        if !bool::from(self.volume_mac(id).as_bytes().ct_eq(mac.as_bytes())) {
            return Err(refused());
        }
        let volume = self
            .sessions()
            .store()
            .volumes(None)?
            .into_iter()
            .find(|v| v.id == id && v.name == name && v.state == VolumeState::Ready)
            .ok_or_else(refused)?;
        Ok(volume.tenant.map_or(Principal::Admin, Principal::Tenant))
    }

    fn volume_mac(&self, id: &str) -> String {
        let digest = self.tokens().derive(CONTEXT, id);
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}
