//! The labels that mark this service's pods and volume claims, so it finds them again after a
//! restart.

pub const LABEL_MANAGED: &str = "org.sandboxd.managed";
pub const LABEL_INSTANCE: &str = "org.sandboxd.instance";
pub const LABEL_SESSION: &str = "org.sandboxd.session";
pub const LABEL_RUNTIME: &str = "org.sandboxd.runtime";
/// `none` for sandboxes of a `network_mode = "none"` runtime: a deny-all network policy
/// selects them, for clusters whose network plugin gives pods a network.
pub const LABEL_NETWORK: &str = "org.sandboxd.network";
/// On a volume's claim: the service's id of the volume.
pub const LABEL_VOLUME: &str = "org.sandboxd.volume";
