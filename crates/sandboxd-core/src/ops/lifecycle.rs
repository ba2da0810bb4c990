//! Opening, reading and closing sessions, the figures across them, the runtimes a caller may
//! open, and keeping the warm pools full.

use crate::core::Core;
use crate::error::Error;
use crate::ops::egress;
use crate::state::activity::{self, elapsed_ms, Actor, Caller, Outcome};
use crate::state::auth::Principal;
use crate::state::images;
use crate::state::pool::Pooled;
use crate::state::sessions::{self, Reservation, Session, TenantSlot};
use futures_util::future::join_all;
use futures_util::Stream;
use sandboxd_api::{
    ActivityList, ConfigView, CreateSession, RuntimeBuildEvent, RuntimeList, SessionChange,
    SessionInfo, SessionList, Stats,
};
use sandboxd_api::{Isolation, Remedy};
use sandboxd_backend::SandboxSpec;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest tenant name and label sizes a client may attach to a session.
const MAX_TENANT_LEN: usize = 128;
const MAX_LABELS: usize = 32;
const MAX_LABEL_KEY_LEN: usize = 64;
const MAX_LABEL_VALUE_LEN: usize = 256;
/// Ended sessions listed with `include_ended`.
const ENDED_LISTED: u32 = 100;
/// How long a stopping service waits for a pool's create in flight, to remove its sandbox.
const FILLER_WAIT: Duration = Duration::from_secs(30);

impl Core {
    /// Opens a session: a sandbox of an allowed runtime (the default one when none is named),
    /// from the warm pool when one is ready. A tenant's place under its quota and a slot under
    /// `max_sessions` are taken before anything starts and given back if it fails.
    pub async fn open_session(
        &self,
        caller: &Caller,
        request: CreateSession,
    ) -> Result<SessionInfo, Error> {
        self.open_session_from(caller, request, None).await
    }

    /// Opens a session, its sandbox started from the copy of memory `memory_from` names
    /// (never a pooled one) when given.
    pub(crate) async fn open_session_from(
        &self,
        caller: &Caller,
        mut request: CreateSession,
        memory_from: Option<&str>,
    ) -> Result<SessionInfo, Error> {
        check_create(&request)?;
        if let Some(snapshot) = request.snapshot.take() {
            return Box::pin(self.open_from_snapshot(caller, request, &snapshot)).await;
        }
        let config = self.config();
        let alias = request
            .runtime
            .unwrap_or_else(|| self.default_runtime(&caller.principal));
        let runtime = config
            .runtime(&alias)
            .filter(|_| self.may_use(&caller.principal, &alias))
            .ok_or_else(|| {
                Error::bad_request(
                    "unknown_runtime",
                    format!(
                        "runtime \"{alias}\" is not on the allowlist; allowed: {}",
                        self.usable_runtimes(&caller.principal).join(", ")
                    ),
                )
                .with_remedy(Remedy::ListRuntimes)
            })?;
        let egress = egress::narrow(runtime, request.egress.take())?;
        // A tenant's sessions carry its name, whatever the request says.
        let tenant = caller
            .principal
            .tenant()
            .map(str::to_string)
            .or(request.tenant);
        let tenant_slot = self.admit_tenant(&caller.principal)?;
        let started = Instant::now();
        // A pooled sandbox gets the session's volumes mounted where the backend can mount into
        // a started one; elsewhere a session with volumes gets a sandbox of its own.
        let poolable = memory_from.is_none()
            && (request.volumes.is_empty() || self.backend().mounts_into_started(&runtime.limits));
        let mut pooled = poolable.then(|| self.pools().take(&alias)).flatten();
        let session_id = pooled
            .as_ref()
            .map_or_else(sessions::new_session_id, |p| p.sandbox.session_id.clone());
        let planned = match request.volumes.is_empty() {
            true => None,
            false => match self
                .plan_mounts(caller, tenant.as_deref(), &session_id, &request.volumes)
                .await
            {
                Ok(planned) => Some(planned),
                Err(e) => {
                    if let Some(Err(unused)) = pooled.map(|p| self.pools().push(&alias, p)) {
                        self.discard_pooled(vec![unused]);
                    }
                    return Err(e);
                }
            },
        };
        if let (Some(taken), Some(planned)) = (&pooled, &planned) {
            if let Err(e) = self
                .backend()
                .mount_volumes(&taken.sandbox, &planned.mounts)
                .await
            {
                tracing::warn!(session = %session_id, error = %e, "a pooled sandbox did not take the volumes; starting one with them");
                if let Some(spoiled) = pooled.take() {
                    // Gone before a sandbox of the same session id is made in its place.
                    self.backend().destroy(&spoiled.sandbox).await?;
                }
            }
        }
        let (reservation, sandbox) = match pooled {
            Some(pooled) => (pooled.reservation, pooled.sandbox),
            None => {
                // Pulled or built first if need be (that may take minutes), holding no slot.
                let image = self
                    .images()
                    .ensure(self.shared_backend(), config, runtime)
                    .await?;
                let reservation = self.reserve_evicting_pooled()?;
                let spec = SandboxSpec {
                    session_id,
                    runtime: alias.clone(),
                    image,
                    limits: runtime.limits.clone(),
                    volumes: planned
                        .as_ref()
                        .map(|p| p.mounts.clone())
                        .unwrap_or_default(),
                    memory_from: memory_from.map(str::to_string),
                };
                let _judged = self.restoring().read().await;
                (reservation, self.backend().create(&spec).await?)
            }
        };
        self.refill_pools();
        let session = Session::new(
            sandbox.session_id.clone(),
            alias,
            tenant,
            request.labels,
            sandbox,
        );
        tracing::info!(session = %session.id, runtime = %session.runtime, "session opened");
        let info = self.info(&session).await;
        if let Err(e) = self
            .sessions()
            .insert(reservation, tenant_slot, session.clone())
        {
            // Not recorded means not reachable after a restart: do not leave it running.
            let _ = self.backend().destroy(&session.sandbox).await;
            return Err(e);
        }
        if let Some(rules) = egress {
            if let Err(e) = self.set_session_egress(&session.id, rules) {
                // Running with the runtime's wider list is not what was asked for.
                let _ = self
                    .end_session(&session.id, "its egress list could not be kept")
                    .await;
                return Err(e);
            }
        }
        if let Some(planned) = planned {
            self.log_mounts(caller, &session.id, &planned);
        }
        // The tier is named when it is not the default, so the log says which kernel ran it.
        let target = match runtime.limits.isolation {
            Isolation::Runc => session.runtime.clone(),
            tier => format!("{} ({})", session.runtime, tier.as_str()),
        };
        activity::append(
            self.sessions(),
            &session.id,
            &caller.actor(),
            "open",
            &target,
            Outcome::ok(elapsed_ms(started)),
        );
        Ok(info)
    }

