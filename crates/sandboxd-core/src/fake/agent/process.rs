//! Tracked processes: a fake sandbox has none.

use super::wire::unsupported;
use sandboxd_agent_proto::host::write_json;
use sandboxd_agent_proto::{Event, ProcessEvent, ProcessRequest};
use tokio::io::DuplexStream;

/// The table of the tracked-process requests the fake answers.
pub(super) async fn serve(stream: &mut DuplexStream, request: ProcessRequest) -> Option<()> {
    match request {
        ProcessRequest::ProcessList => list(stream).await,
        ProcessRequest::KillAll => kill_all(stream).await,
        _ => unsupported(stream).await,
    }
}

async fn list(stream: &mut DuplexStream) -> Option<()> {
    let processes = Vec::new();
    write_json(stream, &ProcessEvent::ProcessList { processes })
        .await
        .ok()
}

async fn kill_all(stream: &mut DuplexStream) -> Option<()> {
    let killed = Event::Process(ProcessEvent::KilledAll {
        killed: 0,
        remaining: 0,
    });
    write_json(stream, &killed).await.ok()
}
