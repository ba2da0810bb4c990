//! Routes for a session's processes.

use crate::Service;
use axum::Router;

pub fn routes(_service: &Service) -> Router<Service> {
    Router::new()
}
