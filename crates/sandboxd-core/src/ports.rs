//! A session's ports: those listening in the sandbox, and connections to one, carried by the
//! sandbox's agent from its own loopback, so a port is reachable whatever the network mode and
//! the sandbox needs no network. Each connection is one activity entry (the port and the
//! bytes, never what they were); a session has at most [`MAX_PORT_CONNECTIONS`] at once.

use crate::activity::{Caller, PendingEntry};
use crate::agent::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::files::STEP_TIMEOUT;
use crate::sessions::Session;
use sandboxd_agent_proto as proto;
use sandboxd_api::{PortInfo, PortList};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::DuplexStream;

/// Connections to a session's ports open at once, at most: each holds one of the agent's
/// connections (it has 64) and a thread in the sandbox.
pub const MAX_PORT_CONNECTIONS: usize = 32;
/// Ports a listing returns at most.
const MAX_PORTS: u32 = 1024;
/// Bytes buffered between a connection's user and its tunnel, each way.
const TUNNEL_BUFFER: usize = 64 * 1024;

/// Open port connections per session.
#[derive(Default, Clone)]
pub struct PortConnections {
    open: Arc<Mutex<HashMap<String, usize>>>,
}

/// One of a session's connection slots; dropping it frees the slot.
struct Slot {
    connections: PortConnections,
    session_id: String,
}

impl PortConnections {
    fn take(&self, session_id: &str) -> Result<Slot, Error> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(session_id.to_string()).or_default();
        if *count >= MAX_PORT_CONNECTIONS {
            return Err(Error::LimitReached {
                code: "too_many_port_connections",
                message: format!(
                    "the session has {MAX_PORT_CONNECTIONS} connections to its ports open, as many as it may; close some first"
                ),
            });
        }
        *count += 1;
        Ok(Slot {
            connections: self.clone(),
            session_id: session_id.to_string(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .connections
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.session_id) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.session_id);
            }
        }
    }
}

impl Core {
    /// The TCP ports listening in the sandbox, with the processes holding them.
    pub async fn list_ports(&self, caller: &Caller, session_id: &str) -> Result<PortList, Error> {
        let session = self.running_session(caller, session_id, "list_ports")?;
        let mut entry = self.entry(caller, &session, "list_ports", "");
        let result = async {
            let agent = self.connect(&session).await?;
            proto::list_ports(agent, MAX_PORTS, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::Port, e))
        }
        .await;
        let ports = entry.finish(result)?;
        Ok(PortList {
            ports: ports
                .into_iter()
                .map(|p| PortInfo {
                    port: p.port,
                    address: p.address,
                    pid: p.pid,
                    program: p.program,
                })
                .collect(),
        })
    }

    /// A connection to `port` on the sandbox's loopback, as a byte stream. It stays open
    /// until the caller drops it or the port closes it; its activity entry is recorded then.
    pub async fn connect_port(
        &self,
        caller: &Caller,
        session_id: &str,
        port: u16,
    ) -> Result<DuplexStream, Error> {
        let session = self.running_session(caller, session_id, "port_connect")?;
        let entry = self.entry(caller, &session, "port_connect", &port.to_string());
        self.open_tunnel(&session, port, entry).await
    }

    /// Opens a tunnel to `port` and carries it in a task that records `entry` at its end.
    pub(crate) async fn open_tunnel(
        &self,
        session: &Session,
        port: u16,
        mut entry: PendingEntry,
    ) -> Result<DuplexStream, Error> {
        let opened = async {
            if port == 0 {
                return Err(Error::bad_request("invalid_port", "port 0 is not a port"));
            }
            let slot = self.port_connections().take(&session.id)?;
            let agent = self.connect(session).await?;
            let tunnel = proto::connect_port(agent, port, STEP_TIMEOUT)
                .await
                .map_err(|e| agent_error(Operation::Port, e))?;
            Ok((slot, tunnel))
        }
        .await;
        let (slot, tunnel) = opened.map_err(|e| entry.fail(e))?;
        let (ours, theirs) = tokio::io::duplex(TUNNEL_BUFFER);
        tokio::spawn(async move {
            let carried = proto::carry(tunnel, theirs, |_| async {}).await;
            entry.bytes = Some(carried.to_port + carried.from_port);
            entry.end(None);
            drop(slot);
        });
        Ok(ours)
    }
}
