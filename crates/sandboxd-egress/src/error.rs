//! Why the proxy could not start.

#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("the egress proxy needs at least one upstream name server")]
    NoNameServer,
}
