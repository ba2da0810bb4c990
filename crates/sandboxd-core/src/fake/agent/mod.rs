//! The fake agent: it speaks the real protocol over an in-memory pipe, one request per
//! connection, and answers each request from its topic's file: [`serve`] passes a topic's
//! requests to that file, whose own table answers them (as the real agent's `serve.rs` and
//! topic modules do). Requests it has no answer for are refused as `bad_request`.

mod archive;
mod exec;
mod files;
mod ports;
mod process;
mod store;
mod wire;

pub(super) use archive::ArchiveGate;
pub(super) use store::Files;

use sandboxd_agent_proto::host::{read_frame, write_json};
use sandboxd_agent_proto::{Event, Request};
use tokio::io::DuplexStream;
use wire::unsupported;

/// Answers one request on the connection, as the real agent would.
pub(super) async fn serve(mut stream: DuplexStream, files: Files, gate: ArchiveGate) -> Option<()> {
    let request: Request = read_frame(&mut stream).await.ok()?.parse_json().ok()?;
    let (c, f) = (&mut stream, &files);
    match request {
        Request::Ping => write_json(c, &Event::Pong).await.ok(),
        Request::Exec(request) => exec::exec(c, f, request).await,
        Request::Files(request) => files::serve(c, f, request, gate).await,
        Request::Process(request) => process::serve(c, request).await,
        Request::Ports(request) => ports::serve(c, request).await,
        _ => unsupported(c).await,
    }
}
