//! Keeping sessions and sandboxes in step: taking back the sessions of an earlier run at start,
//! expiring idle and old sessions, and ending sessions whose sandbox vanished (a Docker engine
//! restart, a container removed by hand). Every ending says why, in the session's record and in
//! its activity log.

use crate::core::Core;
use crate::error::Error;
use crate::sessions::Session;
use futures_util::future::join_all;
use sandboxd_backend::ExistingSandbox;
use std::collections::HashMap;
use std::time::Duration;
use time::OffsetDateTime;

/// How often sessions are checked for expiry.
const EXPIRY_INTERVAL: Duration = Duration::from_secs(1);
/// How often the engine is asked which sandboxes still run.
const SANDBOX_CHECK_INTERVAL: Duration = Duration::from_secs(5);

/// What [`restore`] did, for the start-up message.
#[derive(Debug, Default)]
pub struct RestoreReport {
    pub resumed: usize,
    pub ended: usize,
    pub orphans_removed: usize,
}

/// Takes back the sessions that were open when the service last stopped: a session whose
/// sandbox still runs is resumed once its agent dials back, any other is ended with the reason;
/// sandboxes of this instance that no open session owns are removed.
impl Core {
    pub async fn restore(&self) -> Result<RestoreReport, Error> {
        let stored = self.sessions().stored_open()?;
        let mut existing: HashMap<String, ExistingSandbox> = self
            .backend()
            .list()
            .await?
            .into_iter()
            .map(|e| (e.sandbox.session_id.clone(), e))
            .collect();
        let mut report = RestoreReport::default();
        let mut to_adopt = Vec::new();
        for session in stored {
            match existing.remove(&session.id) {
                Some(found) if found.running && found.sandbox == session.sandbox => {
                    to_adopt.push(session)
                }
                Some(found) => {
                    self.end(
                        &session,
                        "its sandbox had stopped when the service restarted",
                    )
                    .await;
                    let _ = self.backend().destroy(&found.sandbox).await;
                    report.ended += 1;
                }
                None => {
                    self.end(&session, "its sandbox was gone when the service restarted")
                        .await;
                    report.ended += 1;
                }
            }
        }
        let adopted = join_all(to_adopt.into_iter().map(|session| async move {
            let result = self.backend().adopt(&session.sandbox).await;
            (session, result)
        }))
        .await;
        for (session, result) in adopted {
            match result {
                Ok(()) => {
                    self.sessions().restore(session);
                    report.resumed += 1;
                }
                Err(e) => {
                    tracing::warn!(session = %session.id, error = %e, "cannot resume a session");
                    self.end(
                        &session,
                        "its sandbox's agent did not answer after the service restarted",
                    )
                    .await;
                    let _ = self.backend().destroy(&session.sandbox).await;
                    report.ended += 1;
                }
            }
        }
        for orphan in existing.into_values() {
            self.backend().destroy(&orphan.sandbox).await?;
            report.orphans_removed += 1;
        }
        Ok(report)
    }

    /// Records the end of a session that is not (or no longer) in the running table.
    async fn end(&self, session: &Session, reason: &str) {
        self.sessions().restore(session.clone());
        self.end_for(session, "end", reason).await;
    }

    /// Expires sessions and ends those whose sandbox vanished, until the task is aborted.
    pub async fn maintain(self) {
        let mut expiry = tokio::time::interval(EXPIRY_INTERVAL);
        let mut sandbox_check = tokio::time::interval(SANDBOX_CHECK_INTERVAL);
        loop {
            tokio::select! {
                _ = expiry.tick() => {
                    self.expire().await;
                    self.refill_pools();
                }
                _ = sandbox_check.tick() => self.end_vanished().await,
            }
        }
    }

    async fn expire(&self) {
        let policy = &self.config().policy;
        let idle_limit = time::Duration::seconds(policy.idle_timeout_secs as i64);
        let lifetime = time::Duration::seconds(policy.max_lifetime_secs as i64);
        let now = OffsetDateTime::now_utc();
        for session in self.sessions().running() {
            let reason = if session.age(now) >= lifetime {
                format!(
                    "expired: it reached the maximum lifetime of {} s (policy.max_lifetime_secs)",
                    policy.max_lifetime_secs
                )
            } else if session.idle(now) >= idle_limit {
                format!(
                    "expired: idle for more than {} s (policy.idle_timeout_secs)",
                    policy.idle_timeout_secs
                )
            } else {
                continue;
            };
            self.end_for(&session, "expire", &reason).await;
        }
    }

    async fn end_vanished(&self) {
        let running = self.sessions().running();
        let pooled = self.pools().sandboxes();
        if running.is_empty() && pooled.is_empty() {
            return;
        }
        let live = match self.backend().list().await {
            Ok(list) => list,
            // The engine may be restarting; its sandboxes are judged once it answers again.
            Err(e) => {
                tracing::debug!(error = %e, "cannot list sandboxes");
                return;
            }
        };
        let alive = |sandbox: &sandboxd_backend::Sandbox| {
            live.iter().any(|e| e.running && &e.sandbox == sandbox)
        };
        self.pools().retain(alive);
        for session in running {
            if !alive(&session.sandbox) {
                self.end_for(
                &session,
                "end",
                "its sandbox stopped: its agent exited, or the container was stopped or removed outside sandboxd (for example, the Docker engine restarted)",
            )
            .await;
            }
        }
    }
}
