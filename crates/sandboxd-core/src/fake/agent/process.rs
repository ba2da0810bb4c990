//! Tracked processes: a fake sandbox has none.

use sandboxd_agent_proto::host::write_json;
use sandboxd_agent_proto::Event;
use tokio::io::DuplexStream;

pub(super) async fn list(stream: &mut DuplexStream) -> Option<()> {
    let processes = Vec::new();
    write_json(stream, &Event::ProcessList { processes })
        .await
        .ok()
}

pub(super) async fn kill_all(stream: &mut DuplexStream) -> Option<()> {
    let killed = Event::KilledAll {
        killed: 0,
        remaining: 0,
    };
    write_json(stream, &killed).await.ok()
}
