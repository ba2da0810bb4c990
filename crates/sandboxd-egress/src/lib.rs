//! The egress proxy: the only way out of an `egress` sandbox.
//!
//! The service runs it on the host, on the address its sandboxes' network reaches it at. It
//! serves four doors, each given a listener bound by the caller:
//! - the explicit HTTP proxy (`HTTP_PROXY`/`HTTPS_PROXY`): `CONNECT host:port` and plain
//!   requests in absolute form ([`Egress::serve_proxy`]);
//! - plain HTTP redirected from port 80 by the host's firewall, routed by `Host`
//!   ([`Egress::serve_http`]);
//! - TLS redirected from port 443, routed by the ClientHello's server name, without
//!   terminating it ([`Egress::serve_tls`]);
//! - DNS ([`Egress::serve_dns`]): only names the session may reach resolve.
//!
//! Every connection is checked against its session's rules (found by the peer's address), the
//! name is resolved by the service itself, and the connection goes to the very address that
//! was checked: a name resolving to an address of IANA's special-purpose registries (private,
//! loopback, link-local, CGNAT, documentation, multicast...), a cloud metadata address or one
//! of the host's own is refused, so DNS rebinding gains nothing. Each connection allowed
//! or refused is reported to the [`Policy`] (host, port, outcome, bytes; never a payload).
//!
//! Secrets: TLS (redirected, or through `CONNECT`) to a host of one of the session's secrets
//! is the one exception to passing TLS through. With [`Settings::interception`] set, the proxy
//! ends it with a certificate of the service's CA ([`Interception`]), puts the secret's value
//! in for the session's placeholder where it belongs, and sends the request on over its own
//! verified TLS; a placeholder anywhere else refuses the request (`secrets.rs`).

mod addresses;
mod ca;
mod counted;
mod dns;
mod error;
mod forward;
mod http;
mod intercept;
mod limits;
mod policy;
mod proxy;
mod refusals;
mod resolve;
mod secrets;
mod settings;
mod state;
mod tls;

pub use addresses::denied_reason;
pub use ca::{CaError, Interception};
pub use error::EgressError;
pub use policy::{ConnectionRecord, Door, Policy, Refusal, SecretRecord, SessionRules};
pub use proxy::Egress;
pub use secrets::SessionSecret;
pub use settings::Settings;
