//! Ports: nothing listens in a fake sandbox.

use super::wire::refuse;
use sandboxd_agent_proto::host::write_json;
use sandboxd_agent_proto::{ErrorCode, PortsEvent, PortsRequest};
use tokio::io::DuplexStream;

/// The table of the port requests the fake answers.
pub(super) async fn serve(stream: &mut DuplexStream, request: PortsRequest) -> Option<()> {
    match request {
        PortsRequest::ListPorts { .. } => list(stream).await,
        PortsRequest::PortConnect { port } => connect(stream, port).await,
    }
}

async fn list(stream: &mut DuplexStream) -> Option<()> {
    let ports = Vec::new();
    write_json(stream, &PortsEvent::Ports { ports }).await.ok()
}

async fn connect(stream: &mut DuplexStream, port: u16) -> Option<()> {
    let message = format!("nothing answers on port {port}");
    refuse(stream, ErrorCode::ConnectionRefused, &message).await
}
