//! An in-memory backend and agent, for fast tests of the core and its faces without a container
//! engine. It is a fake, never a stand-in for the real suites: the agent speaks the real
//! protocol over an in-memory pipe, but "runs" a command by echoing it, and keeps files in a
//! map.
//!
//! What it runs (the script is `command`, or the last element of `argv`): `exit N` exits with
//! N; `sleep` waits until the request's timeout (it is then reported `timed_out`); `oom` exits
//! 137 as a shell does when the kernel OOM-killed its child, reported `oom_killed` as the agent
//! does from the sandbox cgroup's count; `seq N` prints the numbers 1 to N; any other
//! script prints its last word and exits 0 (`echo hello` prints `hello`). With stdin, the
//! input is echoed to stdout instead. An upload the service cancels (over its limit) writes
//! nothing.
//!
//! The fake platform is in `backend.rs`; the fake agent answers each request from its topic's
//! file under `agent/`, as the real agent does from its `serve.rs` table.

mod agent;
mod backend;

pub use backend::FakeBackend;
