//! What the tests of the per-session and per-tenant tables share: a policy to narrow, and the
//! message of the refusal they expect.

use crate::error::Error;
use sandboxd_api::Policy;

/// The policy of a minimal config, for a test to set the limits it checks.
pub(crate) fn policy() -> Policy {
    sandboxd_config::Config::parse("[runtimes.sh]\nimage = \"x\"\n")
        .unwrap()
        .policy
}

/// The message of `result`, which must be a `LimitReached` refusal with `code`.
pub(crate) fn refusal<T>(result: Result<T, Error>, code: &str) -> String {
    match result {
        Err(Error::LimitReached {
            code: refused,
            message,
        }) => {
            assert_eq!(refused, code);
            message
        }
        Err(other) => panic!("refused otherwise: {other}"),
        Ok(_) => panic!("not refused"),
    }
}
