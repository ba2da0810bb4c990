//! Share links: a capability URL (`/p/{capability}/...`, and `https://{capability}.DOMAIN/`
//! when the operator configured `[ports] share_domain`) that reaches one port of one
//! session without the token, until it expires, is revoked or the session ends. The service
//! keeps only the capability's SHA-256, so neither its memory nor a log can give it back;
//! links live in memory and end with the service. Every connection through a link is an
//! activity entry of the session naming the link (who opened it), never what was sent.

use crate::core::Core;
use crate::error::Error;
use crate::state::activity::{Actor, Caller, PendingEntry};
use crate::state::share_table::Share;
use rand::Rng;
use sandboxd_api::{ShareInfo, ShareList};
use sandboxd_config::{to_hex, token_sha256};
use time::{Duration, OffsetDateTime};
use tokio::io::DuplexStream;

/// How long a link works by default and at most.
pub const MAX_SHARE_SECS: u64 = 3600;
/// Links kept at most, service-wide and per session; per tenant (the administrator's sessions
/// count as one) `policy.max_shares_per_tenant`, so one tenant cannot take every link.
/// Where a link's path starts.
pub const SHARE_PREFIX: &str = "/p/";

impl Core {
    /// Makes a link to `port` of the session, working for `ttl_secs` (at most, and by
    /// default, [`MAX_SHARE_SECS`]). The answer is the only place its path appears.
    pub async fn share_port(
        &self,
        caller: &Caller,
        session_id: &str,
        port: u16,
        ttl_secs: Option<u64>,
    ) -> Result<ShareInfo, Error> {
        let session = self.running_session(caller, session_id, "share_port")?;
        let mut entry = self.entry(caller, &session, "share_port", &port.to_string());
        let result = (|| {
            let ttl = ttl_secs.unwrap_or(MAX_SHARE_SECS);
            if port == 0 || ttl == 0 || ttl > MAX_SHARE_SECS {
                return Err(Error::bad_request(
                    "invalid_request",
                    format!("a link needs a port from 1 to 65535 and ttl_secs from 1 to {MAX_SHARE_SECS}"),
                ));
            }
            let now = OffsetDateTime::now_utc();
            let mut links = self.shares().lock();
            links.retain(|_, share| share.expires_at > now && self.is_open(&share.session_id));
            let of_session = links
                .values()
                .filter(|s| s.session_id == session.id)
                .count();
            let of_tenant = links
                .values()
                .filter(|s| s.tenant == session.tenant)
                .count();
            let policy = &self.config().policy;
            let (per_session, per_tenant, in_all) = (
                policy.max_shares_per_session,
                policy.max_shares_per_tenant,
                policy.max_shares,
            );
            if links.len() >= in_all as usize
                || of_tenant >= per_tenant as usize
                || of_session >= per_session as usize
            {
                return Err(Error::LimitReached {
                    code: "too_many_shares",
                    message: format!(
                        "as many links are open as the service keeps ({per_session} a session, {per_tenant} a tenant, {in_all} in all: policy.max_shares_per_session, max_shares_per_tenant, max_shares); revoke some first"
                    ),
                });
            }
            // 31 bytes: its 62 hex digits fit a DNS label, for a host-name link.
            let capability = to_hex(&rand::rng().random::<[u8; 31]>());
            let share = Share {
                id: to_hex(&rand::rng().random::<[u8; 8]>()),
                session_id: session.id.clone(),
                tenant: session.tenant.clone(),
                port,
                created_at: now,
                expires_at: now + Duration::seconds(ttl as i64),
                created_by: caller.actor().principal,
            };
            let mut info = share.info(Some(format!("{SHARE_PREFIX}{capability}/")));
            info.url = self
                .config()
                .ports
                .share_domain
                .as_ref()
                .map(|domain| format!("https://{capability}.{domain}/"));
            links.insert(token_sha256(&capability), share);
            Ok(info)
        })();
        entry.finish(result)
    }

    /// The session's links that still work (their paths are not kept, so not shown).
    pub fn list_shares(&self, caller: &Caller, session_id: &str) -> Result<ShareList, Error> {
        let session = self.session(caller, session_id, "list_shares")?;
        self.entry(caller, &session, "list_shares", "").end(None);
        let now = OffsetDateTime::now_utc();
        let mut shares: Vec<ShareInfo> = self
            .shares()
            .lock()
            .values()
            .filter(|s| s.session_id == session.id && s.expires_at > now)
            .map(|s| s.info(None))
            .collect();
        shares.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        Ok(ShareList { shares })
    }

    /// Ends a link at once: the next request through it is not found.
    pub fn revoke_share(
        &self,
        caller: &Caller,
        session_id: &str,
        share_id: &str,
    ) -> Result<ShareInfo, Error> {
        let session = self.session(caller, session_id, "revoke_share")?;
        let mut entry = PendingEntry::new(
            self.sessions(),
            &session.id,
            caller.actor(),
            "revoke_share",
            share_id,
        );
        let mut links = self.shares().lock();
        let key = links
            .iter()
            .find(|(_, s)| s.session_id == session.id && s.id == share_id)
            .map(|(key, _)| *key);
        let result = match key.and_then(|key| links.remove(&key)) {
            Some(share) => Ok(share.info(None)),
            None => Err(Error::NotFound(format!(
                "the session has no link {share_id:?}; list them to see which it has"
            ))),
        };
        drop(links);
        entry.finish(result)
    }

    /// A connection to the port a link reaches, for whoever holds `capability`: the link
    /// must not have expired or been revoked, and its session must be open.
    pub async fn connect_shared(&self, capability: &str) -> Result<(u16, DuplexStream), Error> {
        let gone = || {
            Error::NotFound("no such link: it expired, was revoked, or its session ended".into())
        };
        let found = {
            let mut links = self.shares().lock();
            let key = token_sha256(capability);
            match links.get(&key) {
                Some(share) if share.expires_at > OffsetDateTime::now_utc() => {
                    Some((share.id.clone(), share.session_id.clone(), share.port))
                }
                Some(_) => {
                    links.remove(&key);
                    None
                }
                None => None,
            }
        };
        let (share_id, session_id, port) = found.ok_or_else(gone)?;
        let session = match self.sessions().get(&session_id) {
            Ok(session) if session.is_running() => session,
            _ => return Err(gone()),
        };
        let actor = Actor {
            principal: format!("link:{share_id}"),
            interface: "link".into(),
        };
        let entry = PendingEntry::new(
            self.sessions(),
            &session.id,
            actor,
            "share_open",
            &port.to_string(),
        );
        Ok((port, self.open_tunnel(&session, port, entry).await?))
    }

    fn is_open(&self, session_id: &str) -> bool {
        self.sessions()
            .get(session_id)
            .is_ok_and(|s| s.is_running())
    }
}
