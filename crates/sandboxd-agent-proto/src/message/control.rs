//! The connection itself: the version an agent announces, how many idle connections it keeps,
//! and the FIFO that wakes it. The hello and claim are variants in `mod.rs`; the secret they
//! carry is in `crate::secret`.

/// The protocol version an agent announces in [`Event::Hello`](super::Event::Hello). Version 2 added the
/// `AgentSecret` to the hello; the service refuses agents that announce less.
pub const PROTOCOL_VERSION: u32 = 2;
/// The FIFO beside the agent socket on which a dialing agent waits while the service is away:
/// the service writes a byte to it once it listens on the socket again (see
/// `host::wake_agent`), so thousands of agents need not keep retrying through a restart. A
/// byte while the agent is connected asks it for one more connection.
pub const AGENT_WAKE_FILE: &str = "agent-wake";
/// Idle connections the agent keeps open to the service, ready for requests; the service
/// asks for more when it finds none (see `host::AgentHub::acquire`). Each costs a thread in
/// the agent, and all of them wake at once when the service goes away.
pub const AGENT_SPARES: usize = 2;
/// The agent's flag, given by a backend whose sandbox kernel has no OOM killer of its own
/// (gVisor's): nothing there is killed by its score, so the agent starts commands with
/// posix_spawn rather than the fork that makes each the first victim (a start of `sh -c true`
/// inside gVisor: 13.6 ms with the fork, 9.8 ms with posix_spawn). A flag on the command line
/// the backend sets, not an environment variable, which an image could set too.
pub const AGENT_NO_OOM_KILLER_FLAG: &str = "--no-oom-killer";
