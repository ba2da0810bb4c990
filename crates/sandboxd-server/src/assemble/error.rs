//! What can keep the service from starting, worded for the operator: each failure names what
//! it was doing, its cause follows as the error's source (the binary prints the whole chain).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    #[error("cannot create directory {}", path.display())]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot set permissions on {}", path.display())]
    SetPermissions {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot resolve the state directory {}", path.display())]
    ResolveStateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read token_file {}", path.display())]
    ReadTokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot create {}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot locate the sandboxd program")]
    LocateProgram(#[source] std::io::Error),
    #[error("cannot read the in-sandbox agent at {}; build it with scripts/build.sh or point --agent (SANDBOXD_AGENT) at it", path.display())]
    ReadAgent {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the agent at {} is not a static binary, so it would not run in images without a C library; build it with scripts/build.sh", path.display())]
    AgentNotStatic { path: PathBuf },
    #[error("cannot copy the agent to {}", path.display())]
    CopyAgent {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot install the agent at {}", path.display())]
    InstallAgent {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a placeholder key (32 bytes); remove it to make a new one", path.display())]
    PlaceholderKey { path: PathBuf },
    /// A token or a setting the config check refused.
    #[error(transparent)]
    Config(#[from] sandboxd_config::ConfigError),
    /// The Docker engine could not be used or did not answer.
    #[error(transparent)]
    Backend(#[from] sandboxd_backend::BackendError),
    #[error("cannot use the Kubernetes cluster")]
    Kubernetes(#[source] sandboxd_backend::BackendError),
    #[error("cannot open the state database")]
    OpenStore(#[source] sandboxd_store::StoreError),
    #[error("cannot take back the sessions of the last run")]
    TakeBack(#[source] sandboxd_core::Error),
    #[error("cannot encode the engine report")]
    EncodeEngineReport(#[source] serde_json::Error),
    #[error("{0}")]
    IsolationUnavailable(String),
    #[error("cannot start the webhooks")]
    Webhooks(#[source] sandboxd_webhooks::WebhooksError),
    #[error("cannot set up the egress CA for secrets")]
    EgressCa(#[source] sandboxd_egress::CaError),
    #[error("cannot set up the egress network")]
    EgressNetwork(#[source] sandboxd_backend::BackendError),
    #[error("no name server for the egress proxy: set [egress] upstream_dns")]
    EgressNameServer(#[source] sandboxd_egress::EgressError),
    #[error("cannot listen on {address}{purpose}")]
    Listen {
        address: String,
        /// What the address is for, after it (` for the egress proxy`), or nothing for the API.
        purpose: &'static str,
        source: std::io::Error,
    },
    #[error("the HTTP server failed")]
    Serve(#[source] std::io::Error),
}

/// An error and its causes on one line, as the binary prints a failure to start.
pub(super) fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    text
}
