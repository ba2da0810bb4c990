//! A session's ports: those listening in the sandbox, and connections to one, carried by the
//! sandbox's agent from its own loopback, so a port is reachable whatever the network mode and
//! the sandbox needs no network. Each connection is one activity entry (the port and the
//! bytes, never what they were). A session has at most `policy.max_port_connections` open at
//! once, and together they carry at most `policy.port_bytes_per_sec`.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::ops::files::STEP_TIMEOUT;
use crate::state::activity::{Caller, PendingEntry};
use crate::state::sessions::Session;
use sandboxd_agent_proto as proto;
use sandboxd_api::{PortInfo, PortList};
use tokio::io::DuplexStream;

/// Ports a listing returns at most.
const MAX_PORTS: u32 = 1024;
/// Bytes buffered between a connection's user and its tunnel, each way.
const TUNNEL_BUFFER: usize = 64 * 1024;

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
            let slot = self.port_connections().take(
                &session.id,
                session.tenant.as_deref(),
                &self.config().policy,
            )?;
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
            let pace = slot.pace.clone();
            let carried = proto::carry(tunnel, theirs, |bytes| {
                let pace = pace.clone();
                async move { pace.take(bytes).await }
            })
            .await;
            entry.bytes = Some(carried.to_port + carried.from_port);
            entry.end(None);
            drop(slot);
        });
        Ok(ours)
    }
}
