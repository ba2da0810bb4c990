//! The adversarial suite: attacks from inside a sandbox and against the API, run against the
//! real engine through the real service. Each test is bounded in time, asserts the safe
//! outcome it expects, prints one line `attack: NAME -> OBSERVED OUTCOME`, and ends with a
//! check of the host: it still forks quickly, the sandboxes hold nothing on its disk (the
//! engine's and the cluster's directories are compared too, strictly in CI: see
//! [`strict_disk`](harness::strict_disk)), the service
//! closes every session and no container of the test's service is left once it is gone.
//!
//! The C programs the attacks run (a fork bomb, an impostor agent) are in `tests/adversarial/`
//! and are compiled on the host with `gcc -static`, then uploaded into the sandbox. Nothing
//! here sends traffic beyond this machine: the network attempts are made from inside a
//! sandbox with network `none`, where they fail locally.

mod common;

#[path = "adversarial/api.rs"]
mod api;
#[path = "adversarial/escapes.rs"]
mod escapes;
#[path = "adversarial/exhaustion.rs"]
mod exhaustion;
#[path = "adversarial/harness.rs"]
mod harness;
#[path = "adversarial/own_agent.rs"]
mod own_agent;
#[path = "adversarial/sandbox_helpers.rs"]
mod sandbox_helpers;
#[path = "adversarial/tmpfs.rs"]
mod tmpfs;
