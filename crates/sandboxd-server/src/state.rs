//! The state the router hands every handler.

use crate::metrics::Metrics;
use sandboxd_core::Core;

/// What the handlers share: the core, and the request figures for `/metrics`.
#[derive(Clone)]
pub struct AppState {
    pub(crate) core: Core,
    pub(crate) metrics: Metrics,
}
