//! Ports: nothing listens in a fake sandbox.

use super::wire::refuse;
use sandboxd_agent_proto::host::write_json;
use sandboxd_agent_proto::{ErrorCode, Event};
use tokio::io::DuplexStream;

pub(super) async fn list(stream: &mut DuplexStream) -> Option<()> {
    let ports = Vec::new();
    write_json(stream, &Event::Ports { ports }).await.ok()
}

pub(super) async fn connect(stream: &mut DuplexStream, port: u16) -> Option<()> {
    let message = format!("nothing answers on port {port}");
    refuse(stream, ErrorCode::ConnectionRefused, &message).await
}
