//! Pausing and resuming sessions. A paused session's sandbox uses no CPU and keeps its memory,
//! processes and files: frozen in RAM by the backend (runc), or written to disk with its RAM
//! released where the backend can (gVisor on Docker; [`PausedMemory`] says which). Any
//! operation that reaches its agent resumes it first (the service's own `resume` entry in the
//! activity log says so); reading its record, its activity or closing it does not. The log's
//! `pause` and `resume` entries of a pause to disk carry the checkpoint image's bytes.
//!
//! The clocks while paused: the lifetime clock runs on (`policy.max_lifetime_secs` bounds how
//! long a sandbox holds its memory, paused or not); the idle limit does not apply, and
//! `policy.paused_timeout_secs`, counted from the pause, closes a session left paused. A
//! resume is activity, so the idle clock starts again from it.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::{self, elapsed_ms, error_text, Actor, Caller, Outcome, PendingEntry};
use crate::state::sessions::{self, tenant_name, Session};
use sandboxd_api::{PausedMemory, SessionInfo};
use sandboxd_backend::Paused;
use sandboxd_config::format_bytes;
use std::time::Instant;
use time::OffsetDateTime;

/// The target of the entry a resume on the way to another operation records.
const AUTOMATIC: &str = "automatic: an operation arrived while it was paused";

impl Core {
    /// Freezes every process of the session; pausing a paused session is no error.
    pub async fn pause_session(&self, caller: &Caller, id: &str) -> Result<SessionInfo, Error> {
        let session = self.running_session(caller, id, "pause")?;
        self.pause_as(&session, caller.actor(), &session.runtime)
            .await?;
        self.get_session(caller, id).await
    }

    /// Thaws a paused session; resuming a running session is no error.
    pub async fn resume_session(&self, caller: &Caller, id: &str) -> Result<SessionInfo, Error> {
        let session = self.running_session(caller, id, "resume")?;
        self.resume_as(&session, caller.actor(), &session.runtime)
            .await?;
        // Taken back paused after a restart, its contexts are learned once it runs again.
        self.learn_contexts(&session).await;
        self.get_session(caller, id).await
    }

    /// Whether the session's own idle timeout (see [`Core::set_idle_timeout`]) pauses it
    /// rather than closing it; the paused limit then applies as to any paused session.
    pub fn set_pause_at_own_timeout(
        &self,
        caller: &Caller,
        id: &str,
        pause: bool,
    ) -> Result<(), Error> {
        self.running_session(caller, id, "set_timeout_action")?;
        let started = Instant::now();
        self.sessions()
            .set_pause_at_own_timeout(id, pause)
            .ok_or_else(|| sessions::not_found(id))?;
        activity::append(
            self.sessions(),
            id,
            &caller.actor(),
            "set_timeout_action",
            if pause { "pause" } else { "close" },
            Outcome::ok(elapsed_ms(started)),
        );
        Ok(())
    }

    /// Pauses the session on behalf of `actor`, recording the entry.
    pub(crate) async fn pause_as(
        &self,
        session: &Session,
        actor: Actor,
        target: &str,
    ) -> Result<(), Error> {
        let _transition = session.transition.lock().await;
        let mut entry = PendingEntry::new(self.sessions(), &session.id, actor, "pause", target);
        let result = self.pause_within_quota(session, &mut entry).await;
        if let Ok(memory) = result {
            self.sessions()
                .set_paused(&session.id, Some((OffsetDateTime::now_utc(), memory)));
            tracing::info!(session = %session.id, memory = memory.describe(), "session paused");
        }
        let result = result.map(drop);
        entry.end(result.as_ref().err().map(error_text));
        result
    }

    /// Pauses the sandbox; an image on disk is counted against the tenant's
    /// `policy.pause_quota_bytes`, and one that would pass it is restored at once: the
    /// session runs on as it was and the pause is refused.
    async fn pause_within_quota(
        &self,
        session: &Session,
        entry: &mut PendingEntry,
    ) -> Result<PausedMemory, Error> {
        let bytes = match self.backend().pause(&session.sandbox).await? {
            Paused::Frozen => return Ok(PausedMemory::Ram),
            Paused::OnDisk { bytes } => bytes,
        };
        entry.bytes = Some(bytes);
        let quota = self.config().policy.pause_quota_bytes;
        let Err(held) = self.sessions().hold_image(&session.id, bytes, quota) else {
            return Ok(PausedMemory::Disk);
        };
        let quota = quota.unwrap_or_default();
        let restored = self.backend().resume(&session.sandbox).await;
        let mut message = format!(
            "pausing session {} to disk wrote an image of {}, and {} holds {} of its pause quota of {} already (policy.pause_quota_bytes); ",
            session.id,
            format_bytes(bytes),
            tenant_name(session.tenant.as_deref(), "sessions"),
            format_bytes(held),
            format_bytes(quota)
        );
        match restored {
            Ok(_) => message
                .push_str("it runs on as it was. Resume or close one of its paused sessions first"),
            Err(e) => {
                message.push_str(&format!("and restoring it failed: {e}"));
                // Its image is kept: it is paused, and counted as it stands.
                self.sessions().count_image(&session.id, bytes);
                self.sessions().set_paused(
                    &session.id,
                    Some((OffsetDateTime::now_utc(), PausedMemory::Disk)),
                );
            }
        }
        Err(Error::LimitReached {
            code: "pause_quota",
            message,
        })
    }

    /// Resumes the session on behalf of `actor`, recording the entry; a session that is not
    /// paused records nothing.
    async fn resume_as(&self, session: &Session, actor: Actor, target: &str) -> Result<(), Error> {
        let _transition = session.transition.lock().await;
        if !self.sessions().is_paused(&session.id) {
            return Ok(());
        }
        let mut entry = PendingEntry::new(self.sessions(), &session.id, actor, "resume", target);
        let result = self.backend().resume(&session.sandbox).await;
        if let Ok(restored) = result {
            entry.bytes = restored;
            self.sessions().set_paused(&session.id, None);
            tracing::info!(session = %session.id, "session resumed");
        }
        let result = result.map(drop).map_err(Error::from);
        entry.end(result.as_ref().err().map(error_text));
        result
    }

    /// Resumes a paused session before an operation reaches its agent.
    pub(crate) async fn resume_if_paused(&self, session: &Session) -> Result<(), Error> {
        if !self.sessions().is_paused(&session.id) {
            return Ok(());
        }
        self.resume_as(session, Actor::service(), AUTOMATIC).await
    }
}
