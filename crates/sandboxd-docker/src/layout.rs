//! The fixed points of every sandbox: the uid its processes run as, and where the agent and its
//! socket directory are mounted.

/// The uid and gid every sandbox process runs as: high, so it owns nothing on the host.
pub const SANDBOX_UID: u32 = 61000;
pub(crate) const AGENT_IN_SANDBOX: &str = "/.sandboxd-agent";
pub(crate) const SOCKET_DIR_IN_SANDBOX: &str = "/.sandboxd";
