//! The sandboxd HTTP service.