    /// The running sessions the caller may see, and with `include_ended` the most recently
    /// ended ones.
    pub async fn list_sessions(
        &self,
        caller: &Caller,
        include_ended: bool,
    ) -> Result<SessionList, Error> {
        let mut sessions = self.sessions().running();
        if include_ended {
            sessions.extend(self.sessions().ended(ENDED_LISTED)?);
        }
        if let Some(tenant) = caller.principal.tenant() {
            sessions.retain(|s| s.tenant.as_deref() == Some(tenant));
        }
        let infos = join_all(sessions.iter().map(|s| self.info(s))).await;
        Ok(SessionList { sessions: infos })
    }

    /// One session, running or ended.
    pub async fn get_session(&self, caller: &Caller, id: &str) -> Result<SessionInfo, Error> {
        let session = self.session(caller, id, "get_session")?;
        Ok(self.info(&session).await)
    }

    /// Closes a session at once (no grace period); closing an ended one again is no error.
    pub async fn close_session(&self, caller: &Caller, id: &str) -> Result<SessionInfo, Error> {
        self.session(caller, id, "close")?;
        let started = Instant::now();
        let session = self.end_session(id, "closed by the client").await?;
        tracing::info!(session = %id, "session closed");
        activity::append(
            self.sessions(),
            id,
            &caller.actor(),
            "close",
            &session.runtime,
            Outcome::ok(elapsed_ms(started)),
        );
        Ok(session.info(Default::default()))
    }

