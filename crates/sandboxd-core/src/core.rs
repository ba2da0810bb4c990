//! [`Core`]: the config, the backend and the leaf parts the session operations share, and
//! their accessors. The operations, the check of which sessions a caller may reach among
//! them, are `impl Core` blocks in `ops/`.

use crate::error::Error;
use crate::state::activity::Caller;
use crate::state::context_table::Contexts;
use crate::state::narrowed_lists::NarrowedLists;
use crate::state::port_connections::PortConnections;
use crate::state::sessions::Sessions;
use crate::state::share_table::Shares;
use crate::state::snapshot_files::SnapshotFiles;
use crate::state::snapshot_files::Snapshots;
use crate::state::volume_table::VolumeTable;
use crate::state::watch_table::Watches;
use crate::state::{auth, images, pool, tickets};
use sandboxd_backend::Backend;
use sandboxd_config::Config;
use sandboxd_store::Store;
use std::sync::{Arc, OnceLock};

/// The session operations over one backend, one config and one store. Cheap to clone.
#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    backend: Arc<dyn Backend>,
    sessions: Sessions,
    pools: pool::Pools,
    images: images::Images,
    auth: auth::Tokens,
    tickets: tickets::Tickets,
    port_connections: PortConnections,
    shares: Shares,
    watches: Watches,
    snapshots: Snapshots,
    contexts: Contexts,
    egress: NarrowedLists,
    volumes: VolumeTable,
    /// What the backend said about its engine at start (`GET /v1/engine`).
    engine: OnceLock<serde_json::Value>,
    /// Held for writing while the sessions taken back at start are judged against the
    /// engine's sandboxes ([`Core::reconcile`]); sandbox creations and the checks for vanished
    /// sandboxes read it, so none is made meanwhile (it would look unowned) and none is judged
    /// twice.
    restoring: Arc<tokio::sync::RwLock<()>>,
}

impl Core {
    /// `token` is the service token, the administrator's credential.
    pub fn new(
        config: Config,
        token: String,
        backend: Arc<dyn Backend>,
        store: Arc<Store>,
    ) -> Core {
        let snapshot_files = SnapshotFiles::new(store.directory().join("snapshots"));
        let sessions = Sessions::new(store, config.max_sessions);
        Core {
            inner: Arc::new(Inner {
                auth: auth::Tokens::new(token),
                tickets: tickets::Tickets::new(tickets::TICKET_LIFETIME, tickets::MAX_OUTSTANDING),
                snapshots: Snapshots::new(snapshot_files),
                config,
                backend,
                sessions,
                pools: pool::Pools::default(),
                images: images::Images::default(),
                port_connections: PortConnections::default(),
                shares: Shares::default(),
                watches: Watches::default(),
                contexts: Default::default(),
                engine: OnceLock::new(),
                egress: NarrowedLists::default(),
                volumes: VolumeTable::default(),
                restoring: Arc::default(),
            }),
        }
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Keeps what the backend reported about its engine; the first report set stays.
    pub fn set_engine_report(&self, report: serde_json::Value) {
        let _ = self.inner.engine.set(report);
    }

    /// The engine report, for the administrator.
    pub fn engine_report(&self, caller: &Caller) -> Result<serde_json::Value, Error> {
        caller.principal.require_admin("the engine report")?;
        self.inner
            .engine
            .get()
            .cloned()
            .ok_or_else(|| Error::NotFound("the backend reported nothing about its engine".into()))
    }

    pub(crate) fn backend(&self) -> &dyn Backend {
        self.inner.backend.as_ref()
    }

    /// The backend, shared with tasks that outlive a call (image provisioning).
    pub(crate) fn shared_backend(&self) -> &Arc<dyn Backend> {
        &self.inner.backend
    }

    pub(crate) fn restoring(&self) -> &Arc<tokio::sync::RwLock<()>> {
        &self.inner.restoring
    }

    pub(crate) fn images(&self) -> &images::Images {
        &self.inner.images
    }

    pub(crate) fn tokens(&self) -> &auth::Tokens {
        &self.inner.auth
    }

    pub(crate) fn tickets(&self) -> &tickets::Tickets {
        &self.inner.tickets
    }

    pub(crate) fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    pub(crate) fn port_connections(&self) -> &PortConnections {
        &self.inner.port_connections
    }

    pub(crate) fn shares(&self) -> &Shares {
        &self.inner.shares
    }

    pub(crate) fn watches(&self) -> &Watches {
        &self.inner.watches
    }

    pub(crate) fn contexts(&self) -> &Contexts {
        &self.inner.contexts
    }

    pub(crate) fn snapshots(&self) -> &Snapshots {
        &self.inner.snapshots
    }

    pub(crate) fn narrowed(&self) -> &NarrowedLists {
        &self.inner.egress
    }

    pub(crate) fn volumes(&self) -> &VolumeTable {
        &self.inner.volumes
    }

    pub(crate) fn pools(&self) -> &pool::Pools {
        &self.inner.pools
    }
}
