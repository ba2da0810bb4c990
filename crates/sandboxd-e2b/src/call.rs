//! A call on one sandbox's envd, once `envd::authenticate` has checked its access token: the
//! caller it acts for and the sandbox it names.

use sandboxd_core::Caller;

/// A call on one sandbox's envd, authenticated.
pub struct SandboxCall {
    pub caller: Caller,
    pub id: String,
}