    /// The sessions the caller may see opening and ending, from now on, as they happen. A
    /// follower too slow to keep up gets `None` (some changes were missed: list them again).
    pub fn session_changes(
        &self,
        caller: &Caller,
    ) -> impl Stream<Item = Option<SessionChange>> + Send + 'static {
        use tokio::sync::broadcast::error::RecvError;
        let tenant = caller.principal.tenant().map(str::to_string);
        futures_util::stream::unfold(
            (self.sessions().changes(), tenant),
            |(mut changes, tenant)| async move {
                loop {
                    let next = match changes.recv().await {
                        Ok(change) if tenant.is_some() && change.tenant != tenant => continue,
                        Ok(change) => Some(change),
                        Err(RecvError::Lagged(_)) => None,
                        Err(RecvError::Closed) => return None,
                    };
                    return Some((next, (changes, tenant)));
                }
            },
        )
    }

    /// Gives a running session an idle expiry of its own, counted from now: from 1 s up to
    /// the policy's `idle_timeout_secs` (a longer one is refused, never cut).
    pub async fn set_idle_timeout(
        &self,
        caller: &Caller,
        id: &str,
        secs: u64,
    ) -> Result<SessionInfo, Error> {
        let most = self.config().policy.idle_timeout_secs;
        if secs == 0 || secs > most {
            return Err(Error::bad_request(
                "timeout_too_large",
                format!(
                    "a timeout of {secs} s is outside 1..={most} s, the service's idle timeout (policy.idle_timeout_secs)"
                ),
            ));
        }
        self.running_session(caller, id, "set_timeout")?;
        let started = Instant::now();
        let session = self
            .sessions()
            .set_idle_timeout(id, secs)
            .ok_or_else(|| sessions::not_found(id))?;
        activity::append(
            self.sessions(),
            id,
            &caller.actor(),
            "set_timeout",
            &format!("{secs} s"),
            Outcome::ok(elapsed_ms(started)),
        );
        Ok(self.info(&session).await)
    }

    /// Adds to the environment every later command of a running session starts with (a
    /// name set again takes the new value; each command's own variables win); checked
    /// against the policy like a command's.
    pub fn set_session_env(
        &self,
        caller: &Caller,
        id: &str,
        env: BTreeMap<String, String>,
    ) -> Result<(), Error> {
        let session = self.running_session(caller, id, "set_env")?;
        let started = Instant::now();
        crate::ops::exec::plan(
            crate::ops::exec::Command {
                argv: Some(vec!["env".into()]),
                env: env.clone(),
                timeout_secs: 1,
                ..Default::default()
            },
            &self.config().policy,
        )?;
        let names = env.len();
        let mut merged = session.env;
        merged.extend(env);
        self.sessions()
            .set_env(id, merged)
            .ok_or_else(|| sessions::not_found(id))?;
        activity::append(
            self.sessions(),
            id,
            &caller.actor(),
            "set_env",
            &format!("{names} variables"),
            Outcome::ok(elapsed_ms(started)),
        );
        Ok(())
    }

    /// A session's activity log, newest first (also after it ended).
    pub fn activity(&self, caller: &Caller, id: &str) -> Result<ActivityList, Error> {
        self.session(caller, id, "activity")?;
        Ok(ActivityList {
            entries: self.sessions().store().activity(id)?,
        })
    }

    /// The figures across the sessions the caller may see: all of them, or its tenant's.
    pub async fn stats(&self, caller: &Caller) -> Stats {
        let tenant = caller.principal.tenant();
        let running = self
            .sessions()
            .running_where(|s| tenant.is_none() || s.tenant.as_deref() == tenant);
        let usages = join_all(running.iter().map(|s| self.backend().usage(&s.sandbox))).await;
        let (memory_bytes, processes) = usages
            .into_iter()
            .flatten()
            .fold((0, 0), |(m, p), u| (m + u.memory_bytes, p + u.processes));
        Stats {
            sessions: u32::try_from(running.len()).unwrap_or(u32::MAX),
            pooled: self.pools().count(),
            max_sessions: self.config().max_sessions,
            memory_bytes,
            processes,
            runtimes_allowed: u32::try_from(self.usable_runtimes(&caller.principal).len())
                .unwrap_or(u32::MAX),
        }
    }

    /// The runtimes the caller may open, with where each one's image stands.
    pub async fn runtimes(&self, caller: &Caller) -> RuntimeList {
        let config = self.config();
        let runtimes = config
            .runtimes
            .values()
            .filter(|runtime| self.may_use(&caller.principal, &runtime.name))
            .map(|runtime| self.images().with_status(self.backend(), config, runtime));
        RuntimeList {
            default_runtime: self.default_runtime(&caller.principal),
            runtimes: join_all(runtimes).await,
        }
    }

    /// Makes a runtime's image available now and follows it (administrator only).
    pub fn build_runtime(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<impl Stream<Item = RuntimeBuildEvent> + Send + 'static, Error> {
        caller.principal.require_admin("building a runtime")?;
        let config = self.config();
        let runtime = config.runtime(name).cloned().ok_or_else(|| {
            Error::NotFound(format!(
                "no runtime \"{name}\" on the allowlist; configured: {}",
                config.runtime_names()
            ))
        })?;
        self.images().follow(self.shared_backend(), config, runtime)
    }

    /// The configuration in force, token redacted (administrator only).
    pub fn config_view(&self, caller: &Caller) -> Result<ConfigView, Error> {
        caller.principal.require_admin("the service config")?;
        Ok(self.config().view())
    }

    /// Takes the token and answers who it belongs to (see [`crate::state::auth::Tokens`]).
    pub fn authenticate(
        &self,
        presented: &str,
        address: Option<std::net::IpAddr>,
    ) -> Result<Principal, Error> {
        self.tokens()
            .authenticate(self.config(), presented, address)
    }

    pub(crate) async fn info(&self, session: &Session) -> SessionInfo {
        let usage = if session.is_running() {
            self.backend()
                .usage(&session.sandbox)
                .await
                .unwrap_or_default()
        } else {
            Default::default()
        };
        session.info(usage)
    }

    /// Ends a session and removes its sandbox; an ended one is returned as it is.
    pub(crate) async fn end_session(&self, id: &str, reason: &str) -> Result<Session, Error> {
        match self.sessions().end(id, reason) {
            Some(session) => {
                self.contexts().forget_session(id);
                self.shares().forget_session(id);
                self.narrowed().remove(id);
                self.backend().destroy(&session.sandbox).await?;
                if let Err(e) = self.sessions().store().delete_mounts(id) {
                    tracing::warn!(session = %id, error = %e, "cannot forget the session's volume mounts");
                }
                Ok(session)
            }
            None => self.sessions().get(id),
        }
    }

    /// Ends a session for a reason of the service's own, and logs it.
    pub(crate) async fn end_for(&self, session: &Session, action: &str, reason: &str) {
        let started = Instant::now();
        let result = self.end_session(&session.id, reason).await;
        let elapsed = elapsed_ms(started);
        let outcome = match result {
            Ok(_) => Outcome::failed(elapsed, reason),
            Err(e) => Outcome::failed(
                elapsed,
                format!("{reason}; removing the sandbox failed: {e}"),
            ),
        };
        activity::append(
            self.sessions(),
            &session.id,
            &Actor::service(),
            action,
            &session.runtime,
            outcome,
        );
        tracing::info!(session = %session.id, reason, "session ended");
    }

    /// Whether the principal may open sessions of a runtime: a tenant only its allowed ones.
    fn may_use(&self, principal: &Principal, runtime: &str) -> bool {
        principal
            .tenant()
            .and_then(|name| self.config().tenants.get(name))
            .is_none_or(|tenant| tenant.may_use(runtime))
    }

    /// The runtime a create naming none opens: the service's default, or for a tenant that
    /// may not use it, the first runtime it may use.
    fn default_runtime(&self, principal: &Principal) -> String {
        let default = &self.config().default_runtime;
        if self.may_use(principal, default) {
            return default.clone();
        }
        self.usable_runtimes(principal)
            .first()
            .map_or_else(|| default.clone(), |name| name.to_string())
    }

    /// The runtimes the principal may open sessions of: a tenant only its allowed ones.
    pub fn usable_runtimes(&self, principal: &Principal) -> Vec<&str> {
        self.config()
            .runtimes
            .keys()
            .filter(|name| self.may_use(principal, name))
            .map(String::as_str)
            .collect()
    }

    /// A place under the caller's tenant quota, if it has one.
    fn admit_tenant(&self, principal: &Principal) -> Result<Option<TenantSlot>, Error> {
        let Some(tenant) = principal
            .tenant()
            .and_then(|t| self.config().tenants.get(t))
        else {
            return Ok(None);
        };
        self.sessions()
            .admit_tenant(&tenant.name, tenant.max_sessions)
            .map(Some)
    }

    /// A slot for a new session; when the service is full, a pooled sandbox gives up its slot.
    fn reserve_evicting_pooled(&self) -> Result<Reservation, Error> {
        loop {
            match self.sessions().reserve() {
                Ok(reservation) => return Ok(reservation),
                Err(full) => match self.pools().evict_one() {
                    Some(pooled) => self.discard_pooled(vec![pooled]),
                    None => return Err(full),
                },
            }
        }
    }

    /// Starts fillers for the runtimes whose pool is below its size, one per runtime.
    pub(crate) fn refill_pools(&self) {
        for runtime in self.config().runtimes.values() {
            if runtime.pool_size == 0
                || self.pools().count_for(&runtime.name) >= runtime.pool_size as usize
                || !self.pools().start_filling(&runtime.name)
            {
                continue;
            }
            let core = self.clone();
            let name = runtime.name.clone();
            tokio::spawn(async move {
                core.fill_pool(&name).await;
                core.pools().done_filling(&name);
            });
        }
    }

    /// Starts sandboxes of the runtime until its pool is full. A recipe's runtime fills once
    /// its image is built (by a session or `POST /v1/runtimes/NAME/build`): a pool never
    /// starts a build, which would be retried at every refill when it fails.
    async fn fill_pool(&self, runtime_name: &str) {
        let config = self.config();
        let Some(runtime) = config.runtime(runtime_name) else {
            return;
        };
        let Some(image) = images::image_of(config, runtime) else {
            return;
        };
        if runtime.image.is_none() && !self.backend().has_image(&image).await.unwrap_or(false) {
            return;
        }
        while self.pools().count_for(runtime_name) < runtime.pool_size as usize {
            // A full service leaves the pool short until sessions close.
            let Ok(reservation) = self.sessions().reserve() else {
                return;
            };
            let spec = SandboxSpec {
                session_id: sessions::new_session_id(),
                runtime: runtime_name.to_string(),
                image: image.clone(),
                limits: runtime.limits.clone(),
                volumes: Vec::new(),
                memory_from: None,
            };
            let created = {
                let _judged = self.restoring().read().await;
                self.backend().create(&spec).await
            };
            match created {
                Ok(sandbox) => {
                    self.warm_desktop(&sandbox, runtime_name).await;
                    let pooled = Pooled {
                        sandbox,
                        reservation,
                    };
                    if let Err(late) = self.pools().push(runtime_name, pooled) {
                        // The service is stopping: it belongs to no session.
                        let _ = self.backend().destroy(&late.sandbox).await;
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!(runtime = runtime_name, error = %e, "cannot fill the warm pool; trying again later");
                    return;
                }
            }
        }
    }

    /// Removes pooled sandboxes in the background (their slots are free at once).
    pub(crate) fn discard_pooled(&self, pooled: Vec<Pooled>) {
        for Pooled {
            sandbox,
            reservation,
        } in pooled
        {
            drop(reservation);
            let core = self.clone();
            tokio::spawn(async move {
                if let Err(e) = core.backend().destroy(&sandbox).await {
                    tracing::warn!(sandbox = %sandbox.session_id, error = %e, "cannot remove a pooled sandbox");
                }
            });
        }
    }

    /// Removes every pooled sandbox, at shutdown: they belong to no session. A filler's
    /// create in flight is waited for (at most [`FILLER_WAIT`]), and its sandbox removed too.
    pub async fn drain_pools(&self) {
        let pooled = self.pools().drain();
        join_all(pooled.iter().map(|p| self.backend().destroy(&p.sandbox))).await;
        let deadline = Instant::now() + FILLER_WAIT;
        while self.pools().any_filling() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until every activity entry recorded so far is in the store, at shutdown: they
    /// are written off the request path.
    pub fn flush_activity(&self) {
        self.sessions().store().flush();
    }
}

/// Checks what a create request names; unknown fields were refused when it was read.
fn check_create(request: &CreateSession) -> Result<(), Error> {
    if request.snapshot.is_some() && !request.volumes.is_empty() {
        return Err(Error::bad_request(
            "invalid_request",
            "`volumes` cannot be mounted in a session opened from a snapshot; open it without them",
        ));
    }
    crate::ops::volume_mounts::check_requests(&request.volumes)?;
    if let Some(tenant) = &request.tenant {
        if tenant.is_empty()
            || tenant.len() > MAX_TENANT_LEN
            || tenant.chars().any(char::is_control)
        {
            return Err(Error::bad_request(
                "invalid_request",
                format!(
                    "`tenant` must be 1 to {MAX_TENANT_LEN} characters without control characters"
                ),
            ));
        }
    }
    let labels_ok = request.labels.len() <= MAX_LABELS
        && request.labels.iter().all(|(k, v)| {
            !k.is_empty() && k.len() <= MAX_LABEL_KEY_LEN && v.len() <= MAX_LABEL_VALUE_LEN
        });
    if !labels_ok {
        return Err(Error::bad_request(
            "invalid_request",
            format!("at most {MAX_LABELS} labels, keys 1 to {MAX_LABEL_KEY_LEN} bytes, values up to {MAX_LABEL_VALUE_LEN} bytes"),
        ));
    }
    Ok(())
}
